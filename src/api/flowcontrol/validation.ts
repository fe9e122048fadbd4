/**
 * Kubernetes' pkg/apis/flowcontrol/validation for the v1 API, in its order and wording: FlowSchema
 * and PriorityLevelConfiguration specs and their status conditions.
 */
import { fieldErrors, type FieldError } from '../../status/status-error.js';
import { isDns1123Label, isDns1123Subdomain } from '../validation/names.js';
import type {
  Condition, ExemptPriorityLevelConfiguration, FlowSchemaSpec, LimitedPriorityLevelConfiguration, LimitResponse,
  NonResourcePolicyRule, PolicyRulesWithSubjects, PriorityLevelConfigurationSpec, QueuingConfiguration, ResourcePolicyRule, Subject,
} from './types.js';

const supportedDistinguisherMethods = ['ByNamespace', 'ByUser'];
const supportedVerbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'proxy', 'update', 'watch'];
const supportedSubjectKinds = ['Group', 'ServiceAccount', 'User'];
const supportedPriorityLevelEnablement = ['Exempt', 'Limited'];
const supportedLimitResponseTypes = ['Queue', 'Reject'];
const maxMatchingPrecedence = 10000;
const maxQueues = 10 * 1000 * 1000;
/** shufflesharding.MaxHashBits: a hand is dealt from a 64-bit hash, keeping 4 bits spare */
export const maxHashBits = 60;
const nsErrIntro = "each member of this list must be '*' or a DNS-1123 label; ";

/** shufflesharding.RequiredEntropyBits */
export function requiredEntropyBits(deckSize: number, handSize: number): number {
  return Math.ceil(Math.log2(deckSize) * handSize);
}

const hasWildcard = (list: readonly string[]) => list.includes('*');

function validateVerbs(verbs: readonly string[], path: string): FieldError[] {
  if (verbs.length === 0) return [fieldErrors.required(`${path}.verbs`, 'verbs must contain at least one value')];
  if (hasWildcard(verbs)) {
    return verbs.length > 1 ? [fieldErrors.invalid(`${path}.verbs`, verbs, "if '*' is present, must not specify other verbs")] : [];
  }
  return verbs.every((v) => supportedVerbs.includes(v)) ? [] : [fieldErrors.notSupported(`${path}.verbs`, verbs, supportedVerbs)];
}

function validateSubject(subject: Subject, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const forbidUser = () => { if (subject.user) errs.push(fieldErrors.forbidden(`${path}.user`, "user is forbidden when subject kind is not 'User'")); };
  const forbidGroup = () => { if (subject.group) errs.push(fieldErrors.forbidden(`${path}.group`, "group is forbidden when subject kind is not 'Group'")); };
  const forbidServiceAccount = () => {
    if (subject.serviceAccount) errs.push(fieldErrors.forbidden(`${path}.serviceAccount`, "serviceAccount is forbidden when subject kind is not 'ServiceAccount'"));
  };
  switch (subject.kind) {
    case 'ServiceAccount': {
      const sa = subject.serviceAccount;
      if (!sa) {
        errs.push(fieldErrors.required(`${path}.serviceAccount`, "serviceAccount is required when subject kind is 'ServiceAccount'"));
      } else {
        if (!sa.name) errs.push(fieldErrors.required(`${path}.serviceAccount.name`));
        else if (sa.name !== '*') for (const msg of isDns1123Subdomain(sa.name)) errs.push(fieldErrors.invalid(`${path}.serviceAccount.name`, sa.name, msg));
        if (!sa.namespace) errs.push(fieldErrors.required(`${path}.serviceAccount.namespace`, 'must specify namespace for service account'));
        else for (const msg of isDns1123Label(sa.namespace)) errs.push(fieldErrors.invalid(`${path}.serviceAccount.namespace`, sa.namespace, msg));
      }
      forbidUser();
      forbidGroup();
      break;
    }
    case 'User':
      if (!subject.user) errs.push(fieldErrors.required(`${path}.user`, "user is required when subject kind is 'User'"));
      else if (!subject.user.name) errs.push(fieldErrors.required(`${path}.user.name`));
      forbidServiceAccount();
      forbidGroup();
      break;
    case 'Group':
      if (!subject.group) errs.push(fieldErrors.required(`${path}.group`, "group is required when subject kind is 'Group'"));
      else if (!subject.group.name) errs.push(fieldErrors.required(`${path}.group.name`));
      forbidServiceAccount();
      forbidUser();
      break;
    default:
      errs.push(fieldErrors.notSupported(`${path}.kind`, subject.kind ?? '', supportedSubjectKinds));
  }
  return errs;
}

