/**
 * Which level a request is audited at: the policy's rules in order, the first that matches wins
 * (k8s.io/apiserver's policy checker), nothing matched is level None. Rules are compiled once
 * into sets and prefix lists, and each rule's answer is built once, so evaluating a request
 * allocates nothing.
 */
import type { UserInfo } from '../auth/user.js';
import type { GroupResources, Policy, PolicyRule } from './policy.js';
import type { Level, Stage } from './types.js';

/** What the policy looks at (RequestInfo has these fields). */
export interface PolicyAttributes {
  readonly isResourceRequest: boolean;
  readonly path: string;
  readonly verb: string;
  readonly apiGroup: string;
  readonly namespace: string;
  readonly resource: string;
  readonly subresource: string;
  readonly name: string;
}

/** The policy's answer for one request. */
export interface RequestAuditConfig {
  readonly level: Level;
  readonly omitStages: ReadonlySet<Stage>;
  readonly omitManagedFields: boolean;
}

interface ResourceMatcher {
  /** no resources listed: every resource of the group */
  readonly anyResource: boolean;
  readonly names: ReadonlySet<string> | undefined;
  /** resource → the subresources named with it ('' for the resource itself) */
  readonly exact: ReadonlyMap<string, ReadonlySet<string>>;
  /** `*`: every resource and subresource */
  readonly star: boolean;
  /** `*\/sub` */
  readonly anyResourceWithSubresource: ReadonlySet<string>;
  /** `res/*`: the resource and all its subresources */
  readonly resourceWithAnySubresource: ReadonlySet<string>;
}

interface CompiledRule {
  readonly config: RequestAuditConfig;
  readonly users: ReadonlySet<string> | undefined;
  readonly userGroups: ReadonlySet<string> | undefined;
  readonly verbs: ReadonlySet<string> | undefined;
  /** set when the rule names namespaces or resources: it matches resource requests only */
  readonly resources: { namespaces: ReadonlySet<string> | undefined; byGroup: ReadonlyMap<string, readonly ResourceMatcher[]> | undefined } | undefined;
  /** set when the rule names non-resource URLs: it matches non-resource requests only */
  readonly nonResource: { any: boolean; exact: ReadonlySet<string>; prefixes: readonly string[] } | undefined;
}

const setOf = (list: readonly string[]): ReadonlySet<string> | undefined => (list.length > 0 ? new Set(list) : undefined);

function compileGroup(gr: GroupResources): ResourceMatcher {
  const exact = new Map<string, Set<string>>();
  const anyResourceWithSubresource = new Set<string>();
  const resourceWithAnySubresource = new Set<string>();
  let star = false;
  for (const res of gr.resources) {
    if (res === '*') { star = true; continue; }
    if (res.startsWith('*/')) { anyResourceWithSubresource.add(res.slice(2)); continue; }
    if (res.endsWith('/*')) { resourceWithAnySubresource.add(res.slice(0, -2)); continue; }
    const slash = res.indexOf('/');
    const resource = slash < 0 ? res : res.slice(0, slash);
    const sub = slash < 0 ? '' : res.slice(slash + 1);
    let subs = exact.get(resource);
    if (!subs) exact.set(resource, (subs = new Set()));
    subs.add(sub);
  }
  return { anyResource: gr.resources.length === 0, names: setOf(gr.resourceNames), exact, star, anyResourceWithSubresource, resourceWithAnySubresource };
}

function compileRule(rule: PolicyRule, policy: Policy): CompiledRule {
  const config: RequestAuditConfig = {
    level: rule.level,
    omitStages: new Set([...policy.omitStages, ...rule.omitStages]),
    omitManagedFields: rule.omitManagedFields ?? policy.omitManagedFields,
  };
  let resources: CompiledRule['resources'];
  if (rule.namespaces.length > 0 || rule.resources.length > 0) {
    let byGroup: Map<string, ResourceMatcher[]> | undefined;
    if (rule.resources.length > 0) {
      byGroup = new Map();
      for (const gr of rule.resources) {
        const list = byGroup.get(gr.group) ?? [];
        list.push(compileGroup(gr));
        byGroup.set(gr.group, list);
      }
    }
    resources = { namespaces: setOf(rule.namespaces), byGroup };
  }
  let nonResource: CompiledRule['nonResource'];
  if (!resources && rule.nonResourceURLs.length > 0) {
    const exact = new Set<string>();
    const prefixes: string[] = [];
    let any = false;
    for (const url of rule.nonResourceURLs) {
      if (url === '*') any = true;
      else if (url.endsWith('*')) prefixes.push(url.replace(/\*+$/, ''));
      else exact.add(url);
    }
    nonResource = { any, exact, prefixes };
  }
  return { config, users: setOf(rule.users), userGroups: setOf(rule.userGroups), verbs: setOf(rule.verbs), resources, nonResource };
}

function resourceMatches(m: ResourceMatcher, a: PolicyAttributes): boolean {
  if (m.anyResource) return true;
  if (m.names && !m.names.has(a.name)) return false;
  if (m.star) return true;
  if (m.exact.get(a.resource)?.has(a.subresource)) return true;
  if (a.subresource !== '' && m.anyResourceWithSubresource.has(a.subresource)) return true;
  return m.resourceWithAnySubresource.has(a.resource);
}

function ruleMatches(r: CompiledRule, a: PolicyAttributes, user: UserInfo | undefined): boolean {
  if (r.users && (!user || !r.users.has(user.name))) return false;
  if (r.userGroups) {
    if (!user) return false;
    let member = false;
    for (const g of user.groups) if (r.userGroups.has(g)) { member = true; break; }
    if (!member) return false;
  }
  if (r.verbs && !r.verbs.has(a.verb)) return false;
  if (r.resources) {
    if (!a.isResourceRequest) return false;
    // cluster-scoped resources have the namespace ""
    if (r.resources.namespaces && !r.resources.namespaces.has(a.namespace)) return false;
    const byGroup = r.resources.byGroup;
    if (!byGroup) return true;
    const matchers = byGroup.get(a.apiGroup);
    if (!matchers) return false;
    for (const m of matchers) if (resourceMatches(m, a)) return true;
    return false;
  }
  if (r.nonResource) {
    if (a.isResourceRequest) return false;
    const n = r.nonResource;
    if (n.any || n.exact.has(a.path)) return true;
    for (const p of n.prefixes) if (a.path.startsWith(p)) return true;
    return false;
  }
  return true;
}

export class PolicyEvaluator {
  private readonly rules: readonly CompiledRule[];
  private readonly unmatched: RequestAuditConfig;

  constructor(policy: Policy) {
    this.rules = policy.rules.map((rule) => compileRule(rule, policy));
    this.unmatched = { level: 'None', omitStages: new Set(policy.omitStages), omitManagedFields: policy.omitManagedFields };
  }

  /** The first matching rule's level and stages; `user` is undefined when authentication failed. */
  evaluate(attributes: PolicyAttributes, user: UserInfo | undefined): RequestAuditConfig {
    for (const rule of this.rules) if (ruleMatches(rule, attributes, user)) return rule.config;
    return this.unmatched;
  }
}
