/**
 * flowcontrol.apiserver.orch.io/v1 FlowSchema (served as flowcontrol.apiserver.k8s.io/v1 too):
 * which requests belong to which priority level, and how they split into flows. Cluster-scoped,
 * with a status subresource the server writes (the Dangling condition).
 */
import { allVerbs, builtinKind, defaultUnknownFieldLabelMessage, type KindDeclaration } from '../kind.js';
import { typeAndMeta, type KObject } from '../meta.js';
import { ageColumn, nameColumn } from '../printing.js';
import { s, type BuiltinStructural } from '../schema/builtin-structural.js';
import { validateObjectMeta } from '../validation/names.js';
import { conditionSchema, flowcontrolGroup, struct, type FlowSchemaObject } from './types.js';
import { serverOwnedStatus } from './server-status.js';
import { validateConditions, validateFlowSchemaSpec } from './validation.js';

/** SetDefaults_FlowSchemaSpec */
export const defaultMatchingPrecedence = 1000;

function nameOnly(goName: string, description: string, nameDescription: string): BuiltinStructural {
  return struct(goName, { name: s.string(nameDescription) }, { name: 1 }, description, ['name']);
}

const subject = struct('Subject', {
  kind: s.string('`kind` indicates which one of the other fields is non-empty. Required'),
  user: nameOnly('UserSubject', 'UserSubject holds detailed information for user-kind subject.', '`name` is the username that matches, or "*" to match all usernames. Required.'),
  group: nameOnly('GroupSubject', 'GroupSubject holds detailed information for group-kind subject.', 'name is the user group that matches, or "*" to match all user groups.'),
  serviceAccount: struct('ServiceAccountSubject', {
    namespace: s.string('`namespace` is the namespace of matching ServiceAccount objects. Required.'),
    name: s.string('`name` is the name of matching ServiceAccount objects, or "*" to match regardless of name. Required.'),
  }, { namespace: 1, name: 2 }, 'ServiceAccountSubject holds detailed information for service-account-kind subject.', ['namespace', 'name']),
}, { kind: 1, user: 2, group: 3, serviceAccount: 4 }, 'Subject matches the originator of a request, as identified by the request authentication system.', ['kind'], ['user', 'group', 'serviceAccount']);

const resourceRule = struct('ResourcePolicyRule', {
  verbs: s.setList(s.string(), '`verbs` is a list of matching verbs and may not be empty. "*" matches all verbs and, if present, must be the only entry.'),
  apiGroups: s.setList(s.string(), '`apiGroups` is a list of matching API groups and may not be empty. "*" matches all API groups and, if present, must be the only entry.'),
  resources: s.setList(s.string(), '`resources` is a list of matching resources (i.e., lowercase and plural) with, if desired, subresource.'),
  clusterScope: s.boolean('`clusterScope` indicates whether to match requests that do not specify a namespace.'),
  namespaces: s.setList(s.string(), '`namespaces` is a list of target namespaces that restricts matches. A request that specifies a target namespace matches only if either (a) this list contains that target namespace or (b) this list contains "*".'),
}, { verbs: 1, apiGroups: 2, resources: 3, clusterScope: 4, namespaces: 5 },
'ResourcePolicyRule is a predicate that matches some resource requests, testing the request\'s verb and the target resource.', ['verbs', 'apiGroups', 'resources']);

const nonResourceRule = struct('NonResourcePolicyRule', {
  verbs: s.setList(s.string(), '`verbs` is a list of matching verbs and may not be empty. "*" matches all verbs. If it is present, it must be the only entry. Required.'),
  nonResourceURLs: s.setList(s.string(), '`nonResourceURLs` is a set of url prefixes that a user should have access to and may not be empty. "*" matches all non-resource urls. if it is present, it must be the only entry. Required.'),
}, { verbs: 1, nonResourceURLs: 6 }, 'NonResourcePolicyRule is a predicate that matches non-resource requests according to their verb and the target non-resource URL.', ['verbs', 'nonResourceURLs']);

const policyRulesWithSubjects = struct('PolicyRulesWithSubjects', {
  subjects: s.atomicList(subject, 'subjects is the list of normal user, serviceaccount, or group that this rule cares about. There must be at least one member in this slice.'),
  resourceRules: s.atomicList(resourceRule, '`resourceRules` is a slice of ResourcePolicyRules that identify matching requests according to their verb and the target resource.'),
  nonResourceRules: s.atomicList(nonResourceRule, '`nonResourceRules` is a list of NonResourcePolicyRules that identify matching requests according to their verb and the target non-resource URL.'),
}, { subjects: 1, resourceRules: 2, nonResourceRules: 3 }, 'PolicyRulesWithSubjects prescribes a test that applies to a request to an apiserver.', ['subjects']);

