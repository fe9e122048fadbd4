/**
 * Holds a flow-control seat for the request until its response is handed to the socket. A
 * long-running request (a watch) holds its seats through its start only — planning, catch-up
 * and registration, which run on the front thread before the next turn of the event loop — as
 * Kubernetes releases a watch's seats once it is initialized.
 */
import { StatusError } from '../../status/status-error.js';
import type { FlowController } from '../../flowcontrol/flow-control.js';
import type { UserInfo } from '../../auth/user.js';
import type { Filter } from '../filter.js';

export function flowControlFilter(controller: FlowController): Filter {
  return async (ctx, next) => {
    const seat = await controller.admit({
      info: ctx.info, user: ctx.user as UserInfo, query: ctx.query,
      setResponseHeader: (name, value) => ctx.setResponseHeader(name, value),
      cancelled: ctx.handedOff,
    });
    if (seat instanceof StatusError) throw seat;
    if (ctx.info.longRunning) setImmediate(() => seat.release());
    try {
      await next();
    } finally {
      // released once the body is on its way, not when the handler returns
      if (!ctx.info.longRunning) void ctx.handedOff.then(() => seat.release());
    }
  };
}
