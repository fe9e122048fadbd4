/**
 * --max-requests-inflight / --max-mutating-requests-inflight (0: no limit), the limiter
 * kube-apiserver uses when priority and fairness is off: long-running requests (watches) and
 * system:masters are exempt; over the limit is 429 with Retry-After.
 */
import { privilegedGroup } from '../auth/user.js';
import { errors } from '../status/status-error.js';
import type { FlowController, Seat } from './flow-control.js';

const mutatingVerbs = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);
const exempt: Seat = { release: () => undefined };

export class MaxInflightLimiter implements FlowController {
  private readonly inflight = { readOnly: 0, mutating: 0 };

  constructor(private readonly limits: { readOnly: number; mutating: number }) {}

  admit({ info, user }: Parameters<FlowController['admit']>[0]): Seat | ReturnType<typeof errors.tooManyRequests> {
    if (info.longRunning || user.groups.includes(privilegedGroup)) return exempt;
    const which = mutatingVerbs.has(info.verb) ? 'mutating' : 'readOnly';
    const limit = this.limits[which];
    if (limit > 0 && this.inflight[which] >= limit) return errors.tooManyRequests('Too many requests, please try again later.', 1);
    this.inflight[which]++;
    let released = false;
    return { release: () => { if (!released) { released = true; this.inflight[which]--; } } };
  }
}