const priorityLevelDescription = '`name` is the name of the priority level configuration being referenced Required.';

const matchingPrecedenceDescription = '`matchingPrecedence` is used to choose among the FlowSchemas that match a given request. Each MatchingPrecedence value must be ranged in [1,10000]. Note that if the precedence is not specified, it will be set to 1000 as default.';
const distinguisherMethodDescription = 'FlowDistinguisherMethod specifies the method of a flow distinguisher.';

const flowSchemaSpec = struct('FlowSchemaSpec', {
  priorityLevelConfiguration: nameOnly('PriorityLevelConfigurationReference', 'PriorityLevelConfigurationReference contains information that points to the "request-priority" being used.', priorityLevelDescription),
  matchingPrecedence: s.int32(matchingPrecedenceDescription),
  distinguisherMethod: struct('FlowDistinguisherMethod', {
    type: s.string('`type` is the type of flow distinguisher method The supported types are "ByUser" and "ByNamespace". Required.'),
  }, { type: 1 }, distinguisherMethodDescription, ['type']),
  rules: s.atomicList(policyRulesWithSubjects, '`rules` describes which requests will match this flow schema.'),
}, { priorityLevelConfiguration: 1, matchingPrecedence: 2, distinguisherMethod: 3, rules: 4 }, 'FlowSchemaSpec describes how the FlowSchema\'s specification looks like.', ['priorityLevelConfiguration'], ['distinguisherMethod']);

const flowSchemaStatus = s.struct('FlowSchemaStatus', {
  conditions: s.mapList(conditionSchema('FlowSchemaCondition', 'a FlowSchema'), ['type'], '`conditions` is a list of the current states of FlowSchema.', { strategy: 'merge', mergeKey: 'type' }),
}, 'FlowSchemaStatus represents the current state of a FlowSchema.', { proto: { conditions: 1 } });

/** The v1 defaults (SetDefaults_FlowSchemaSpec), applied as a decoded object is. */
function setDefaults(fs: FlowSchemaObject): void {
  if (!fs.spec) fs.spec = {};
  if (!fs.spec.matchingPrecedence) fs.spec.matchingPrecedence = defaultMatchingPrecedence;
}

function validate(obj: KObject): ReturnType<KindDeclaration['validate']> {
  const fs = obj as FlowSchemaObject;
  return [
    ...validateObjectMeta(fs.metadata, false, 'dns1123Subdomain'),
    ...validateFlowSchemaSpec(fs.metadata.name ?? '', fs.spec ?? {}),
    ...validateConditions(fs.status?.conditions),
  ];
}

export const flowSchemaKind: KindDeclaration = builtinKind({
  group: flowcontrolGroup, version: 'v1', kind: 'FlowSchema', listKind: 'FlowSchemaList',
  resource: 'flowschemas', singular: 'flowschema', shortNames: [], namespaced: false,
  verbs: allVerbs,
  structural: s.struct('FlowSchema', typeAndMeta({ spec: flowSchemaSpec, status: flowSchemaStatus }),
    'FlowSchema defines the schema of a group of flows. Note that a flow is made up of a set of inbound API requests with similar attributes and is identified by a pair of strings: the name of the FlowSchema and a "flow distinguisher".', { proto: { metadata: 1, spec: 2, status: 3 } }),
  nameRule: 'dns1123Subdomain',
  // kubectl's printFlowSchema: MissingPL is the Dangling condition's status, "?" while unknown
  table: [
    nameColumn,
    { name: 'PriorityLevel', type: 'string', description: priorityLevelDescription, cell: (o) => (o as FlowSchemaObject).spec?.priorityLevelConfiguration?.name ?? '' },
    { name: 'MatchingPrecedence', type: 'string', description: matchingPrecedenceDescription, cell: (o) => (o as FlowSchemaObject).spec?.matchingPrecedence ?? 0 },
    { name: 'DistinguisherMethod', type: 'string', description: distinguisherMethodDescription, cell: (o) => (o as FlowSchemaObject).spec?.distinguisherMethod?.type ?? '*' },
    ageColumn,
    {
      name: 'MissingPL', type: 'string', description: 'references a broken or non-existent PriorityLevelConfiguration',
      cell: (o) => (o as FlowSchemaObject).status?.conditions?.find((c) => c.type === 'Dangling')?.status ?? '?',
    },
  ],
  returnDeletedObject: false,
  tracksGeneration: true,
  allowCreateOnUpdate: false,
  fieldLabels: {},
  unknownFieldLabelMessage: defaultUnknownFieldLabelMessage,
  setDefaults: (obj) => setDefaults(obj as FlowSchemaObject),
  ...serverOwnedStatus(),
  validate,
  validateUpdate: (obj) => validate(obj),
});
