/** authorization/v1 review types' schemas, with the field numbers of Kubernetes' generated.proto. */
import { fieldSelectorRequirementStructural, labelSelectorRequirementStructural, typeAndMeta } from '../meta.js';
import { s, type BuiltinStructural } from '../schema/builtin-structural.js';

/** A struct with its field numbers and the fields Go serializes without omitempty. */
function withProto(schema: BuiltinStructural, proto: Record<string, number>, required?: string[]): BuiltinStructural {
  return required ? { ...schema, proto, required } : { ...schema, proto };
}

/** FieldSelectorAttributes and LabelSelectorAttributes (AuthorizeWithSelectors, beta and on in 1.32) */
function selectorAttributes(goName: string, requirement: BuiltinStructural, what: string): BuiltinStructural {
  return withProto(s.struct(goName, {
    rawSelector: s.string(`rawSelector is the serialization of a ${what} selector that would be included in a query parameter. Webhook implementations are encouraged to ignore rawSelector. The kube-apiserver's *SubjectAccessReview will parse the rawSelector as long as the requirements are not present.`),
    requirements: s.atomicList(requirement, `requirements is the parsed interpretation of a ${what} selector. All requirements must be met for a resource instance to match the selector. Webhook implementations should handle requirements, but how to handle them is up to the webhook. Since requirements can only limit the request, it is safe to authorize as unlimited request if the requirements are not understood.`),
  }, `${goName} indicates a ${what} limited access. Webhook authors are encouraged to * ensure rawSelector and requirements are not both set * consider the requirements field if set * not try to parse or consider the rawSelector field if set.`), { rawSelector: 1, requirements: 2 });
}

export const resourceAttributesSchema = withProto(s.struct('ResourceAttributes', {
  namespace: s.string('Namespace is the namespace of the action being requested.  Currently, there is no distinction between no namespace and all namespaces "" (empty) is defaulted for LocalSubjectAccessReviews "" (empty) is empty for cluster-scoped resources "" (empty) means "all" for namespace scoped resources from a SubjectAccessReview or SelfSubjectAccessReview'),
  verb: s.string('Verb is a kubernetes resource API verb, like: get, list, watch, create, update, delete, proxy.  "*" means all.'),
  group: s.string('Group is the API Group of the Resource.  "*" means all.'),
  version: s.string('Version is the API Version of the Resource.  "*" means all.'),
  resource: s.string('Resource is one of the existing resource types.  "*" means all.'),
  subresource: s.string('Subresource is one of the existing resource types.  "" means none.'),
  name: s.string('Name is the name of the resource being requested for a "get" or deleted for a "delete". "" (empty) means all.'),
  fieldSelector: selectorAttributes('FieldSelectorAttributes', fieldSelectorRequirementStructural, 'field'),
  labelSelector: selectorAttributes('LabelSelectorAttributes', labelSelectorRequirementStructural, 'label'),
}, 'ResourceAttributes includes the authorization attributes available for resource requests to the Authorizer interface', { pointers: ['fieldSelector', 'labelSelector'] }),
{ namespace: 1, verb: 2, group: 3, version: 4, resource: 5, subresource: 6, name: 7, fieldSelector: 8, labelSelector: 9 });

export const nonResourceAttributesSchema = withProto(s.struct('NonResourceAttributes', {
  path: s.string('Path is the URL path of the request'),
  verb: s.string('Verb is the standard HTTP verb'),
}, 'NonResourceAttributes includes the authorization attributes available for non-resource requests to the Authorizer interface'), { path: 1, verb: 2 });

const accessReviewStatusSchema = withProto(s.struct('SubjectAccessReviewStatus', {
  allowed: s.boolean('Allowed is required. True if the action would be allowed, false otherwise.'),
  denied: s.boolean('Denied is optional. True if the action would be denied, otherwise false. If both allowed is false and denied is false, then the authorizer has no opinion on whether to authorize the action. Denied may not be true if Allowed is true.'),
  reason: s.string('Reason is optional.  It indicates why a request was allowed or denied.'),
  evaluationError: s.string('EvaluationError is an indication that some error occurred during the authorization check. It is entirely possible to get an error and be able to continue determine authorization status in spite of it. For instance, RBAC can be missing a role, but enough roles are still present and bound to reason about the request.'),
}, 'SubjectAccessReviewStatus'), { allowed: 1, reason: 2, evaluationError: 3, denied: 4 }, ['allowed']);

/** both attributes are Go pointers: a review names one or the other */
const attributePointers = ['resourceAttributes', 'nonResourceAttributes'];

const attributeFields = {
  resourceAttributes: resourceAttributesSchema,
  nonResourceAttributes: nonResourceAttributesSchema,
};

const subjectAccessReviewSpecSchema = withProto(s.struct('SubjectAccessReviewSpec', {
  ...attributeFields,
  user: s.string('User is the user you\'re testing for. If you specify "User" but not "Groups", then is it interpreted as "What if User were not a member of any groups'),
  groups: s.atomicList(s.string(), 'Groups is the groups you\'re testing for.'),
  extra: s.map(s.atomicList(s.string()), 'Extra corresponds to the user.Info.GetExtra() method from the authenticator.  Since that is input to the authorizer it needs a reflection here.'),
  uid: s.string('UID information about the requesting user.'),
}, 'SubjectAccessReviewSpec is a description of the access request.  Exactly one of ResourceAuthorizationAttributes and NonResourceAuthorizationAttributes must be set', { pointers: attributePointers }),
{ resourceAttributes: 1, nonResourceAttributes: 2, user: 3, groups: 4, extra: 5, uid: 6 });

