/**
 * May this user do this? One interface every authorization mode implements, and the ordered
 * union the pipeline's authorization filter asks: the first Allow or Deny decides, NoOpinion
 * passes on (k8s.io/apiserver's union authorizer). system:masters is allowed first, always.
 */
import { privilegedGroup, type UserInfo } from '../user.js';
import type { SelectorRequirement } from './selector-requirements.js';

export interface Attributes {
  user: UserInfo;
  verb: string;
  isResourceRequest: boolean;
  path: string;
  namespace: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  name: string;
  /**
   * what the request narrows itself to (a list's or watch's selectors, a review's selector
   * attributes): authorization/v1 requirements, which a webhook receives (AuthorizeWithSelectors)
   */
  fieldSelector?: readonly SelectorRequirement[];
  labelSelector?: readonly SelectorRequirement[];
}

export type Decision = {
  decision: 'Allow' | 'Deny' | 'NoOpinion';
  reason: string;
  /** a mode that could not decide (a webhook down): unless another mode allows, the request is a 500 */
  error?: string;
};

export interface ResourceRule { verbs: string[]; apiGroups?: string[]; resources?: string[]; resourceNames?: string[] }
export interface NonResourceRule { verbs: string[]; nonResourceURLs?: string[] }

/** What a user may do in a namespace, as far as a mode can tell (Kubernetes' RuleResolver). */
export interface RuleSet {
  resourceRules: ResourceRule[];
  nonResourceRules: NonResourceRule[];
  /** true when a mode cannot list what it would allow */
  incomplete: boolean;
  evaluationError?: string;
}

export interface Authorizer {
  /** the mode's name (`RBAC`, `Webhook`, ...) */
  readonly name: string;
  authorize(attributes: Attributes): Decision | Promise<Decision>;
  /** the rules the mode grants `user` in `namespace`; absent where a mode cannot enumerate them */
  rulesFor?(user: UserInfo, namespace: string): RuleSet;
  /** true where the mode reads a request's selectors (Attributes.fieldSelector / labelSelector): the webhook */
  readonly readsSelectors?: boolean;
}

export const noOpinion: Decision = Object.freeze({ decision: 'NoOpinion', reason: '' });
export const noRules = (): RuleSet => ({ resourceRules: [], nonResourceRules: [], incomplete: false });

const allowPrivileged: Decision = Object.freeze({ decision: 'Allow', reason: '' });

/** kube-apiserver's privileged-group authorizer, always first in the chain. */
export const privilegedGroupAuthorizer: Authorizer = {
  name: 'privileged-group',
  authorize: (a) => (a.user.groups.includes(privilegedGroup) ? allowPrivileged : noOpinion),
  // as in Kubernetes, it lists nothing: masters see the rules their RBAC bindings give them
  rulesFor: noRules,
};

/** Whether a mode's decision stands (Allow or Deny); a NoOpinion's reason and error are kept for the union's answer. */
function decides(d: Decision, reasons: string[], failures: string[]): boolean {
  if (d.decision !== 'NoOpinion') return true;
  if (d.reason) reasons.push(d.reason);
  if (d.error) failures.push(d.error);
  return false;
}

export class UnionAuthorizer implements Authorizer {
  readonly name = 'union';

  constructor(private readonly authorizers: readonly Authorizer[]) {}

  /** asked per request, as a member may be a chain that reloads */
  get readsSelectors(): boolean {
    for (const a of this.authorizers) if (a.readsSelectors) return true;
    return false;
  }

  /** The first decision, synchronously while the modes asked answer synchronously (RBAC from its index). */
  authorize(attributes: Attributes): Decision | Promise<Decision> {
    return this.askFrom(0, attributes, [], []);
  }

  private askFrom(first: number, attributes: Attributes, reasons: string[], failures: string[]): Decision | Promise<Decision> {
    for (let i = first; i < this.authorizers.length; i++) {
      const d = this.authorizers[i].authorize(attributes);
      if (d instanceof Promise) return d.then((later) => (decides(later, reasons, failures) ? later : this.askFrom(i + 1, attributes, reasons, failures)));
      if (decides(d, reasons, failures)) return d;
    }
    const decision: Decision = { decision: 'NoOpinion', reason: reasons.join('\n') };
    // as utilerrors.NewAggregate prints them
    if (failures.length > 0) decision.error = failures.length === 1 ? failures[0] : `[${failures.join(', ')}]`;
    return decision;
  }

  /** every mode's rules together; incomplete when a mode cannot list its own */
  rulesFor(user: UserInfo, namespace: string): RuleSet {
    const all = noRules();
    for (const authorizer of this.authorizers) {
      if (!authorizer.rulesFor) { all.incomplete = true; continue; }
      const r = authorizer.rulesFor(user, namespace);
      all.resourceRules.push(...r.resourceRules);
      all.nonResourceRules.push(...r.nonResourceRules);
      all.incomplete ||= r.incomplete;
      if (r.evaluationError) all.evaluationError = all.evaluationError ? `${all.evaluationError}, ${r.evaluationError}` : r.evaluationError;
    }
    return all;
  }
}
