/**
 * Holds a flow-control seat for the request until its response is handed to the socket. A
 * long-running request (a watch) holds its seats through its start only — planning, catch-up
 * and registration, which run on the front thread before the next turn of the event loop — as
 * Kubernetes releases a watch's seats once it is initialized.
 */
import { StatusError } from '../../status/status-error.js';
import type { FlowController, FlowRequest, Seat } from '../../flowcontrol/flow-control.js';
import type { Filter, Handler } from '../filter.js';
import type { RequestContext } from '../request-context.js';

function proceed(seat: Seat | StatusError, ctx: RequestContext, next: Handler): Promise<void> {
  if (seat instanceof StatusError) return Promise.reject(seat);
  const release = seat.release;
  if (ctx.info.longRunning) setImmediate(release);
  // an upgrade has no response to wait for: its seat is held while it is handled
  else if (!ctx.exchange) return next(ctx).finally(release);
  // released once the body is on its way (or the client left), not when the handler returns
  else ctx.whenHandedOff(release);
  return next(ctx);
}

export function flowControlFilter(controller: FlowController): Filter {
  return (ctx, next) => {
    // the context is the request the controller reads: authentication has named its user
    const seat = controller.admit(ctx as FlowRequest);
    return seat instanceof Promise ? seat.then((s) => proceed(s, ctx, next)) : proceed(seat, ctx, next);
  };
}
