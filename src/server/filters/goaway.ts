/**
 * --goaway-chance (Kubernetes' WithProbabilisticGoaway): with that probability per HTTP/2
 * request, the connection is told GOAWAY once this request's response is handed off, so the
 * client opens a new connection — through the load balancer, likely to another replica. Streams
 * already open on the connection (watches included) run on; only new ones go elsewhere.
 */
import { constants, type Http2ServerResponse } from 'node:http2';
import type { Filter } from '../filter.js';

export function goawayFilter(chance: number, random: () => number = Math.random): Filter {
  return (ctx, next) => {
    const res = ctx.exchange?.res;
    if (res && 'stream' in res && random() < chance) {
      const session = (res as Http2ServerResponse).stream.session;
      // GOAWAY names the last stream the server processed: this one and any before it complete
      ctx.whenHandedOff(() => { if (session && !session.closed && !session.destroyed) session.goaway(constants.NGHTTP2_NO_ERROR); });
    }
    return next(ctx);
  };
}
