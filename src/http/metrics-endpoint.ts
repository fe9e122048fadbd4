/**
 * GET /metrics: the metrics of this thread and of the workers, aggregated, in Prometheus' text
 * format (version 0.0.4); authorized like any non-resource URL by the pipeline before it gets here.
 */
import { errors } from '../status/status-error.js';
import type { Exchange } from './exchange.js';

export interface MetricsSource {
  exposition(): Promise<{ contentType: string; text: string }>;
}

export class MetricsEndpoint {
  constructor(private readonly source: MetricsSource) {}

  /** Serves the path if it is /metrics; false if it is not. */
  serve(ex: Exchange): boolean {
    if (ex.path !== '/metrics') return false;
    if (ex.req.method !== 'GET' && ex.req.method !== 'HEAD') throw errors.methodNotAllowed();
    void this.source.exposition().then(({ contentType, text }) => {
      ex.writeHead(200, { 'content-type': contentType, 'content-length': String(Buffer.byteLength(text)) });
      if (ex.req.method === 'HEAD') ex.res.end(); else ex.res.end(text);
    }, (err: unknown) => ex.sendError(err));
    return true;
  }
}
