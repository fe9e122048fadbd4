/**
 * The objects of flowcontrol.apiserver.orch.io/v1 (Kubernetes' flowcontrol.apiserver.k8s.io/v1)
 * as stored and served: FlowSchema and PriorityLevelConfiguration, and the condition type both
 * carry in their status.
 */
import type { KObject } from '../meta.js';
import { s, type BuiltinStructural } from '../schema/builtin-structural.js';

export const flowcontrolGroup = 'flowcontrol.apiserver.orch.io';

/**
 * A flowcontrol struct with its field numbers. `required`: the fields Go serializes without
 * omitempty, which Kubernetes' OpenAPI lists as required; `pointers`: the struct fields Go holds
 * by pointer
 */
export function struct(goName: string, fields: Record<string, BuiltinStructural>, proto: Record<string, number>, description: string, required?: string[], pointers?: string[]): BuiltinStructural {
  return s.struct(goName, fields, description, { proto, required, pointers });
}

/** Annotation whose value says whether the server may overwrite the spec (Kubernetes: apf.kubernetes.io/autoupdate-spec). */
export const autoUpdateAnnotation = 'apf.orch.io/autoupdate-spec';
export const kubernetesAutoUpdateAnnotation = 'apf.kubernetes.io/autoupdate-spec';

export interface Condition {
  type?: string;
  status?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface Subject {
  kind?: string;
  user?: { name?: string };
  group?: { name?: string };
  serviceAccount?: { namespace?: string; name?: string };
}

export interface ResourcePolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  clusterScope?: boolean;
  namespaces?: string[];
}

export interface NonResourcePolicyRule {
  verbs?: string[];
  nonResourceURLs?: string[];
}

export interface PolicyRulesWithSubjects {
  subjects?: Subject[];
  resourceRules?: ResourcePolicyRule[];
  nonResourceRules?: NonResourcePolicyRule[];
}

export interface FlowSchemaSpec {
  priorityLevelConfiguration?: { name?: string };
  matchingPrecedence?: number;
  distinguisherMethod?: { type?: string };
  rules?: PolicyRulesWithSubjects[];
}

export interface FlowSchemaObject extends KObject {
  spec?: FlowSchemaSpec;
  status?: { conditions?: Condition[] };
}

export interface QueuingConfiguration { queues?: number; handSize?: number; queueLengthLimit?: number }

export interface LimitResponse { type?: string; queuing?: QueuingConfiguration }

export interface LimitedPriorityLevelConfiguration {
  nominalConcurrencyShares?: number;
  limitResponse?: LimitResponse;
  lendablePercent?: number;
  borrowingLimitPercent?: number;
}

export interface ExemptPriorityLevelConfiguration { nominalConcurrencyShares?: number; lendablePercent?: number }

export interface PriorityLevelConfigurationSpec {
  type?: string;
  limited?: LimitedPriorityLevelConfiguration;
  exempt?: ExemptPriorityLevelConfiguration;
}

export interface PriorityLevelConfigurationObject extends KObject {
  spec?: PriorityLevelConfigurationSpec;
  status?: { conditions?: Condition[] };
}

/** FlowSchemaCondition and PriorityLevelConfigurationCondition have one shape under two names. */
export function conditionSchema(goName: string, what: string): BuiltinStructural {
  return s.struct(goName, {
    type: s.string('`type` is the type of the condition. Required.'),
    status: s.string('`status` is the status of the condition. Can be True, False, Unknown. Required.'),
    lastTransitionTime: s.time('`lastTransitionTime` is the last time the condition transitioned from one status to another.'),
    reason: s.string('`reason` is a unique, one-word, CamelCase reason for the condition\'s last transition.'),
    message: s.string('`message` is a human-readable message indicating details about last transition.'),
  }, `${goName} defines the condition of ${what}.`, { proto: { type: 1, status: 2, lastTransitionTime: 3, reason: 4, message: 5 } });
}
