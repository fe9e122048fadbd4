/**
 * Request metrics (Kubernetes' endpoints/metrics.MonitorRequest): every request past the
 * request-info filter counts once in apiserver_request_total and
 * apiserver_request_duration_seconds, with Kubernetes' verb names (LIST, WATCH, POST, PUT,
 * APPLY, ...), scope and response code; GETs and LISTs also in apiserver_response_sizes (the
 * bytes written by the time the handler returns); watches in apiserver_longrunning_requests while they run. Label values
 * of resources the server does not serve are left empty, so arbitrary URLs cannot grow the label
 * space. Recording allocates nothing per request: each label tuple's cells are bound once (bound-metrics.ts).
 */
import type { RequestInfo } from '../../http/request-info.js';
import type { ApiServerMetrics, RequestCells } from '../../metrics/apiserver-metrics.js';
import type { GaugeCell } from '../../metrics/bound-metrics.js';
import { StatusError } from '../../status/status-error.js';
import type { Filter } from '../filter.js';
import type { RequestContext } from '../request-context.js';

const resourceVerbs: Readonly<Record<string, string>> = {
  get: 'GET', list: 'LIST', watch: 'WATCH', create: 'POST', update: 'PUT', patch: 'PATCH',
  delete: 'DELETE', deletecollection: 'DELETECOLLECTION',
};
const methods: Readonly<Record<string, string>> = { GET: 'GET', HEAD: 'HEAD', POST: 'POST', PUT: 'PUT', PATCH: 'PATCH', DELETE: 'DELETE', OPTIONS: 'OPTIONS' };
const mutatingVerbs = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);
const applyPatch = 'application/apply-patch+yaml';

function verbOf(ctx: RequestContext, info: RequestInfo): string {
  if (!info.isResourceRequest) return methods[info.method] ?? 'other';
  if (info.verb === 'patch' && String(ctx.req.headers['content-type'] ?? '').startsWith(applyPatch)) return 'APPLY';
  return resourceVerbs[info.verb] ?? 'other';
}

function scopeOf(info: RequestInfo): string {
  if (!info.isResourceRequest) return '';
  if (info.name) return 'resource';
  return info.namespace ? 'namespace' : 'cluster';
}

/** dryRun=All (the only value Kubernetes accepts); anything else is "invalid", as in cleanDryRun */
function dryRunOf(query: URLSearchParams): string {
  if (!query.has('dryRun')) return '';
  const values = query.getAll('dryRun');
  return values.every((v) => v === 'All') ? 'All' : 'invalid';
}

/** One request's cells, from the request info once, and when it started. */
interface Measured {
  started: number;
  cells: RequestCells;
  mutating: boolean;
  longRunning: GaugeCell | undefined;
}

export function metricsFilter(metrics: ApiServerMetrics, served: (info: RequestInfo) => boolean): Filter {
  const finish = (m: Measured, ctx: RequestContext, code: number): void => {
    if (m.longRunning) m.longRunning.dec(); else metrics.finished(m.mutating);
    m.cells.finished(code, (performance.now() - m.started) / 1000, ctx.exchange ? ctx.exchange.bodyBytes : -1);
  };
  // not an async function: on every request its frame (a dozen locals) and the await cost more than two small reactions
  return (ctx, next) => {
    const info = ctx.info;
    const known = info.isResourceRequest && served(info);
    const verb = verbOf(ctx, info);
    const group = known ? info.apiGroup : '';
    const version = known ? info.apiVersion : '';
    const resource = known ? info.resource : '';
    const subresource = known ? info.subresource : '';
    const scope = scopeOf(info);
    const m: Measured = {
      started: performance.now(),
      cells: metrics.requestCells(verb, dryRunOf(ctx.query), group, version, resource, subresource, scope),
      mutating: mutatingVerbs.has(info.verb),
      longRunning: info.longRunning ? metrics.longRunningGauge(verb, group, version, resource, subresource, scope) : undefined,
    };
    if (m.longRunning) m.longRunning.inc(); else metrics.started(m.mutating);
    return next(ctx).then(
      () => finish(m, ctx, ctx.exchange ? ctx.exchange.res.statusCode : 101),
      (err: unknown) => { finish(m, ctx, err instanceof StatusError ? err.code : 500); throw err; },
    );
  };
}
