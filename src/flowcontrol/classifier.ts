/**
 * Classification: the FlowSchema a request matches (lowest matchingPrecedence first, then name)
 * and its flow distinguisher. Schemas are compiled once per configuration change into sets, so
 * matching a request is a few set lookups per schema and never a storage read.
 */
import { kubernetesGroupNames } from '../api/registry/alias.js';
import type { FlowSchemaObject, PolicyRulesWithSubjects, Subject } from '../api/flowcontrol/types.js';
import type { UserInfo } from '../auth/user.js';
import type { RequestInfo } from '../http/request-info.js';
import { flatString } from '../store/flat-string.js';

/** Kubernetes' group names → the served ones, so a rule naming either matches both */
const servedGroupOf = new Map(Object.entries(kubernetesGroupNames).map(([orch, k8s]) => [k8s, orch]));
const canonicalGroup = (group: string) => servedGroupOf.get(group) ?? group;

const serviceAccountPrefix = 'system:serviceaccount:';

interface CompiledRule {
  users: Set<string>;
  groups: Set<string>;
  /** service-account namespaces whose every account matches */
  serviceAccountNamespaces: Set<string>;
  resource?: { verbs: Set<string>; groups: Set<string>; resources: Set<string>; namespaces: Set<string>; clusterScope: boolean }[];
  nonResource?: { verbs: Set<string>; exact: Set<string>; prefixes: string[]; all: boolean }[];
}

export interface CompiledSchema {
  name: string;
  uid: string;
  precedence: number;
  level: string;
  distinguisher: 'ByUser' | 'ByNamespace' | undefined;
  rules: CompiledRule[];
}

function compileSubjects(subjects: readonly Subject[], rule: CompiledRule): void {
  for (const s of subjects) {
    if (s.kind === 'User' && s.user?.name) rule.users.add(s.user.name);
    else if (s.kind === 'Group' && s.group?.name) rule.groups.add(s.group.name);
    else if (s.kind === 'ServiceAccount' && s.serviceAccount?.namespace && s.serviceAccount.name) {
      const { namespace, name } = s.serviceAccount;
      if (name === '*') rule.serviceAccountNamespaces.add(namespace);
      else rule.users.add(`${serviceAccountPrefix}${namespace}:${name}`);
    }
  }
}

function compileRule(r: PolicyRulesWithSubjects): CompiledRule {
  const rule: CompiledRule = { users: new Set(), groups: new Set(), serviceAccountNamespaces: new Set() };
  compileSubjects(r.subjects ?? [], rule);
  rule.resource = (r.resourceRules ?? []).map((rr) => ({
    verbs: new Set(rr.verbs ?? []),
    groups: new Set((rr.apiGroups ?? []).map(canonicalGroup)),
    resources: new Set(rr.resources ?? []),
    namespaces: new Set(rr.namespaces ?? []),
    clusterScope: rr.clusterScope === true,
  }));
  rule.nonResource = (r.nonResourceRules ?? []).map((nr) => {
    const urls = nr.nonResourceURLs ?? [];
    return {
      verbs: new Set(nr.verbs ?? []),
      all: urls.includes('*'),
      exact: new Set(urls.filter((u) => !u.endsWith('*'))),
      prefixes: urls.filter((u) => u.endsWith('*') && u !== '*').map((u) => u.slice(0, -1)),
    };
  });
  return rule;
}

export function compileSchema(fs: FlowSchemaObject): CompiledSchema {
  const type = fs.spec?.distinguisherMethod?.type;
  return {
    name: fs.metadata.name ?? '',
    // written in the X-*-PF-FlowSchema-UID header of every response it classifies
    uid: flatString(fs.metadata.uid ?? ''),
    precedence: fs.spec?.matchingPrecedence ?? 1000,
    level: fs.spec?.priorityLevelConfiguration?.name ?? '',
    distinguisher: type === 'ByUser' || type === 'ByNamespace' ? type : undefined,
    rules: (fs.spec?.rules ?? []).map(compileRule),
  };
}

function subjectMatches(rule: CompiledRule, user: UserInfo): boolean {
  if (rule.users.has('*') || rule.users.has(user.name) || rule.groups.has('*')) return true;
  for (const g of user.groups) if (rule.groups.has(g)) return true;
  if (rule.serviceAccountNamespaces.size > 0 && user.name.startsWith(serviceAccountPrefix)) {
    const rest = user.name.slice(serviceAccountPrefix.length);
    const colon = rest.indexOf(':');
    if (colon > 0 && rule.serviceAccountNamespaces.has(rest.slice(0, colon))) return true;
  }
  return false;
}

const hasOrAll = (set: Set<string>, value: string) => set.has('*') || set.has(value);

function requestMatches(rule: CompiledRule, info: RequestInfo): boolean {
  if (info.isResourceRequest) {
    const group = canonicalGroup(info.apiGroup);
    const resource = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
    return (rule.resource ?? []).some((r) => hasOrAll(r.verbs, info.verb) && hasOrAll(r.groups, group) && hasOrAll(r.resources, resource)
      && (info.namespace === '' ? r.clusterScope : hasOrAll(r.namespaces, info.namespace)));
  }
  return (rule.nonResource ?? []).some((r) => hasOrAll(r.verbs, info.verb)
    && (r.all || r.exact.has(info.path) || r.prefixes.some((p) => info.path.startsWith(p))));
}

/** A rule whose subjects match a user, with its schema. */
export interface UserRule { schema: CompiledSchema; rule: CompiledRule }

/**
 * The rules of `schemas` (in matching order) whose subjects match `user`: what depends on the user
 * alone, worked out once per user, so that classifying a request only matches its verb and resource.
 */
export function userRules(schemas: readonly CompiledSchema[], user: UserInfo): UserRule[] {
  const out: UserRule[] = [];
  for (const schema of schemas) for (const rule of schema.rules) if (subjectMatches(rule, user)) out.push({ schema, rule });
  return out;
}

/** The first schema one of whose user's rules matches the request. */
export function classify(rules: readonly UserRule[], info: RequestInfo): CompiledSchema | undefined {
  for (const { schema, rule } of rules) if (requestMatches(rule, info)) return schema;
  return undefined;
}

/** The flow distinguisher: the user's name, the namespace, or nothing. */
export function distinguisherOf(schema: CompiledSchema, info: RequestInfo, user: UserInfo): string {
  if (schema.distinguisher === 'ByUser') return user.name;
  if (schema.distinguisher === 'ByNamespace') return info.namespace;
  return '';
}

/** Matching order: precedence, then name. */
export function sortSchemas(schemas: CompiledSchema[]): CompiledSchema[] {
  return schemas.sort((a, b) => a.precedence - b.precedence || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
