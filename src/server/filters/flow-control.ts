/** Holds a flow-control seat for the request until its response is handed to the socket. */
import { StatusError } from '../../status/status-error.js';
import type { FlowController } from '../../flowcontrol/flow-control.js';
import type { UserInfo } from '../../auth/user.js';
import type { Filter } from '../filter.js';

export function flowControlFilter(controller: FlowController): Filter {
  return async (ctx, next) => {
    const seat = await controller.admit({ info: ctx.info, user: ctx.user as UserInfo });
    if (seat instanceof StatusError) throw seat;
    try {
      await next();
    } finally {
      // released once the body is on its way, not when the handler returns
      void ctx.handedOff.then(() => seat.release());
    }
  };
}
