/**
 * A PolicyRule compiled once for matching (k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac's
 * RuleAllows and its helpers). API groups compare by the spec's name, so a rule naming
 * `rbac.authorization.k8s.io` covers requests to `rbac.authorization.orch.io` and the other way round.
 */
import type { PolicyRule } from '../../../api/rbac/policy.js';
import { kubernetesGroupNames } from '../../../api/registry/alias.js';
import type { Attributes } from '../authorizer.js';

const specGroupOf = new Map(Object.entries(kubernetesGroupNames).map(([spec, k8s]) => [k8s, spec]));

/** the spec's name of a group, whichever name it was given by */
export function canonicalGroup(group: string): string {
  return specGroupOf.get(group) ?? group;
}

export interface CompiledRule {
  readonly source: PolicyRule;
  readonly verbs: ReadonlySet<string>;
  readonly apiGroups: ReadonlySet<string>;
  readonly resources: ReadonlySet<string>;
  /** undefined: any name */
  readonly resourceNames: ReadonlySet<string> | undefined;
  readonly nonResourceURLs: readonly string[];
}

export function compileRule(rule: PolicyRule): CompiledRule {
  return {
    source: rule,
    verbs: new Set(rule.verbs ?? []),
    apiGroups: new Set((rule.apiGroups ?? []).map(canonicalGroup)),
    resources: new Set(rule.resources ?? []),
    resourceNames: rule.resourceNames?.length ? new Set(rule.resourceNames) : undefined,
    nonResourceURLs: rule.nonResourceURLs ?? [],
  };
}

function nonResourceURLMatches(urls: readonly string[], path: string): boolean {
  for (const url of urls) {
    if (url === '*' || url === path) return true;
    if (url.endsWith('*') && path.startsWith(url.slice(0, -1))) return true;
  }
  return false;
}

/** RuleAllows */
export function ruleAllows(a: Attributes, rule: CompiledRule): boolean {
  if (!rule.verbs.has(a.verb) && !rule.verbs.has('*')) return false;
  if (!a.isResourceRequest) return nonResourceURLMatches(rule.nonResourceURLs, a.path);
  if (!rule.apiGroups.has('*') && !rule.apiGroups.has(canonicalGroup(a.apiGroup))) return false;
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  if (!rule.resources.has('*') && !rule.resources.has(combined) && !(a.subresource && rule.resources.has(`*/${a.subresource}`))) return false;
  return !rule.resourceNames || rule.resourceNames.has(a.name);
}