function validateResourceRule(rule: ResourcePolicyRule, path: string): FieldError[] {
  const errs = validateVerbs(rule.verbs ?? [], path);
  const groups = rule.apiGroups ?? [];
  if (groups.length === 0) errs.push(fieldErrors.required(`${path}.apiGroups`, 'resource rules must supply at least one api group'));
  else if (groups.length > 1 && hasWildcard(groups)) errs.push(fieldErrors.invalid(`${path}.apiGroups`, groups, "if '*' is present, must not specify other api groups"));
  const resources = rule.resources ?? [];
  if (resources.length === 0) errs.push(fieldErrors.required(`${path}.resources`, 'resource rules must supply at least one resource'));
  else if (resources.length > 1 && hasWildcard(resources)) errs.push(fieldErrors.invalid(`${path}.resources`, resources, "if '*' is present, must not specify other resources"));
  const namespaces = rule.namespaces ?? [];
  if (namespaces.length === 0 && !rule.clusterScope) {
    errs.push(fieldErrors.required(`${path}.namespaces`, 'resource rules that are not cluster scoped must supply at least one namespace'));
  } else if (hasWildcard(namespaces)) {
    if (namespaces.length > 1) errs.push(fieldErrors.invalid(`${path}.namespaces`, namespaces, "if '*' is present, must not specify other namespaces"));
  } else {
    namespaces.forEach((ns, i) => {
      for (const msg of isDns1123Label(ns)) errs.push(fieldErrors.invalid(`${path}.namespaces[${i}]`, ns, nsErrIntro + msg));
    });
  }
  return errs;
}

/** ValidateNonResourceURLPath: a leading slash, no spaces or double slashes, `*` only as a `/*` suffix. */
function nonResourceUrlError(url: string, path: string): FieldError | undefined {
  if (url.length === 0) return fieldErrors.invalid(path, url, 'must not be empty');
  if (url === '/') return undefined;
  if (!url.startsWith('/')) return fieldErrors.invalid(path, url, 'must start with slash');
  if (url.includes(' ')) return fieldErrors.invalid(path, url, 'must not contain white-space');
  if (url.includes('//')) return fieldErrors.invalid(path, url, 'must not contain double slash');
  const wildcards = url.split('*').length - 1;
  if (wildcards > 1 || (wildcards === 1 && !url.endsWith('/*'))) return fieldErrors.invalid(path, url, 'wildcard can only do suffix matching');
  return undefined;
}

function validateNonResourceRule(rule: NonResourcePolicyRule, path: string): FieldError[] {
  const errs = validateVerbs(rule.verbs ?? [], path);
  const urls = rule.nonResourceURLs ?? [];
  if (urls.length === 0) {
    errs.push(fieldErrors.required(`${path}.nonResourceURLs`, 'nonResourceURLs must contain at least one value'));
  } else if (hasWildcard(urls)) {
    if (urls.length > 1) errs.push(fieldErrors.invalid(`${path}.nonResourceURLs`, urls, "if '*' is present, must not specify other non-resource URLs"));
  } else {
    urls.forEach((url, i) => {
      const err = nonResourceUrlError(url, `${path}.nonResourceURLs[${i}]`);
      if (err) errs.push(err);
    });
  }
  return errs;
}

