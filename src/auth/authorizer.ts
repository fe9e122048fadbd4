/**
 * May this user do this? An ordered chain of authorizers (--authorization-mode), preceded by the
 * privileged-group authorizer that always admits system:masters, as kube-apiserver builds it.
 */
import { errors, type StatusError } from '../status/status-error.js';
import { privilegedGroup, type UserInfo } from './user.js';

export interface Attributes {
  user: UserInfo;
  verb: string;
  isResourceRequest: boolean;
  path: string;
  namespace: string;
  apiGroup: string;
  resource: string;
  subresource: string;
  name: string;
}

type Decision = { decision: 'allow' | 'deny' | 'noOpinion'; reason: string };

const modes: Record<string, (a: Attributes) => Decision> = {
  AlwaysAllow: () => ({ decision: 'allow', reason: '' }),
  AlwaysDeny: () => ({ decision: 'deny', reason: 'Everything is forbidden.' }),
};

export const supportedAuthorizationModes = Object.keys(modes);

/** The text after `is forbidden: ` (forbiddenMessage in k8s.io/apiserver). */
function forbiddenMessage(a: Attributes): string {
  if (!a.isResourceRequest) return `User ${JSON.stringify(a.user.name)} cannot ${a.verb} path ${JSON.stringify(a.path)}`;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const scope = a.namespace ? `in the namespace ${JSON.stringify(a.namespace)}` : 'at the cluster scope';
  return `User ${JSON.stringify(a.user.name)} cannot ${a.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(a.apiGroup)} ${scope}`;
}

export class Authorizer {
  private readonly chain: Array<(a: Attributes) => Decision>;

  constructor(modeNames: readonly string[]) {
    this.chain = modeNames.map((m) => {
      const mode = modes[m];
      if (!mode) throw new Error(`authorization mode ${JSON.stringify(m)} is not supported`);
      return mode;
    });
  }

  /** undefined when allowed; the 403 to answer otherwise. */
  authorize(a: Attributes): StatusError | undefined {
    if (a.user.groups.includes(privilegedGroup)) return undefined;
    let reason = '';
    for (const authorize of this.chain) {
      const d = authorize(a);
      if (d.decision === 'allow') return undefined;
      if (d.decision === 'deny') { reason = d.reason; break; }
    }
    const message = reason ? `${forbiddenMessage(a)}: ${reason}` : forbiddenMessage(a);
    return errors.forbidden({ group: a.apiGroup, resource: a.isResourceRequest ? a.resource : '' }, a.name, message);
  }
}
