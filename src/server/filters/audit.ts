/**
 * Auditing of an authenticated request (k8s.io/apiserver's WithAudit), right after
 * authentication so the policy sees who asks. The policy picks the level; above None the
 * request's events go to the backends at each stage:
 * - RequestReceived before anything else runs (blocking-strict: a failure to store it is a 500);
 * - ResponseStarted for long-running requests (watches) when their headers go out, a WebSocket
 *   watch when it is upgraded;
 * - ResponseComplete when the response is written (a WebSocket watch: when its socket closes);
 * - Panic when a later step fails with something that is not a StatusError.
 * Errors from later steps are answered here, so that the event records the Status the client got.
 */
import type { AuditContext } from '../../audit/audit-context.js';
import type { Auditor } from '../../audit/auditor.js';
import type { RequestFacts } from '../../audit/event-builder.js';
import type { Stage } from '../../audit/types.js';
import type { Response } from '../../http/exchange.js';
import { StatusError } from '../../status/status-error.js';
import type { Filter } from '../filter.js';
import type { RequestContext } from '../request-context.js';
import { answerError } from './recover.js';

export function requestFacts(ctx: RequestContext): RequestFacts {
  return {
    requestURI: ctx.req.url ?? ctx.path, headers: ctx.req.headers, remoteAddress: ctx.socket?.remoteAddress,
    attributes: ctx.info, user: ctx.user, receivedAt: ctx.receivedAt * 1000,
  };
}

/** Calls `listener` with the status code when the response's headers are written (once). */
function onHeaders(res: Response, listener: (code: number) => void): void {
  const target = res as unknown as { writeHead: (code: number, ...rest: unknown[]) => unknown };
  const writeHead = target.writeHead;
  target.writeHead = function (this: unknown, code: number, ...rest: unknown[]) {
    target.writeHead = writeHead;
    listener(code);
    return writeHead.call(this, code, ...rest);
  };
}

export function auditFilter(auditor: Auditor): Filter {
  return async (ctx, next) => {
    const audit = ctx.audit as AuditContext;
    audit.begin(auditor.evaluate(ctx.info, ctx.user), requestFacts(ctx));
    if (!audit.recording) { await next(ctx); return; }

    if (!(await auditor.processStage(audit, 'RequestReceived'))) {
      auditor.metrics.requestsRejectedTotal++;
      throw new StatusError(500, 'InternalError', `Internal Server Error: ${JSON.stringify(ctx.req.url ?? ctx.path)}: failed to store audit event`);
    }

    const writes: Promise<boolean>[] = [];
    const stage = (name: Stage) => {
      if (ctx.impersonator && ctx.user) audit.impersonating(ctx.user);
      const r = auditor.processStage(audit, name);
      if (typeof r !== 'boolean') writes.push(r);
    };
    const ex = ctx.exchange;
    if (ex) ex.audit = audit;
    const longRunning = ctx.info.longRunning;
    if (ex && longRunning) onHeaders(ex.res, (code) => { audit.responseCode(code); stage('ResponseStarted'); });

    try {
      await next(ctx);
    } catch (err) {
      if (!(err instanceof StatusError)) {
        // a bug: recorded as the Panic stage; the recover filter logs it and answers 500
        audit.setResponseStatus({ code: 500, status: 'Failure', reason: 'InternalError', message: `APIServer panic'd: ${err instanceof Error ? err.message : String(err)}` });
        stage('Panic');
        await Promise.all(writes);
        throw err;
      }
      answerError(ctx, err);
      if (!ex) {
        // an upgrade refused: its answer is written to the socket, past the capture points
        audit.responseStatus(err.code, err.toStatus());
        if (longRunning) stage('ResponseStarted');
      }
    }

    if (ctx.upgrade && !ctx.upgrade.socket.destroyed && !audit.responseStatusRecorded) {
      // upgraded: the watch runs on the WebSocket until the socket closes
      audit.responseCode(101);
      stage('ResponseStarted');
      ctx.upgrade.socket.once('close', () => stage('ResponseComplete'));
      await Promise.all(writes);
      return;
    }
    if (!audit.responseStatusRecorded) {
      if (ex?.res.headersSent) audit.responseCode(ex.res.statusCode);
      else audit.setResponseStatus({ code: 200, status: 'Success', message: 'Connection closed early' });
      if (longRunning && !ex?.res.headersSent) stage('ResponseStarted');
    }
    stage('ResponseComplete');
    await Promise.all(writes);
  };
}
