/**
 * Paths that name no resource: discovery documents, /version, health. Discovery is computed once
 * from the declarations (it changes only when the set of kinds does).
 */
import {
  aggregatedDiscovery, aggregatedDiscoveryMediaType, apiGroup, apiGroupList, apiResourceList, apiVersions, discoveryEtag,
} from '../api/discovery.js';
import type { KindRegistry } from '../api/registry.js';
import { errors } from '../status/status-error.js';
import { header, type Exchange } from './exchange.js';
import type { HealthEndpoint } from './health.js';
import { parseMediaRanges } from './negotiation.js';

export const serverVersion = {
  major: '1', minor: '32', gitVersion: 'v1.32.0', gitCommit: 'orch-apiserver', gitTreeState: 'clean',
  buildDate: '2026-11-01T00:00:00Z', goVersion: `node${process.versions.node}`, compiler: 'node', platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
};

interface Aggregated { body: string; etag: string }

export class NonResourceHandler {
  private readonly aggregated: Record<'api' | 'apis', Aggregated>;

  constructor(private readonly kinds: KindRegistry, private readonly health: readonly HealthEndpoint[], private readonly serverAddress: () => string) {
    const build = (root: 'api' | 'apis'): Aggregated => {
      const doc = aggregatedDiscovery(kinds, root);
      return { body: `${JSON.stringify(doc)}\n`, etag: discoveryEtag(doc) };
    };
    this.aggregated = { api: build('api'), apis: build('apis') };
  }

  /** Serves the path if it is one of ours; false if it is not. */
  serve(ex: Exchange): boolean {
    const path = ex.path;
    for (const endpoint of this.health) {
      const answer = endpoint.handle(path, ex.query);
      if (answer) {
        ex.res.writeHead(answer.status, answer.headers);
        ex.res.end(answer.body);
        return true;
      }
    }
    if (path === '/version' || path === '/version/') { ex.sendDocument(200, serverVersion); return true; }
    const parts = path.replace(/^\/+|\/+$/g, '').split('/');
    if (parts[0] === 'api' && parts.length === 1) return this.discoveryRoot(ex, 'api') || this.json(ex, apiVersions(this.serverAddress()));
    if (parts[0] === 'apis' && parts.length === 1) return this.discoveryRoot(ex, 'apis') || this.json(ex, apiGroupList(this.kinds));
    if (parts[0] === 'api' && parts.length === 2) return this.json(ex, apiResourceList(this.kinds, '', parts[1]));
    if (parts[0] === 'apis' && parts.length === 2) return this.json(ex, apiGroup(this.kinds, parts[1]));
    if (parts[0] === 'apis' && parts.length === 3) return this.json(ex, apiResourceList(this.kinds, parts[1], parts[2]));
    return false;
  }

  private json(ex: Exchange, doc: object | undefined): boolean {
    if (!doc) throw errors.pathNotFound();
    ex.sendDocument(200, doc);
    return true;
  }

  /** The aggregated document, when the client asks for it by media type (kubectl does first). */
  private discoveryRoot(ex: Exchange, root: 'api' | 'apis'): boolean {
    const wants = parseMediaRanges(header(ex.req, 'accept') ?? '').some((r) =>
      r.params.get('as') === 'APIGroupDiscoveryList' && r.params.get('g') === 'apidiscovery.orch.io' && r.params.get('v') === 'v2');
    if (!wants) return false;
    const doc = this.aggregated[root];
    const headers = { 'content-type': aggregatedDiscoveryMediaType, etag: doc.etag, vary: 'Accept', 'cache-control': 'public' };
    if (header(ex.req, 'if-none-match') === doc.etag) {
      ex.res.writeHead(304, headers);
      ex.res.end();
      return true;
    }
    ex.res.writeHead(200, { ...headers, 'content-length': String(Buffer.byteLength(doc.body)) });
    ex.res.end(doc.body);
    return true;
  }
}
