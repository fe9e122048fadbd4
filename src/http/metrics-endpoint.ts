/**
 * GET /metrics: the registry in Prometheus' text format (version 0.0.4), authorized like any
 * non-resource URL by the pipeline before it gets here.
 */
import type { Registry } from 'prom-client';
import { errors } from '../status/status-error.js';
import type { Exchange } from './exchange.js';

export class MetricsEndpoint {
  constructor(private readonly registry: Registry) {}

  /** Serves the path if it is /metrics; false if it is not. */
  serve(ex: Exchange): boolean {
    if (ex.path !== '/metrics') return false;
    if (ex.req.method !== 'GET' && ex.req.method !== 'HEAD') throw errors.methodNotAllowed();
    // collection is synchronous for our metrics; prom-client still answers with a promise
    void this.registry.metrics().then((text) => {
      ex.res.writeHead(200, { 'content-type': this.registry.contentType, 'content-length': String(Buffer.byteLength(text)) });
      if (ex.req.method === 'HEAD') ex.res.end(); else ex.res.end(text);
    }, (err: unknown) => ex.sendError(err));
    return true;
  }
}
