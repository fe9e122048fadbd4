/**
 * The configuration objects the server keeps (Kubernetes 1.32's bootstrap/default.go): the
 * mandatory ones, recreated and reset whatever happens to them, and the suggested ones, created
 * when missing and updated only while their autoupdate annotation allows it. Kubernetes' kube-system
 * namespace is this server's orch-system.
 */
import { authenticatedGroup, privilegedGroup, unauthenticatedGroup } from '../../auth/user.js';
import type {
  FlowSchemaObject, NonResourcePolicyRule, PriorityLevelConfigurationObject, PriorityLevelConfigurationSpec, ResourcePolicyRule, Subject,
} from './types.js';

const systemNamespace = 'orch-system';
const nodesGroup = 'system:nodes';
const serviceAccountsGroup = 'system:serviceaccounts';
const kubeControllerManager = 'system:kube-controller-manager';
const kubeScheduler = 'system:kube-scheduler';
const coordinationGroup = 'coordination.orch.io';

function priorityLevel(name: string, spec: PriorityLevelConfigurationSpec): PriorityLevelConfigurationObject {
  return { apiVersion: 'flowcontrol.apiserver.orch.io/v1', kind: 'PriorityLevelConfiguration', metadata: { name }, spec };
}

function queued(shares: number, lendablePercent: number, queues: number, handSize: number, queueLengthLimit: number): PriorityLevelConfigurationSpec {
  return {
    type: 'Limited',
    limited: { nominalConcurrencyShares: shares, limitResponse: { type: 'Queue', queuing: { queues, handSize, queueLengthLimit } }, lendablePercent },
  };
}

const groups = (...names: string[]): Subject[] => names.map((name) => ({ kind: 'Group', group: { name } }));
const users = (...names: string[]): Subject[] => names.map((name) => ({ kind: 'User', user: { name } }));
const systemServiceAccounts = (...names: string[]): Subject[] =>
  names.map((name) => ({ kind: 'ServiceAccount', serviceAccount: { namespace: systemNamespace, name } }));

const allResources: ResourcePolicyRule = { verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] };
const allNonResources: NonResourcePolicyRule = { verbs: ['*'], nonResourceURLs: ['*'] };

function resourceRule(verbs: string[], apiGroups: string[], resources: string[], namespaces: string[], clusterScope: boolean): ResourcePolicyRule {
  return { verbs, apiGroups, resources, clusterScope, namespaces };
}

function flowSchema(
  name: string, level: string, matchingPrecedence: number, distinguisher: string | undefined,
  subjects: Subject[], resourceRules: ResourcePolicyRule[], nonResourceRules: NonResourcePolicyRule[] = [],
): FlowSchemaObject {
  return {
    apiVersion: 'flowcontrol.apiserver.orch.io/v1', kind: 'FlowSchema', metadata: { name },
    spec: {
      priorityLevelConfiguration: { name: level }, matchingPrecedence,
      ...(distinguisher ? { distinguisherMethod: { type: distinguisher } } : {}),
      rules: [{
        subjects,
        ...(resourceRules.length ? { resourceRules } : {}),
        ...(nonResourceRules.length ? { nonResourceRules } : {}),
      }],
    },
  };
}

const everything = (name: string, level: string, precedence: number, distinguisher: string | undefined, subjects: Subject[]) =>
  flowSchema(name, level, precedence, distinguisher, subjects, [allResources], [allNonResources]);

export const mandatoryPriorityLevels: readonly PriorityLevelConfigurationObject[] = [
  priorityLevel('exempt', { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } }),
  priorityLevel('catch-all', { type: 'Limited', limited: { nominalConcurrencyShares: 5, limitResponse: { type: 'Reject' }, lendablePercent: 0 } }),
];

export const mandatoryFlowSchemas: readonly FlowSchemaObject[] = [
  everything('exempt', 'exempt', 1, undefined, groups(privilegedGroup)),
  everything('catch-all', 'catch-all', 10000, 'ByUser', groups(unauthenticatedGroup, authenticatedGroup)),
];

export const suggestedPriorityLevels: readonly PriorityLevelConfigurationObject[] = [
  priorityLevel('system', queued(30, 33, 64, 6, 50)),
  priorityLevel('node-high', queued(40, 25, 64, 6, 50)),
  priorityLevel('leader-election', queued(10, 0, 16, 4, 50)),
  priorityLevel('workload-high', queued(40, 50, 128, 6, 50)),
  priorityLevel('workload-low', queued(100, 90, 128, 6, 50)),
  priorityLevel('global-default', queued(20, 50, 128, 6, 50)),
];

const leaseRule = (verbs: string[]) => resourceRule(verbs, [coordinationGroup], ['leases'], ['*'], false);
const electionVerbs = ['get', 'create', 'update'];

export const suggestedFlowSchemas: readonly FlowSchemaObject[] = [
  everything('system-nodes', 'system', 500, 'ByUser', groups(nodesGroup)),
  flowSchema('system-node-high', 'node-high', 400, 'ByUser', groups(nodesGroup), [
    resourceRule(['*'], [''], ['nodes', 'nodes/status'], ['*'], true),
    leaseRule(['*']),
  ]),
  flowSchema('probes', 'exempt', 2, undefined, groups(unauthenticatedGroup, authenticatedGroup), [],
    [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/readyz', '/livez'] }]),
  flowSchema('system-leader-election', 'leader-election', 100, 'ByUser',
    [...users(kubeControllerManager, kubeScheduler), ...systemServiceAccounts('*')], [
      resourceRule(electionVerbs, [''], ['endpoints', 'configmaps'], [systemNamespace], false),
      leaseRule(electionVerbs),
    ]),
  flowSchema('endpoint-controller', 'workload-high', 150, 'ByUser',
    [...users(kubeControllerManager), ...systemServiceAccounts('endpoint-controller', 'endpointslicemirroring-controller')], [
      resourceRule(['get', 'create', 'update'], [''], ['endpoints'], ['*'], false),
    ]),
  flowSchema('workload-leader-election', 'leader-election', 200, 'ByUser', systemServiceAccounts('*'), [
    resourceRule(electionVerbs, [''], ['endpoints', 'configmaps'], ['*'], false),
    leaseRule(electionVerbs),
  ]),
  everything('kube-controller-manager', 'workload-high', 800, 'ByNamespace', users(kubeControllerManager)),
  everything('kube-scheduler', 'workload-high', 800, 'ByNamespace', users(kubeScheduler)),
  everything('kube-system-service-accounts', 'workload-high', 900, 'ByNamespace', systemServiceAccounts('*')),
  everything('service-accounts', 'workload-low', 9000, 'ByUser', groups(serviceAccountsGroup)),
  everything('global-default', 'global-default', 9900, 'ByUser', groups(unauthenticatedGroup, authenticatedGroup)),
];
