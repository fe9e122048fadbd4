/**
 * The parts the four RBAC kinds share: PolicyRule, Subject, RoleRef and their validation, in
 * Kubernetes' order and wording (pkg/apis/rbac/validation). Either group name of the RBAC API is
 * accepted where Kubernetes names its own (roleRef.apiGroup, subjects[].apiGroup).
 */
import { fieldErrors, type FieldError } from '../../status/status-error.js';
import { s } from '../schema/builtin-structural.js';
import { isValidPathSegmentName } from '../validation/names.js';

export const rbacGroup = 'rbac.authorization.orch.io';
export const rbacKubernetesGroup = 'rbac.authorization.k8s.io';
const rbacGroups = [rbacKubernetesGroup, rbacGroup];

export interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}
export interface Subject { kind: string; apiGroup?: string; name: string; namespace?: string }
export interface RoleRef { apiGroup: string; kind: string; name: string }

export const policyRuleStructural = s.struct('PolicyRule', {
  verbs: s.atomicList(s.string(), "Verbs is a list of Verbs that apply to ALL the ResourceKinds contained in this rule. '*' represents all verbs."),
  apiGroups: s.atomicList(s.string(), 'APIGroups is the name of the APIGroup that contains the resources.  If multiple API groups are specified, any action requested against one of the enumerated resources in any API group will be allowed. "" represents the core API group and "*" represents all API groups.'),
  resources: s.atomicList(s.string(), "Resources is a list of resources this rule applies to. '*' represents all resources."),
  resourceNames: s.atomicList(s.string(), 'ResourceNames is an optional white list of names that the rule applies to.  An empty set means that everything is allowed.'),
  nonResourceURLs: s.atomicList(s.string(), 'NonResourceURLs is a set of partial urls that a user should have access to.  *s are allowed, but only as the full, final step in the path Since non-resource URLs are not namespaced, this field is only applicable for ClusterRoles referenced from a ClusterRoleBinding. Rules can either apply to API resources (such as "pods" or "secrets") or non-resource URL paths (such as "/api"),  but not both.'),
}, 'PolicyRule holds information that describes a policy rule, but does not contain information about who the rule applies to or which namespace the rule applies to.', {
  proto: { verbs: 1, apiGroups: 2, resources: 3, resourceNames: 4, nonResourceURLs: 5 },
  required: ['verbs'],
});

export const subjectStructural = s.struct('Subject', {
  kind: s.string('Kind of object being referenced. Values defined by this API group are "User", "Group", and "ServiceAccount". If the Authorizer does not recognized the kind value, the Authorizer should report an error.'),
  apiGroup: s.string('APIGroup holds the API group of the referenced subject. Defaults to "" for ServiceAccount subjects. Defaults to "rbac.authorization.k8s.io" for User and Group subjects.'),
  name: s.string('Name of the object being referenced.'),
  namespace: s.string('Namespace of the referenced object.  If the object kind is non-namespace, such as "User" or "Group", and this value is not empty the Authorizer should report an error.'),
}, 'Subject contains a reference to the object or user identities a role binding applies to.  This can either hold a direct API object reference, or a value for non-objects such as user and group names.', {
  proto: { kind: 1, apiGroup: 2, name: 3, namespace: 4 },
  required: ['kind', 'name'],
});

export const roleRefStructural = s.struct('RoleRef', {
  apiGroup: s.string('APIGroup is the group for the resource being referenced'),
  kind: s.string('Kind is the type of resource being referenced'),
  name: s.string('Name is the name of resource being referenced'),
}, 'RoleRef contains information that points to the role being used', {
  proto: { apiGroup: 1, kind: 2, name: 3 },
  required: ['apiGroup', 'kind', 'name'],
});

/** ValidatePolicyRule */
export function validatePolicyRule(rule: PolicyRule, namespaced: boolean, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!rule.verbs?.length) errs.push(fieldErrors.required(`${path}.verbs`, 'verbs must contain at least one value'));
  if (rule.nonResourceURLs?.length) {
    if (namespaced) errs.push(fieldErrors.invalid(`${path}.nonResourceURLs`, rule.nonResourceURLs, 'namespaced rules cannot apply to non-resource URLs'));
    if (rule.apiGroups?.length || rule.resources?.length) {
      errs.push(fieldErrors.invalid(`${path}.nonResourceURLs`, rule.nonResourceURLs, 'rules cannot apply to both regular resources and non-resource URLs'));
    }
    return errs;
  }
  if (!rule.apiGroups?.length) errs.push(fieldErrors.required(`${path}.apiGroups`, 'resource rules must supply at least one api group'));
  if (!rule.resources?.length) errs.push(fieldErrors.required(`${path}.resources`, 'resource rules must supply at least one resource'));
  return errs;
}

export function validateRules(rules: readonly PolicyRule[] | undefined, namespaced: boolean): FieldError[] {
  return (rules ?? []).flatMap((rule, i) => validatePolicyRule(rule, namespaced, `rules[${i}]`));
}

/** ValidateRoleBindingSubject */
function validateSubject(subject: Subject, namespaced: boolean, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!subject.name) errs.push(fieldErrors.required(`${path}.name`, ''));
  switch (subject.kind) {
    case 'ServiceAccount':
      if (subject.name) for (const msg of isValidPathSegmentName(subject.name)) errs.push(fieldErrors.invalid(`${path}.name`, subject.name, msg));
      if (subject.apiGroup) errs.push(fieldErrors.notSupported(`${path}.apiGroup`, subject.apiGroup, ['']));
      if (!namespaced && !subject.namespace) errs.push(fieldErrors.required(`${path}.namespace`, ''));
      break;
    case 'User':
    case 'Group':
      if (!rbacGroups.includes(subject.apiGroup ?? '')) errs.push(fieldErrors.notSupported(`${path}.apiGroup`, subject.apiGroup ?? '', [rbacKubernetesGroup]));
      break;
    default:
      errs.push(fieldErrors.notSupported(`${path}.kind`, subject.kind, ['ServiceAccount', 'User', 'Group']));
  }
  return errs;
}

/** ValidateRoleBinding / ValidateClusterRoleBinding past the metadata */
export function validateBindingBody(roleRef: RoleRef | undefined, subjects: readonly Subject[] | undefined, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const ref = roleRef ?? { apiGroup: '', kind: '', name: '' };
  if (!rbacGroups.includes(ref.apiGroup)) errs.push(fieldErrors.notSupported('roleRef.apiGroup', ref.apiGroup, [rbacKubernetesGroup]));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(ref.kind)) errs.push(fieldErrors.notSupported('roleRef.kind', ref.kind, kinds));
  if (!ref.name) errs.push(fieldErrors.required('roleRef.name', ''));
  else for (const msg of isValidPathSegmentName(ref.name)) errs.push(fieldErrors.invalid('roleRef.name', ref.name, msg));
  (subjects ?? []).forEach((subject, i) => errs.push(...validateSubject(subject, namespaced, `subjects[${i}]`)));
  return errs;
}

/** SetDefaults_RoleBinding / SetDefaults_Subject: the group Kubernetes' clients expect back. */
export function defaultBinding(roleRef: RoleRef | undefined, subjects: Subject[] | undefined): void {
  if (roleRef && !roleRef.apiGroup) roleRef.apiGroup = rbacKubernetesGroup;
  for (const subject of subjects ?? []) {
    if (!subject.apiGroup && (subject.kind === 'User' || subject.kind === 'Group')) subject.apiGroup = rbacKubernetesGroup;
  }
}
