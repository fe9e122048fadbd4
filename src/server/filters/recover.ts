/**
 * The outermost filter: whatever any later step throws becomes the request's answer. A
 * StatusError is answered as is; anything else is a bug, answered with a 500 Status and logged
 * with its stack, and the server keeps serving (k8s.io/apiserver's WithPanicRecovery).
 */
import type { Logger } from 'pino';
import { errors, StatusError } from '../../status/status-error.js';
import type { Filter } from '../filter.js';
import type { RequestContext } from '../request-context.js';
import { answerUpgrade } from '../upgrade-answer.js';

export function recoverFilter(log: Logger): Filter {
  const recover = (ctx: RequestContext, err: unknown): void => {
    if (!(err instanceof StatusError)) log.error({ err, path: ctx.path, verb: ctx.req.method }, 'request handler failed');
    answerError(ctx, err instanceof StatusError ? err : errors.internal(err));
  };
  // not an async function: on every request its frame and the await cost more than this one reaction
  return (ctx, next) => next(ctx).then(undefined, (err: unknown) => recover(ctx, err));
}

export function answerError(ctx: RequestContext, err: StatusError): void {
  const ex = ctx.exchange;
  if (ex) {
    if (!ex.sent) ex.sendError(err);
    else if (!ex.res.writableEnded) ex.res.end();
    return;
  }
  if (ctx.upgrade) answerUpgrade(ctx.upgrade, err);
}
