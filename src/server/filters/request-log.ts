/**
 * One debug line per request once it is answered (kube-apiserver logs requests at -v=3 and up).
 * Nothing is built for the line unless debug logging is on.
 */
import type { Logger } from 'pino';
import type { Filter, Handler } from '../filter.js';
import type { RequestContext } from '../request-context.js';

async function logged(log: Logger, ctx: RequestContext, next: Handler): Promise<void> {
  const started = process.hrtime.bigint();
  try {
    await next(ctx);
  } finally {
    const latencyMs = Number(process.hrtime.bigint() - started) / 1e6;
    log.debug({
      verb: ctx.info?.verb ?? ctx.req.method?.toLowerCase(), uri: ctx.req.url,
      status: ctx.exchange ? ctx.exchange.res.statusCode : ctx.upgrade?.socket.destroyed === false ? 101 : undefined,
      latencyMs: Math.round(latencyMs * 1000) / 1000, user: ctx.user?.name, userAgent: ctx.req.headers['user-agent'],
      protocol: ctx.upgrade ? 'websocket' : ctx.req.httpVersion, auditID: ctx.audit?.auditID,
    }, 'request');
  }
}

export function requestLogFilter(log: Logger): Filter {
  return (ctx, next) => (log.isLevelEnabled('debug') ? logged(log, ctx, next) : next(ctx));
}
