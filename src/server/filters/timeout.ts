/**
 * --request-timeout, shortened by a `timeout` query parameter: a request that is not long-running
 * is answered 504 when its work takes longer. The parameter is read before any work starts, so a
 * malformed one is a plain 400; work that outlives its deadline finishes unobserved.
 */
import { parseDuration } from '../../config/duration.js';
import { errors } from '../../status/status-error.js';
import type { Filter } from '../filter.js';

export function timeoutFilter(requestTimeoutMs: number): Filter {
  return async (ctx, next) => {
    let timeoutMs = requestTimeoutMs;
    const requested = ctx.query.get('timeout');
    if (requested !== null && requested !== '') {
      let parsed: number;
      try { parsed = parseDuration(requested); } catch (err) {
        throw errors.badRequest(`invalid timeout specified in the request URL: ${(err as Error).message}`);
      }
      timeoutMs = Math.min(timeoutMs, Math.max(parsed, 0));
    }
    if (ctx.info.longRunning || timeoutMs <= 0) { await next(); return; }
    const work = next();
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'expired'>((resolve) => { timer = setTimeout(() => resolve('expired'), timeoutMs); });
    try {
      const outcome = await Promise.race([work, expired]);
      if (outcome === 'expired') {
        work.catch(() => { /* answered already: the late outcome has nobody to go to */ });
        throw errors.timeout('Timeout: request did not complete within requested timeout - context deadline exceeded');
      }
    } finally {
      clearTimeout(timer);
    }
  };
}