const selfSubjectAccessReviewSpecSchema = withProto(s.struct('SelfSubjectAccessReviewSpec', attributeFields,
  'SelfSubjectAccessReviewSpec is a description of the access request.  Exactly one of ResourceAuthorizationAttributes and NonResourceAuthorizationAttributes must be set', { pointers: attributePointers }),
{ resourceAttributes: 1, nonResourceAttributes: 2 });

function review(goName: string, spec: BuiltinStructural, status: BuiltinStructural, description: string): BuiltinStructural {
  return withProto(s.struct(goName, typeAndMeta({ spec, status }), description), { metadata: 1, spec: 2, status: 3 }, ['spec']);
}

export const subjectAccessReviewSchema = review('SubjectAccessReview', subjectAccessReviewSpecSchema, accessReviewStatusSchema,
  'SubjectAccessReview checks whether or not a user or group can perform an action.');
export const localSubjectAccessReviewSchema = review('LocalSubjectAccessReview', subjectAccessReviewSpecSchema, accessReviewStatusSchema,
  'LocalSubjectAccessReview checks whether or not a user or group can perform an action in a given namespace. Having a namespace scoped resource makes it much easier to grant namespace scoped policy that includes permissions checking.');
export const selfSubjectAccessReviewSchema = review('SelfSubjectAccessReview', selfSubjectAccessReviewSpecSchema, accessReviewStatusSchema,
  'SelfSubjectAccessReview checks whether or the current user can perform an action.  Not filling in a spec.namespace means "in all namespaces".  Self is a special case, because users should always be able to check whether they can perform an action');

const resourceRuleSchema = withProto(s.struct('ResourceRule', {
  verbs: s.atomicList(s.string(), 'Verb is a list of kubernetes resource API verbs, like: get, list, watch, create, update, delete, proxy.  "*" means all.'),
  apiGroups: s.atomicList(s.string(), 'APIGroups is the name of the APIGroup that contains the resources.  If multiple API groups are specified, any action requested against one of the enumerated resources in any API group will be allowed.  "*" means all.'),
  resources: s.atomicList(s.string(), 'Resources is a list of resources this rule applies to.  "*" means all in the specified apiGroups.\n "*/foo" represents the subresource \'foo\' for all resources in the specified apiGroups.'),
  resourceNames: s.atomicList(s.string(), 'ResourceNames is an optional white list of names that the rule applies to.  An empty set means that everything is allowed.  "*" means all.'),
}, 'ResourceRule is the list of actions the subject is allowed to perform on resources. The list ordering isn\'t significant, may contain duplicates, and possibly be incomplete.'),
{ verbs: 1, apiGroups: 2, resources: 3, resourceNames: 4 }, ['verbs']);

const nonResourceRuleSchema = withProto(s.struct('NonResourceRule', {
  verbs: s.atomicList(s.string(), 'Verb is a list of kubernetes non-resource API verbs, like: get, post, put, delete, patch, head, options.  "*" means all.'),
  nonResourceURLs: s.atomicList(s.string(), 'NonResourceURLs is a set of partial urls that a user should have access to.  *s are allowed, but only as the full, final step in the path.  "*" means all.'),
}, 'NonResourceRule holds information that describes a rule for the non-resource'), { verbs: 1, nonResourceURLs: 2 }, ['verbs']);

const rulesReviewStatusSchema = withProto(s.struct('SubjectRulesReviewStatus', {
  resourceRules: s.atomicList(resourceRuleSchema, 'ResourceRules is the list of actions the subject is allowed to perform on resources. The list ordering isn\'t significant, may contain duplicates, and possibly be incomplete.'),
  nonResourceRules: s.atomicList(nonResourceRuleSchema, 'NonResourceRules is the list of actions the subject is allowed to perform on non-resources. The list ordering isn\'t significant, may contain duplicates, and possibly be incomplete.'),
  incomplete: s.boolean('Incomplete is true when the rules returned by this call are incomplete. This is most commonly encountered when an authorizer, such as an external authorizer, doesn\'t support rules evaluation.'),
  evaluationError: s.string('EvaluationError can appear in combination with Rules. It indicates an error occurred during rule evaluation, such as an authorizer that doesn\'t support rule evaluation, and that ResourceRules and/or NonResourceRules may be incomplete.'),
}, 'SubjectRulesReviewStatus contains the result of a rules check. This check can be incomplete depending on the set of authorizers the server is configured with and any errors experienced during evaluation. Because authorization rules are additive, if a rule appears in a list it\'s safe to assume the subject has that permission, even if that list is incomplete.'),
{ resourceRules: 1, nonResourceRules: 2, incomplete: 3, evaluationError: 4 }, ['resourceRules', 'nonResourceRules', 'incomplete']);

const selfSubjectRulesReviewSpecSchema = withProto(s.struct('SelfSubjectRulesReviewSpec', {
  namespace: s.string('Namespace to evaluate rules for. Required.'),
}, 'SelfSubjectRulesReviewSpec defines the specification for SelfSubjectRulesReview.'), { namespace: 1 });

export const selfSubjectRulesReviewSchema = review('SelfSubjectRulesReview', selfSubjectRulesReviewSpecSchema, rulesReviewStatusSchema,
  'SelfSubjectRulesReview enumerates the set of actions the current user can perform within a namespace. The returned list of actions may be incomplete depending on the server\'s authorization mode, and any errors experienced during the evaluation. SelfSubjectRulesReview should be used by UIs to show/hide actions, or to quickly let an end user reason about their permissions. It should NOT Be used by external systems to drive authorization decisions as this raises confused deputy problems, cache lifetime/revocation problems, and correctness concerns. SubjectAccessReview, and LocalAccessReview are the correct way to defer authorization decisions to the API server.');
