/**
 * The RBAC mode: allowed when a rule of a role bound to the user (or one of its groups) covers the
 * request; NoOpinion otherwise, so that later modes may decide (plugin/pkg/auth/authorizer/rbac).
 */
import type { UserInfo } from '../../user.js';
import { noOpinion, noRules, type Attributes, type Authorizer, type Decision, type RuleSet } from '../authorizer.js';
import type { Grant, RbacPolicyIndex } from './policy-index.js';
import { ruleAllows } from './rule.js';

/** Kubernetes' describe of the grant an allowed request came through */
export function describeGrant({ binding, subject }: Grant): string {
  const name = binding.kind === 'RoleBinding' ? `${binding.name}/${binding.namespace}` : binding.name;
  const who = subject.kind === 'ServiceAccount'
    ? `ServiceAccount ${JSON.stringify(`${subject.name}/${subject.namespace || binding.namespace}`)}`
    : `${subject.kind} ${JSON.stringify(subject.name)}`;
  return `${binding.kind} ${JSON.stringify(name)} of ${binding.roleRef.kind} ${JSON.stringify(binding.roleRef.name)} to ${who}`;
}

export class RbacAuthorizer implements Authorizer {
  readonly name = 'RBAC';

  constructor(private readonly index: RbacPolicyIndex) {}

  authorize(a: Attributes): Decision {
    let allowedBy: Grant | undefined;
    this.index.visitGrants(a.user, a.namespace, (grant) => {
      if (grant.rules.some((rule) => ruleAllows(a, rule))) allowedBy = grant;
      return allowedBy !== undefined;
    });
    return allowedBy ? { decision: 'Allow', reason: `RBAC: allowed by ${describeGrant(allowedBy)}` } : noOpinion;
  }

  rulesFor(user: UserInfo, namespace: string): RuleSet {
    const rules = noRules();
    this.index.visitGrants(user, namespace, ({ rules: granted }) => {
      for (const { source: r } of granted) {
        if (r.resources?.length) {
          rules.resourceRules.push({ verbs: r.verbs ?? [], apiGroups: r.apiGroups, resources: r.resources, resourceNames: r.resourceNames });
        }
        if (r.nonResourceURLs?.length) rules.nonResourceRules.push({ verbs: r.verbs ?? [], nonResourceURLs: r.nonResourceURLs });
      }
      return false;
    });
    return rules;
  }
}