function validateRule(rule: PolicyRulesWithSubjects, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const subjects = rule.subjects ?? [];
  if (subjects.length === 0) errs.push(fieldErrors.required(`${path}.subjects`, 'subjects must contain at least one value'));
  subjects.forEach((subject, i) => errs.push(...validateSubject(subject, `${path}.subjects[${i}]`)));
  const resourceRules = rule.resourceRules ?? [];
  const nonResourceRules = rule.nonResourceRules ?? [];
  if (resourceRules.length === 0 && nonResourceRules.length === 0) {
    errs.push(fieldErrors.required(path, 'at least one of resourceRules and nonResourceRules has to be non-empty'));
  }
  resourceRules.forEach((r, i) => errs.push(...validateResourceRule(r, `${path}.resourceRules[${i}]`)));
  nonResourceRules.forEach((r, i) => errs.push(...validateNonResourceRule(r, `${path}.nonResourceRules[${i}]`)));
  return errs;
}

export function validateFlowSchemaSpec(name: string, spec: FlowSchemaSpec): FieldError[] {
  const errs: FieldError[] = [];
  const precedence = spec.matchingPrecedence ?? 0;
  if (precedence <= 0) errs.push(fieldErrors.invalid('spec.matchingPrecedence', precedence, 'must be a positive value'));
  if (precedence > maxMatchingPrecedence) errs.push(fieldErrors.invalid('spec.matchingPrecedence', precedence, `must not be greater than ${maxMatchingPrecedence}`));
  if (precedence === 1 && name !== 'exempt') {
    errs.push(fieldErrors.invalid('spec.matchingPrecedence', precedence, "only the schema named 'exempt' may have matchingPrecedence 1"));
  }
  if (spec.distinguisherMethod && !supportedDistinguisherMethods.includes(spec.distinguisherMethod.type ?? '')) {
    errs.push(fieldErrors.notSupported('spec.distinguisherMethod.type', spec.distinguisherMethod, supportedDistinguisherMethods));
  }
  const level = spec.priorityLevelConfiguration?.name ?? '';
  if (level) for (const msg of isDns1123Subdomain(level)) errs.push(fieldErrors.invalid('spec.priorityLevelConfiguration.name', level, msg));
  else errs.push(fieldErrors.required('spec.priorityLevelConfiguration.name', 'must reference a priority level'));
  (spec.rules ?? []).forEach((rule, i) => errs.push(...validateRule(rule, `spec.rules[${i}]`)));
  return errs;
}

/** ValidateFlowSchemaStatus / ValidatePriorityLevelConfigurationStatus: condition types present and unique. */
export function validateConditions(conditions: readonly Condition[] | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  (conditions ?? []).forEach((c, i) => {
    const type = c.type ?? '';
    if (seen.has(type)) errs.push(fieldErrors.duplicate(`status.conditions[${i}].type`, type));
    seen.add(type);
    if (!type) errs.push(fieldErrors.required(`status.conditions[${i}].type`, 'must not be empty'));
  });
  return errs;
}

function validateQueuing(q: QueuingConfiguration, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const queueLengthLimit = q.queueLengthLimit ?? 0;
  const queues = q.queues ?? 0;
  const handSize = q.handSize ?? 0;
  if (queueLengthLimit <= 0) errs.push(fieldErrors.invalid(`${path}.queueLengthLimit`, queueLengthLimit, 'must be positive'));
  if (queues <= 0) errs.push(fieldErrors.invalid(`${path}.queues`, queues, 'must be positive'));
  else if (queues > maxQueues) errs.push(fieldErrors.invalid(`${path}.queues`, queues, `must not be greater than ${maxQueues}`));
  if (handSize <= 0) {
    errs.push(fieldErrors.invalid(`${path}.handSize`, handSize, 'must be positive'));
  } else if (handSize > queues) {
    errs.push(fieldErrors.invalid(`${path}.handSize`, handSize, `should not be greater than queues (${queues})`));
  } else if (requiredEntropyBits(queues, handSize) > maxHashBits) {
    errs.push(fieldErrors.invalid(`${path}.handSize`, handSize,
      `required entropy bits of deckSize ${queues} and handSize ${handSize} should not be greater than ${maxHashBits}`));
  }
  return errs;
}

