/**
 * May this user do this? One interface every authorization mode implements, and the ordered
 * union the pipeline's authorization filter asks: the first Allow or Deny decides, NoOpinion
 * passes on (k8s.io/apiserver's union authorizer). system:masters is allowed first, always.
 */
import { privilegedGroup, type UserInfo } from '../user.js';

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
}

export type Decision = { decision: 'Allow' | 'Deny' | 'NoOpinion'; reason: string };

export interface Authorizer {
  /** the mode's name (`RBAC`, `Webhook`, ...) */
  readonly name: string;
  authorize(attributes: Attributes): Decision | Promise<Decision>;
}

export const noOpinion: Decision = Object.freeze({ decision: 'NoOpinion', reason: '' });

/** kube-apiserver's privileged-group authorizer, always first in the chain. */
export const privilegedGroupAuthorizer: Authorizer = {
  name: 'privileged-group',
  authorize: (a) => (a.user.groups.includes(privilegedGroup) ? { decision: 'Allow', reason: '' } : noOpinion),
};

export class UnionAuthorizer implements Authorizer {
  readonly name = 'union';

  constructor(private readonly authorizers: readonly Authorizer[]) {}

  async authorize(attributes: Attributes): Promise<Decision> {
    const reasons: string[] = [];
    for (const authorizer of this.authorizers) {
      const d = await authorizer.authorize(attributes);
      if (d.decision !== 'NoOpinion') return d;
      if (d.reason) reasons.push(d.reason);
    }
    return { decision: 'NoOpinion', reason: reasons.join('\n') };
  }
}
