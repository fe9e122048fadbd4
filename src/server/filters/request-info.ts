/** Resolves what the path and method mean (verb, group, version, resource, name, long-running). */
import { requestInfo } from '../../http/request-info.js';
import type { Filter } from '../filter.js';

export const requestInfoFilter: Filter = (ctx, next) => {
  ctx.info = requestInfo(ctx.upgrade ? 'GET' : ctx.req.method ?? 'GET', ctx.path, ctx.query);
  return next(ctx);
};
