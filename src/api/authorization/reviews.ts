/**
 * authorization/v1 SubjectAccessReview, LocalSubjectAccessReview, SelfSubjectAccessReview and
 * SelfSubjectRulesReview: create-only kinds answered by asking the server's own authorizer
 * (pkg/registry/authorization in Kubernetes), never stored.
 */
import type { Attributes, UnionAuthorizer } from '../../auth/authz/authorizer.js';
import { reviewFieldSelector, reviewLabelSelector } from '../../auth/authz/selector-requirements.js';
import type { UserInfo } from '../../auth/user.js';
import { errors, fieldErrors, type FieldError } from '../../status/status-error.js';
import { builtinKind, type KindDeclaration, type VirtualCreateContext } from '../kind.js';
import type { KObject } from '../meta.js';
import type { BuiltinStructural } from '../schema/builtin-structural.js';
import { serviceKey } from '../services.js';
import { isQualifiedName, isValidLabelValue } from '../validation/names.js';
import { unstoredKindBehaviour } from '../authentication/group.js';
import {
  localSubjectAccessReviewSchema, selfSubjectAccessReviewSchema, selfSubjectRulesReviewSchema, subjectAccessReviewSchema,
} from './schemas.js';

export const authorizationGroup = 'authorization.orch.io';

/** The server's own authorizer chain, which the reviews ask. */
export const accessReviewer = serviceKey<UnionAuthorizer>('authorizer');

interface SelectorRequirement { key?: string; operator?: string; values?: string[] }
interface SelectorAttributes { rawSelector?: string; requirements?: SelectorRequirement[] }
interface ResourceAttributes {
  namespace?: string; verb?: string; group?: string; version?: string; resource?: string; subresource?: string; name?: string;
  fieldSelector?: SelectorAttributes; labelSelector?: SelectorAttributes;
}
interface NonResourceAttributes { path?: string; verb?: string }
interface AccessReviewSpec {
  resourceAttributes?: ResourceAttributes;
  nonResourceAttributes?: NonResourceAttributes;
  user?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
  uid?: string;
}
interface ReviewObject extends KObject { spec?: AccessReviewSpec & { namespace?: string }; status?: unknown }

/** ValidateSubjectAccessReviewSpec / ValidateSelfSubjectAccessReviewSpec */
function validateAttributes(spec: AccessReviewSpec): FieldError[] {
  const errs: FieldError[] = [];
  if (spec.resourceAttributes && spec.nonResourceAttributes) {
    errs.push(fieldErrors.invalid('spec.nonResourceAttributes', spec.nonResourceAttributes, 'cannot be specified in combination with resourceAttributes'));
  }
  if (!spec.resourceAttributes && !spec.nonResourceAttributes) {
    // Kubernetes passes the nil pointer, which its field errors print as the string "null"
    errs.push(fieldErrors.invalid('spec.resourceAttributes', 'null', 'exactly one of nonResourceAttributes or resourceAttributes must be specified'));
  }
  const r = spec.resourceAttributes;
  if (r?.fieldSelector) errs.push(...validateSelector(r.fieldSelector, 'spec.resourceAttributes.fieldSelector', fieldRequirementErrors));
  if (r?.labelSelector) errs.push(...validateSelector(r.labelSelector, 'spec.resourceAttributes.labelSelector', labelRequirementErrors));
  return errs;
}

/**
 * validateFieldSelectorAttributes / validateLabelSelectorAttributes (AuthorizeWithSelectors, on in
 * 1.32): requirements or a raw selector, not both; operators newer clients know are let through.
 */
function validateSelector(selector: SelectorAttributes, path: string, requirementErrors: (r: SelectorRequirement, path: string) => FieldError[]): FieldError[] {
  const errs: FieldError[] = [];
  const requirements = selector.requirements ?? [];
  if (selector.rawSelector && requirements.length > 0) {
    errs.push(fieldErrors.invalid(`${path}.rawSelector`, selector.rawSelector, 'may not specified at the same time as requirements'));
  }
  if (!selector.rawSelector && requirements.length === 0) {
    errs.push(fieldErrors.required(`${path}.requirements`, `when ${path} is specified, requirements or rawSelector is required`));
  }
  requirements.forEach((r, i) => errs.push(...requirementErrors(r, `${path}.requirements[${i}]`)));
  return errs;
}

