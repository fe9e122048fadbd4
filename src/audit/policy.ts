/**
 * The audit policy (`--audit-policy-file`): an `audit.orch.io/v1` Policy, or the same document as
 * operators copy it from Kubernetes' documentation (`audit.k8s.io/v1`), in YAML or JSON. Loading
 * validates it the way k8s.io/apiserver's policy reader does, and a malformed policy is one
 * error naming the file, the rule's index and the field.
 */
import { readFileSync } from 'node:fs';
import { isDns1123Subdomain } from '../api/validation/names.js';
import { fromYaml } from '../codec/yaml.js';
import { fieldErrors, formatFieldError, type FieldError } from '../status/status-error.js';
import { eventApiVersion, kubernetesApiVersion, levels, stages, type Level, type Stage } from './types.js';

export interface GroupResources {
  group: string;
  /** `resource`, `resource/subresource`, `*`, `*\/subresource`, `resource/*` */
  resources: string[];
  resourceNames: string[];
}

export interface PolicyRule {
  level: Level;
  users: string[];
  userGroups: string[];
  verbs: string[];
  resources: GroupResources[];
  /** `""` selects cluster-scoped resources */
  namespaces: string[];
  /** exact paths, or prefixes ending in `*` */
  nonResourceURLs: string[];
  omitStages: Stage[];
  /** undefined: the policy's value applies */
  omitManagedFields?: boolean;
}

export interface Policy {
  rules: PolicyRule[];
  omitStages: Stage[];
  omitManagedFields: boolean;
}

const policyApiVersions = [eventApiVersion, kubernetesApiVersion];
const policyFields = new Set(['apiVersion', 'kind', 'metadata', 'rules', 'omitStages', 'omitManagedFields']);
const ruleFields = new Set(['level', 'users', 'userGroups', 'verbs', 'resources', 'namespaces', 'nonResourceURLs', 'omitStages', 'omitManagedFields']);
const groupResourceFields = new Set(['group', 'resources', 'resourceNames']);

/** Reads, parses and validates the policy; throws an Error whose message names the file and the problem. */
export function loadPolicyFile(path: string): Policy {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`loading audit policy file: failed to read file path ${JSON.stringify(path)}: ${(err as Error).message}`);
  }
  try {
    return parsePolicy(text);
  } catch (err) {
    throw new Error(`loading audit policy file: ${(err as Error).message}: from file ${path}`);
  }
}

