/**
 * --request-timeout, shortened by a `timeout` query parameter: a request that is not long-running
 * is answered 504 when its work takes longer. The parameter is read before any work starts, so a
 * malformed one is a plain 400; work that outlives its deadline finishes unobserved.
 */
import { parseDuration } from '../../config/duration.js';
import { errors } from '../../status/status-error.js';
import type { Filter } from '../filter.js';

const expiredMessage = 'Timeout: request did not complete within requested timeout - context deadline exceeded';

function ignore(): void { /* answered already: the late outcome has nobody to go to */ }

export function timeoutFilter(requestTimeoutMs: number): Filter {
  return (ctx, next) => {
    let timeoutMs = requestTimeoutMs;
    const requested = ctx.query.get('timeout');
    if (requested !== null && requested !== '') {
      let parsed: number;
      try { parsed = parseDuration(requested); } catch (err) {
        return Promise.reject(errors.badRequest(`invalid timeout specified in the request URL: ${(err as Error).message}`));
      }
      timeoutMs = Math.min(timeoutMs, Math.max(parsed, 0));
    }
    if (ctx.info.longRunning || timeoutMs <= 0) return next(ctx);
    const work = next(ctx);
    // one promise settled by whichever comes first (cheaper than racing the work against a second promise)
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => { work.catch(ignore); reject(errors.timeout(expiredMessage)); }, timeoutMs);
      work.then(() => { clearTimeout(timer); resolve(); }, (err: unknown) => { clearTimeout(timer); reject(err); });
    });
  };
}