/** The values rule both requirement kinds share: In/NotIn need values, Exists/DoesNotExist have none. */
function requirementValueErrors(r: SelectorRequirement, path: string): FieldError[] {
  const values = r.values ?? [];
  if ((r.operator === 'In' || r.operator === 'NotIn') && values.length === 0) {
    return [fieldErrors.required(`${path}.values`, "must be specified when `operator` is 'In' or 'NotIn'")];
  }
  if ((r.operator === 'Exists' || r.operator === 'DoesNotExist') && values.length > 0) {
    return [fieldErrors.forbidden(`${path}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")];
  }
  return [];
}

/** ValidateFieldSelectorRequirement */
function fieldRequirementErrors(r: SelectorRequirement, path: string): FieldError[] {
  const errs: FieldError[] = r.key ? [] : [fieldErrors.required(`${path}.key`, 'must be specified')];
  return [...errs, ...requirementValueErrors(r, path)];
}

/** ValidateLabelSelectorRequirement: the key a qualified name, each value a label value */
function labelRequirementErrors(r: SelectorRequirement, path: string): FieldError[] {
  const errs = requirementValueErrors(r, path);
  const key = r.key ?? '';
  for (const msg of isQualifiedName(key)) errs.push(fieldErrors.invalid(`${path}.key`, key, msg));
  (r.values ?? []).forEach((value, i) => {
    for (const msg of isValidLabelValue(value)) errs.push(fieldErrors.invalid(`${path}.values[${i}]`, value, msg));
  });
  return errs;
}

function validateSubject(spec: AccessReviewSpec): FieldError[] {
  return spec.user || spec.groups?.length ? [] : [fieldErrors.invalid('spec.user', spec.user ?? '', 'at least one of user or group must be specified')];
}

/** A review's question as authorizer attributes (ResourceAttributesFrom), and what of its selectors could not be read. */
interface Question { attributes: Attributes; unread: string[] }

function questionOf(user: UserInfo, spec: AccessReviewSpec): Question {
  const r = spec.resourceAttributes;
  if (!r) {
    const n = spec.nonResourceAttributes ?? {};
    return {
      attributes: { user, verb: n.verb ?? '', isResourceRequest: false, path: n.path ?? '', namespace: '', apiGroup: '', apiVersion: '', resource: '', subresource: '', name: '' },
      unread: [],
    };
  }
  const attributes: Attributes = {
    user, verb: r.verb ?? '', isResourceRequest: true, path: '', namespace: r.namespace ?? '', apiGroup: r.group ?? '',
    // matchAllVersionIfEmpty: a review naming no version asks about every version
    apiVersion: r.version || '*', resource: r.resource ?? '', subresource: r.subresource ?? '', name: r.name ?? '',
  };
  const unread: string[] = [];
  const fields = reviewFieldSelector(r.fieldSelector);
  const labels = reviewLabelSelector(r.labelSelector);
  if (fields.requirements) attributes.fieldSelector = fields.requirements;
  if (labels.requirements) attributes.labelSelector = labels.requirements;
  if (fields.ignored) unread.push(`spec.resourceAttributes.fieldSelector ${fields.ignored} due to parse error`);
  if (labels.ignored) unread.push(`spec.resourceAttributes.labelSelector ${labels.ignored} due to parse error`);
  return { attributes, unread };
}

function specUser(spec: AccessReviewSpec): UserInfo {
  return { name: spec.user ?? '', uid: spec.uid, groups: spec.groups ?? [], extra: spec.extra };
}

function requestUser(ctx: VirtualCreateContext): UserInfo {
  if (!ctx.user) throw errors.internal(new Error('no user on the request'));
  return ctx.user;
}

function reviewKind(kind: string, structural: BuiltinStructural, namespaced: boolean, validate: (spec: AccessReviewSpec) => FieldError[],
  answer: (review: ReviewObject, ctx: VirtualCreateContext) => Promise<unknown> | unknown): KindDeclaration {
  return builtinKind({
    group: authorizationGroup, version: 'v1', kind, listKind: `${kind}List`, resource: `${kind.toLowerCase()}s`, singular: kind.toLowerCase(),
    shortNames: [], namespaced, verbs: ['create'], structural,
    ...unstoredKindBehaviour,
    validate: (obj) => validate((obj as ReviewObject).spec ?? {}),
    virtualCreate: async (body, ctx) => {
      const review = body as ReviewObject;
      review.status = await answer(review, ctx);
      return review;
    },
  });
}

async function accessStatus(authorizer: UnionAuthorizer, { attributes, unread }: Question): Promise<Record<string, unknown>> {
  const d = await authorizer.authorize(attributes);
  const status: Record<string, unknown> = { allowed: d.decision === 'Allow' };
  if (d.decision === 'Deny') status.denied = true;
  if (d.reason) status.reason = d.reason;
  // BuildEvaluationError: the authorizer's error, then the selectors the review could not read
  const evaluationErrors = d.error ? [d.error, ...unread] : unread;
  if (evaluationErrors.length > 0) status.evaluationError = evaluationErrors.join('; ');
  return status;
}

const authorizerOf = (ctx: VirtualCreateContext): UnionAuthorizer => ctx.services.get(accessReviewer);

/** The four review kinds, answered by the server's authorizer. */
export const accessReviewKinds: readonly KindDeclaration[] = [
  reviewKind('SubjectAccessReview', subjectAccessReviewSchema, false, (spec) => [...validateAttributes(spec), ...validateSubject(spec)],
    (review, ctx) => accessStatus(authorizerOf(ctx), questionOf(specUser(review.spec ?? {}), review.spec ?? {}))),
  reviewKind('LocalSubjectAccessReview', localSubjectAccessReviewSchema, true, (spec) => [
    ...validateAttributes(spec), ...validateSubject(spec),
    ...(spec.nonResourceAttributes ? [fieldErrors.invalid('spec.nonResourceAttributes', spec.nonResourceAttributes, 'disallowed on this kind of request')] : []),
  ], (review, ctx) => {
    const spec = review.spec ?? {};
    const namespace = ctx.namespace ?? '';
    const attributes = spec.resourceAttributes ?? {};
    if (attributes.namespace && attributes.namespace !== namespace) throw errors.badRequest(`spec.resourceAttributes.namespace must match namespace: ${namespace}`);
    return accessStatus(authorizerOf(ctx), questionOf(specUser(spec), { ...spec, resourceAttributes: { ...attributes, namespace } }));
  }),
  reviewKind('SelfSubjectAccessReview', selfSubjectAccessReviewSchema, false, validateAttributes,
    (review, ctx) => accessStatus(authorizerOf(ctx), questionOf(requestUser(ctx), review.spec ?? {}))),
  reviewKind('SelfSubjectRulesReview', selfSubjectRulesReviewSchema, false, () => [], (review, ctx) => {
    const namespace = review.spec?.namespace;
    if (!namespace) throw errors.badRequest('no namespace on request');
    const { evaluationError, ...rules } = authorizerOf(ctx).rulesFor(requestUser(ctx), namespace);
    return evaluationError ? { ...rules, evaluationError } : rules;
  }),
];
