/**
 * A filter is one step of the request pipeline: it does its one job and calls `next` to pass the
 * request on (or rejects with a StatusError to answer it). `chain` composes the ordered list once.
 *
 * `next` is the rest of the chain, composed once, so passing a request on allocates nothing. A
 * filter with nothing to do after the rest is a plain function returning `next(ctx)`: an async
 * one would wrap the same outcome in one more promise and microtask per request. Such a filter
 * refuses with a rejected promise; should it (or the handler) throw instead, the chain turns the
 * throw into a rejection, so `next(ctx)` never throws and no filter guards against it.
 */
import type { RequestContext } from './request-context.js';

export type Handler = (ctx: RequestContext) => Promise<void>;
export type Filter = (ctx: RequestContext, next: Handler) => Promise<void>;

export interface NamedFilter { name: string; filter: Filter }

/** `run`, whose synchronous throw comes back as a rejected promise (a try costs nothing until it catches). */
function rejecting(run: Handler): Handler {
  return (ctx) => {
    try {
      return run(ctx);
    } catch (err) {
      return Promise.reject(err);
    }
  };
}

/** The filters in order, ending in the handler: filters[0] runs first. */
export function chain(filters: readonly NamedFilter[], handler: Handler): Handler {
  return filters.reduceRight<Handler>((next, { filter }) => rejecting((ctx) => filter(ctx, next)), rejecting(handler));
}