function validateLimitResponse(lr: LimitResponse, path: string): FieldError[] {
  switch (lr.type) {
    case 'Reject':
      return lr.queuing ? [fieldErrors.forbidden(`${path}.queuing`, 'must be nil if limited.limitResponse.type is not Limited')] : [];
    case 'Queue':
      return lr.queuing ? validateQueuing(lr.queuing, `${path}.queuing`)
        : [fieldErrors.required(`${path}.queuing`, 'must not be empty if limited.limitResponse.type is Limited')];
    default:
      return [fieldErrors.notSupported(`${path}.type`, lr.type ?? '', supportedLimitResponseTypes)];
  }
}

function validatePercents(c: { lendablePercent?: number; borrowingLimitPercent?: number }, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (c.lendablePercent !== undefined && !(c.lendablePercent >= 0 && c.lendablePercent <= 100)) {
    errs.push(fieldErrors.invalid(`${path}.lendablePercent`, c.lendablePercent, 'must be between 0 and 100, inclusive'));
  }
  if (c.borrowingLimitPercent !== undefined && c.borrowingLimitPercent < 0) {
    errs.push(fieldErrors.invalid(`${path}.borrowingLimitPercent`, c.borrowingLimitPercent, 'if specified, must be a non-negative integer'));
  }
  return errs;
}

/** v1 allows zero shares (a "jail" level): only negative values are refused. */
function validateLimited(l: LimitedPriorityLevelConfiguration, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const shares = l.nominalConcurrencyShares ?? 0;
  if (shares < 0) errs.push(fieldErrors.invalid(`${path}.nominalConcurrencyShares`, shares, 'must be a non-negative integer'));
  errs.push(...validateLimitResponse(l.limitResponse ?? {}, `${path}.limitResponse`));
  errs.push(...validatePercents(l, path));
  return errs;
}

function validateExempt(e: ExemptPriorityLevelConfiguration, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (e.nominalConcurrencyShares !== undefined && e.nominalConcurrencyShares < 0) {
    errs.push(fieldErrors.invalid(`${path}.nominalConcurrencyShares`, e.nominalConcurrencyShares, 'must be a non-negative integer'));
  }
  errs.push(...validatePercents({ lendablePercent: e.lendablePercent }, path));
  return errs;
}

export function validatePriorityLevelSpec(name: string, spec: PriorityLevelConfigurationSpec): FieldError[] {
  const errs: FieldError[] = [];
  if ((name === 'exempt') !== (spec.type === 'Exempt')) {
    errs.push(fieldErrors.invalid('spec.type', spec.type ?? '', "type must be 'Exempt' if and only if name is 'exempt'"));
  }
  switch (spec.type) {
    case 'Exempt':
      if (spec.limited) errs.push(fieldErrors.forbidden('spec.limited', 'must be nil if the type is not Limited'));
      if (spec.exempt) errs.push(...validateExempt(spec.exempt, 'spec.exempt'));
      break;
    case 'Limited':
      if (spec.exempt) errs.push(fieldErrors.forbidden('spec.exempt', 'must be nil if the type is Limited'));
      if (!spec.limited) errs.push(fieldErrors.required('spec.limited', 'must not be empty when type is Limited'));
      else errs.push(...validateLimited(spec.limited, 'spec.limited'));
      break;
    default:
      errs.push(fieldErrors.notSupported('spec.type', spec.type ?? '', supportedPriorityLevelEnablement));
  }
  return errs;
}
