/** rbac/v1 Role (namespaced) and ClusterRole (cluster-wide, optionally aggregated): sets of PolicyRules. */
import { fieldErrors } from '../../status/status-error.js';
import { allVerbs, builtinKind, defaultUnknownFieldLabelMessage, type KindDeclaration } from '../kind.js';
import { labelSelectorStructural, typeAndMeta, type KObject } from '../meta.js';
import { creationTimestampDescription, nameColumn } from '../printing.js';
import { s } from '../schema/builtin-structural.js';
import { validateObjectMeta, validateObjectMetaUpdate } from '../validation/names.js';
import { policyRuleStructural, rbacGroup, validateRules, type PolicyRule } from './policy.js';

export interface LabelSelectorSpec {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}
export interface RoleObject extends KObject { rules?: PolicyRule[] }
export interface ClusterRoleObject extends RoleObject { aggregationRule?: { clusterRoleSelectors?: LabelSelectorSpec[] } }

const aggregationRule = s.struct('AggregationRule', {
  clusterRoleSelectors: s.atomicList(labelSelectorStructural, "ClusterRoleSelectors holds a list of selectors which will be used to find ClusterRoles and create the rules. If any of the selectors match, then the ClusterRole's permissions will be added"),
}, 'AggregationRule describes how to locate ClusterRoles to aggregate into the ClusterRole', { proto: { clusterRoleSelectors: 1 } });

const rulesDescription = (scope: string) => `Rules holds all the PolicyRules for this ${scope}`;
// kubectl prints roles as NAME and CREATED AT (the timestamp, not an age)
const createdAtColumn = { name: 'Created At', type: 'date' as const, description: creationTimestampDescription, cell: (o: Readonly<KObject>) => o.metadata.creationTimestamp ?? '' };

const common = {
  group: rbacGroup, version: 'v1', shortNames: [], verbs: allVerbs, nameRule: 'pathSegment' as const,
  table: [nameColumn, createdAtColumn],
  returnDeletedObject: false, allowCreateOnUpdate: true,
  fieldLabels: {}, unknownFieldLabelMessage: defaultUnknownFieldLabelMessage,
};

export const roleKind: KindDeclaration = builtinKind({
  ...common, kind: 'Role', listKind: 'RoleList', resource: 'roles', singular: 'role', namespaced: true,
  structural: s.struct('Role', typeAndMeta({ rules: s.atomicList(policyRuleStructural, rulesDescription('Role')) }),
    'Role is a namespaced, logical grouping of PolicyRules that can be referenced as a unit by a RoleBinding.', { proto: { metadata: 1, rules: 2 }, withoutOmitEmpty: ['rules'] }),
  validate: (obj) => [...validateObjectMeta(obj.metadata, true, 'pathSegment'), ...validateRules((obj as RoleObject).rules, true)],
  validateUpdate: (obj, old) => [
    ...validateObjectMeta(obj.metadata, true, 'pathSegment'), ...validateObjectMetaUpdate(obj.metadata, old.metadata),
    ...validateRules((obj as RoleObject).rules, true),
  ],
});

function validateAggregation(role: ClusterRoleObject) {
  if (role.aggregationRule && !role.aggregationRule.clusterRoleSelectors?.length) {
    return [fieldErrors.required('aggregationRule.clusterRoleSelectors', 'at least one clusterRoleSelector required if aggregationRule is non-nil')];
  }
  return [];
}

export const clusterRoleKind: KindDeclaration = builtinKind({
  ...common, kind: 'ClusterRole', listKind: 'ClusterRoleList', resource: 'clusterroles', singular: 'clusterrole', namespaced: false,
  structural: s.struct('ClusterRole', typeAndMeta({
    rules: s.atomicList(policyRuleStructural, rulesDescription('ClusterRole')),
    aggregationRule,
  }), 'ClusterRole is a cluster level, logical grouping of PolicyRules that can be referenced as a unit by a RoleBinding or ClusterRoleBinding.', {
    proto: { metadata: 1, rules: 2, aggregationRule: 3 },
    // `json:"rules"`, no omitempty: a role without rules says `rules: []`
    withoutOmitEmpty: ['rules'],
    pointers: ['aggregationRule'],
  }),
  validate: (obj) => [
    ...validateObjectMeta(obj.metadata, false, 'pathSegment'), ...validateRules((obj as ClusterRoleObject).rules, false),
    ...validateAggregation(obj as ClusterRoleObject),
  ],
  validateUpdate: (obj, old) => [
    ...validateObjectMeta(obj.metadata, false, 'pathSegment'), ...validateObjectMetaUpdate(obj.metadata, old.metadata),
    ...validateRules((obj as ClusterRoleObject).rules, false), ...validateAggregation(obj as ClusterRoleObject),
  ],
});