export function parsePolicy(text: string): Policy {
  let doc: unknown;
  try {
    doc = fromYaml(text);
  } catch (err) {
    throw new Error(`failed decoding: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!isRecord(doc)) throw new Error('failed decoding: the policy must be an object');
  if (typeof doc.apiVersion !== 'string' || doc.apiVersion === '') throw new Error("failed decoding: Object 'apiVersion' is missing");
  if (!policyApiVersions.includes(doc.apiVersion)) {
    throw new Error(`unknown group version field ${doc.apiVersion} in policy: supported: ${policyApiVersions.join(', ')}`);
  }
  if (doc.kind !== 'Policy') throw new Error(`failed decoding: kind ${JSON.stringify(doc.kind ?? '')} is not Policy`);

  const errs: FieldError[] = [];
  unknownFields(doc, policyFields, '', errs);
  const policy: Policy = {
    rules: [],
    omitStages: stageList(doc.omitStages, 'omitStages', errs),
    omitManagedFields: bool(doc.omitManagedFields, 'omitManagedFields', errs) ?? false,
  };
  if (doc.rules !== undefined && doc.rules !== null && !Array.isArray(doc.rules)) {
    errs.push(fieldErrors.invalid('rules', doc.rules, 'must be a list of rules'));
  } else {
    (doc.rules as unknown[] | undefined ?? []).forEach((raw, i) => {
      const rule = parseRule(raw, `rules[${i}]`, errs);
      if (rule) policy.rules.push(rule);
    });
  }
  if (errs.length > 0) {
    const bodies = errs.map(formatFieldError);
    throw new Error(bodies.length === 1 ? bodies[0] : `[${bodies.join(', ')}]`);
  }
  if (policy.rules.length === 0) throw new Error('loaded illegal policy with 0 rules');
  return policy;
}

function parseRule(raw: unknown, path: string, errs: FieldError[]): PolicyRule | undefined {
  if (!isRecord(raw)) { errs.push(fieldErrors.invalid(path, raw, 'must be an object')); return undefined; }
  unknownFields(raw, ruleFields, `${path}.`, errs);
  const rule: PolicyRule = {
    level: level(raw.level, `${path}.level`, errs),
    users: strings(raw.users, `${path}.users`, errs),
    userGroups: strings(raw.userGroups, `${path}.userGroups`, errs),
    verbs: strings(raw.verbs, `${path}.verbs`, errs),
    resources: [],
    namespaces: strings(raw.namespaces, `${path}.namespaces`, errs),
    nonResourceURLs: strings(raw.nonResourceURLs, `${path}.nonResourceURLs`, errs),
    omitStages: stageList(raw.omitStages, `${path}.omitStages`, errs),
    omitManagedFields: bool(raw.omitManagedFields, `${path}.omitManagedFields`, errs),
  };
  if (raw.resources !== undefined && raw.resources !== null && !Array.isArray(raw.resources)) {
    errs.push(fieldErrors.invalid(`${path}.resources`, raw.resources, 'must be a list'));
  } else {
    (raw.resources as unknown[] | undefined ?? []).forEach((gr, i) => {
      const parsed = groupResources(gr, `${path}.resources[${i}]`, errs);
      if (parsed) rule.resources.push(parsed);
    });
  }
  rule.nonResourceURLs.forEach((url, i) => {
    if (url === '*') return;
    if (!url.startsWith('/')) errs.push(fieldErrors.invalid(`${path}.nonResourceURLs[${i}]`, url, "non-resource URL rules must begin with a '/' character"));
    if (url !== '' && url.slice(0, -1).includes('*')) {
      errs.push(fieldErrors.invalid(`${path}.nonResourceURLs[${i}]`, url, "non-resource URL wildcards '*' must be the final character of the rule"));
    }
  });
  if (rule.nonResourceURLs.length > 0 && (rule.resources.length > 0 || rule.namespaces.length > 0)) {
    errs.push(fieldErrors.invalid(`${path}.nonResourceURLs`, rule.nonResourceURLs, 'rules cannot apply to both regular resources and non-resource URLs'));
  }
  return rule;
}

function groupResources(raw: unknown, path: string, errs: FieldError[]): GroupResources | undefined {
  if (!isRecord(raw)) { errs.push(fieldErrors.invalid(path, raw, 'must be an object')); return undefined; }
  unknownFields(raw, groupResourceFields, `${path}.`, errs);
  const group = raw.group ?? '';
  if (typeof group !== 'string') { errs.push(fieldErrors.invalid(`${path}.group`, group, 'must be a string')); return undefined; }
  // the core group is ""; others are DNS subdomains (so `apps/v1` is refused: a group names no version)
  const problems = group === '' ? [] : isDns1123Subdomain(group);
  if (problems.length > 0) errs.push(fieldErrors.invalid(`${path}.group`, group, problems.join(',')));
  const gr = { group, resources: strings(raw.resources, `${path}.resources`, errs), resourceNames: strings(raw.resourceNames, `${path}.resourceNames`, errs) };
  if (gr.resourceNames.length > 0 && gr.resources.length === 0) {
    errs.push(fieldErrors.invalid(`${path}.resourceNames`, gr.resourceNames, 'using resourceNames requires at least one resource'));
  }
  return gr;
}

function level(raw: unknown, path: string, errs: FieldError[]): Level {
  if (raw === undefined || raw === null || raw === '') { errs.push(fieldErrors.required(path)); return 'None'; }
  if (typeof raw !== 'string' || !(levels as readonly string[]).includes(raw)) { errs.push(fieldErrors.notSupported(path, raw, levels)); return 'None'; }
  return raw as Level;
}

function stageList(raw: unknown, path: string, errs: FieldError[]): Stage[] {
  const list = strings(raw, path, errs);
  list.forEach((stage, i) => {
    if (!(stages as readonly string[]).includes(stage)) errs.push(fieldErrors.invalid(`${path}[${i}]`, stage, `allowed stages are ${stages.join(',')}`));
  });
  return list as Stage[];
}

function strings(raw: unknown, path: string, errs: FieldError[]): string[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) { errs.push(fieldErrors.invalid(path, raw, 'must be a list of strings')); return []; }
  const out: string[] = [];
  raw.forEach((v, i) => {
    if (typeof v === 'string') out.push(v);
    else errs.push(fieldErrors.invalid(`${path}[${i}]`, v, 'must be a string'));
  });
  return out;
}

function bool(raw: unknown, path: string, errs: FieldError[]): boolean | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === 'boolean') return raw;
  errs.push(fieldErrors.invalid(path, raw, 'must be true or false'));
  return undefined;
}

/**
 * A misspelt selector (`verb:` for `verbs:`) would silently widen a rule to every request, so
 * unknown fields are refused rather than ignored.
 */
function unknownFields(raw: Record<string, unknown>, known: ReadonlySet<string>, prefix: string, errs: FieldError[]): void {
  for (const key of Object.keys(raw)) {
    if (!known.has(key)) errs.push({ type: 'FieldValueNotSupported', field: `${prefix}${key}`, badValue: key, supported: [...known] });
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
