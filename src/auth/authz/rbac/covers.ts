/**
 * Does one set of rules cover another (pkg/registry/rbac/validation: Covers, BreakdownRule,
 * ruleCovers)? The escalation check asks whether a user's own rules cover what they grant.
 * Each granted rule is broken into single group/resource/verb (and name or URL) atoms, each of
 * which some owned rule must cover.
 */
import type { PolicyRule } from '../../../api/rbac/policy.js';
import { canonicalGroup } from './rule.js';

function breakdown(rule: PolicyRule): PolicyRule[] {
  const atoms: PolicyRule[] = [];
  const names = rule.resourceNames?.length ? rule.resourceNames : undefined;
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of rule.verbs ?? []) {
        if (names) for (const name of names) atoms.push({ apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [name] });
        else atoms.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
      }
    }
  }
  for (const url of rule.nonResourceURLs ?? []) for (const verb of rule.verbs ?? []) atoms.push({ nonResourceURLs: [url], verbs: [verb] });
  return atoms;
}

const has = (list: readonly string[] | undefined, value: string) => (list ?? []).includes(value);

function resourceCovers(owner: readonly string[], resource: string): boolean {
  if (owner.includes('*') || owner.includes(resource)) return true;
  const slash = resource.indexOf('/');
  return slash > 0 && owner.includes(`*${resource.slice(slash)}`);
}

function urlCovers(owner: readonly string[], url: string): boolean {
  return owner.some((o) => o === '*' || o === url || (o.endsWith('*') && url.startsWith(o.slice(0, -1))));
}

/** ruleCovers for one atom */
function covers(owner: PolicyRule, atom: PolicyRule): boolean {
  const verb = (atom.verbs as string[])[0];
  if (!has(owner.verbs, '*') && !has(owner.verbs, verb)) return false;
  if (atom.nonResourceURLs) return urlCovers(owner.nonResourceURLs ?? [], atom.nonResourceURLs[0]);
  const group = canonicalGroup((atom.apiGroups as string[])[0]);
  if (!has(owner.apiGroups, '*') && !(owner.apiGroups ?? []).some((g) => canonicalGroup(g) === group)) return false;
  if (!resourceCovers(owner.resources ?? [], (atom.resources as string[])[0])) return false;
  return !owner.resourceNames?.length || (atom.resourceNames !== undefined && owner.resourceNames.includes(atom.resourceNames[0]));
}

/** the atoms of `requested` that no rule of `owned` covers */
export function uncoveredRules(owned: readonly PolicyRule[], requested: readonly PolicyRule[]): PolicyRule[] {
  return requested.flatMap(breakdown).filter((atom) => !owned.some((o) => covers(o, atom)));
}

const quoted = (list: readonly string[]) => `[${list.map((x) => JSON.stringify(x)).join(' ')}]`;

/** rbacv1helpers.CompactString */
export function compactString(rule: PolicyRule): string {
  const parts: string[] = [];
  if (rule.apiGroups?.length) parts.push(`APIGroups:${quoted(rule.apiGroups)}`);
  if (rule.resources?.length) parts.push(`Resources:${quoted(rule.resources)}`);
  if (rule.nonResourceURLs?.length) parts.push(`NonResourceURLs:${quoted(rule.nonResourceURLs)}`);
  if (rule.resourceNames?.length) parts.push(`ResourceNames:${quoted(rule.resourceNames)}`);
  if (rule.verbs?.length) parts.push(`Verbs:${quoted(rule.verbs)}`);
  return `{${parts.join(', ')}}`;
}

/** CompactRules: single-group, single-resource atoms without names merge their verbs */
export function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const merged = new Map<string, PolicyRule>();
  const others: PolicyRule[] = [];
  for (const r of rules) {
    if (r.apiGroups?.length === 1 && r.resources?.length === 1 && !r.resourceNames?.length && !r.nonResourceURLs?.length) {
      const key = `${r.apiGroups[0]}\u0000${r.resources[0]}`;
      const existing = merged.get(key);
      if (existing) existing.verbs = [...(existing.verbs ?? []), ...(r.verbs ?? [])];
      else merged.set(key, { apiGroups: r.apiGroups, resources: r.resources, verbs: [...(r.verbs ?? [])] });
    } else {
      others.push(r);
    }
  }
  return [...merged.values(), ...others];
}
