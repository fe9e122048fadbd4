/**
 * A filter is one step of the request pipeline: it does its one job and calls `next` to pass the
 * request on (or throws a StatusError to answer it). `chain` composes the ordered list once.
 */
import type { RequestContext } from './request-context.js';

export type Next = () => Promise<void>;
export type Filter = (ctx: RequestContext, next: Next) => Promise<void>;
export type Handler = (ctx: RequestContext) => Promise<void>;

export interface NamedFilter { name: string; filter: Filter }

/** The filters in order, ending in the handler: filters[0] runs first. */
export function chain(filters: readonly NamedFilter[], handler: Handler): Handler {
  return filters.reduceRight<Handler>((next, { filter }) => (ctx) => filter(ctx, () => next(ctx)), handler);
}
