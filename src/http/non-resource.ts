/**
 * Paths that name no resource: discovery documents, /version, health. Discovery is computed once
 * from the declarations (it changes only when the set of kinds does).
 */
import {
  aggregatedDiscovery, aggregatedDiscoveryMediaType, apiGroup, apiGroupList, apiResourceList, apiVersions, discoveryEtag,
} from '../api/discovery.js';
import type { ApiRegistry } from '../api/registry/api-registry.js';
import { serverVersion } from '../config/build-info.js';
import { errors } from '../status/status-error.js';
import { header, type Exchange } from './exchange.js';
import type { HealthEndpoint } from './health.js';
import { parseMediaRanges } from './negotiation.js';
import { OpenApiHandler } from './openapi-handler.js';


/** One aggregated discovery document, in each group name a client may ask for it by. */
interface Aggregated { bodies: ReadonlyMap<string, string>; etag: string }

/**
 * Our group name, and Kubernetes' that real kubectl and client-go ask for: the document is the
 * same apart from its apiVersion, so both are served.
 */
const discoveryGroups = ['apidiscovery.orch.io', 'apidiscovery.k8s.io'];

export class NonResourceHandler {
  /** the aggregated documents, built when first asked for after each registry change */
  private aggregatedDocs: Partial<Record<'api' | 'apis', Aggregated>> = {};
  private aggregatedGeneration = -1;

  private readonly openApi: OpenApiHandler;

  /** `health`: health endpoints, and others of the same shape (the service-account issuer's discovery) */
  constructor(
    private readonly kinds: ApiRegistry, private readonly health: readonly Pick<HealthEndpoint, 'handle'>[], private readonly serverAddress: () => string,
    /** more paths served whole by another handler (/metrics) */
    private readonly others: readonly { serve(ex: Exchange): boolean }[] = [],
  ) {
    this.openApi = new OpenApiHandler(kinds);
  }

  private aggregated(root: 'api' | 'apis'): Aggregated {
    if (this.aggregatedGeneration !== this.kinds.generation) {
      this.aggregatedGeneration = this.kinds.generation;
      this.aggregatedDocs = {};
    }
    let built = this.aggregatedDocs[root];
    if (!built) {
      const doc = aggregatedDiscovery(this.kinds, root);
      const bodies = new Map(discoveryGroups.map((g) => [g, `${JSON.stringify({ ...doc, apiVersion: `${g}/v2` })}\n`]));
      this.aggregatedDocs[root] = built = { bodies, etag: discoveryEtag(doc) };
    }
    return built;
  }

  /** Serves the path if it is one of ours; false if it is not. */
  serve(ex: Exchange): boolean {
    const path = ex.path;
    for (const endpoint of this.health) {
      const answer = endpoint.handle(path, ex.query);
      if (answer) {
        ex.writeHead(answer.status, { ...answer.headers });
        ex.res.end(answer.body);
        return true;
      }
    }
    if (path === '/version' || path === '/version/') { ex.sendDocument(200, serverVersion); return true; }
    for (const other of this.others) if (other.serve(ex)) return true;
    if (this.openApi.serve(ex)) return true;
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
    // the first acceptable range decides, so a client preferring the legacy documents gets them
    const first = parseMediaRanges(header(ex.req, 'accept') ?? '')[0];
    const group = first?.params.get('g') ?? '';
    if (first?.params.get('as') !== 'APIGroupDiscoveryList' || first.params.get('v') !== 'v2' || !discoveryGroups.includes(group)) return false;
    const doc = this.aggregated(root);
    const body = doc.bodies.get(group) as string;
    const headers = { 'content-type': aggregatedDiscoveryMediaType.replace('apidiscovery.orch.io', group), etag: doc.etag, vary: 'Accept', 'cache-control': 'public' };
    if (header(ex.req, 'if-none-match') === doc.etag) {
      ex.writeHead(304, headers);
      ex.res.end();
      return true;
    }
    ex.writeHead(200, { ...headers, 'content-length': String(Buffer.byteLength(body)) });
    ex.res.end(body);
    return true;
  }
}
