/** The ABAC mode: the first policy matching the request allows it (pkg/auth/authorizer/abac). */
import type { UserInfo } from '../../user.js';
import { noRules, type Attributes, type Authorizer, type Decision, type RuleSet } from '../authorizer.js';
import type { AbacPolicy } from './policy-file.js';

const readOnlyVerbs = new Set(['get', 'list', 'watch']);

/** subjectMatches: a named user or group must match; a policy naming neither matches nobody */
function subjectMatches(p: AbacPolicy, user: UserInfo): boolean {
  let matched = false;
  if (p.user) {
    matched = p.user === '*' || p.user === user.name;
    if (!matched) return false;
  }
  if (p.group) {
    matched = p.group === '*' || user.groups.includes(p.group);
    if (!matched) return false;
  }
  return matched;
}

function pathMatches(pattern: string, path: string): boolean {
  return pattern === '*' || pattern === path || (pattern.endsWith('*') && path.startsWith(pattern.replace(/\*+$/, '')));
}

function matches(p: AbacPolicy, a: Attributes): boolean {
  if (!subjectMatches(p, a.user)) return false;
  if (p.readonly && !readOnlyVerbs.has(a.verb)) return false;
  if (!a.isResourceRequest) return pathMatches(p.nonResourcePath, a.path);
  return (p.namespace === '*' || p.namespace === a.namespace) && (p.resource === '*' || p.resource === a.resource)
    && (p.apiGroup === '*' || p.apiGroup === a.apiGroup);
}

export class AbacAuthorizer implements Authorizer {
  readonly name = 'ABAC';

  constructor(private readonly policies: readonly AbacPolicy[]) {}

  authorize(a: Attributes): Decision {
    return this.policies.some((p) => matches(p, a)) ? { decision: 'Allow', reason: '' } : { decision: 'NoOpinion', reason: 'No policy matched.' };
  }

  /** PolicyList.RulesFor */
  rulesFor(user: UserInfo, namespace: string): RuleSet {
    const rules = noRules();
    for (const p of this.policies) {
      if (!subjectMatches(p, user)) continue;
      const verbs = p.readonly ? ['get', 'list', 'watch'] : ['*'];
      if (p.resource && (p.namespace === '*' || p.namespace === namespace)) {
        rules.resourceRules.push({ verbs, apiGroups: [p.apiGroup], resources: [p.resource] });
      }
      if (p.nonResourcePath) rules.nonResourceRules.push({ verbs, nonResourceURLs: [p.nonResourcePath] });
    }
    return rules;
  }
}
