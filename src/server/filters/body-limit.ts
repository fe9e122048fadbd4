/**
 * --max-request-body-bytes: a declared Content-Length over the limit is refused before the body
 * is read (413); the handler's body reader enforces the same limit on what actually arrives.
 */
import { errors } from '../../status/status-error.js';
import type { Filter } from '../filter.js';

export function bodyLimitFilter(maxBytes: number): Filter {
  const limit = maxBytes > 0 ? maxBytes : Number.POSITIVE_INFINITY;
  return (ctx, next) => {
    const declared = ctx.req.headers['content-length'];
    if (declared !== undefined && Number(declared) > limit) return Promise.reject(errors.requestEntityTooLarge(limit));
    return next(ctx);
  };
}
