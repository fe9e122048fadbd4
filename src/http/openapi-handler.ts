/**
 * /openapi/v2 and /openapi/v3[/<key>], as kube-openapi serves them: each document built from the
 * registry when first asked for and kept until the registry changes, served byte for byte with
 * its hash as ETag; a v3 document fetched by its current `?hash=` is immutable and cacheable for
 * good, a stale hash redirects to the current.
 */
import { openApiHash, openApiV2, openApiV3Document, openApiV3Index } from '../api/openapi/documents.js';
import type { ApiRegistry } from '../api/registry/api-registry.js';
import { errors } from '../status/status-error.js';
import { header, type Exchange } from './exchange.js';
import { parseMediaRanges } from './negotiation.js';

interface Served { body: string; hash: string }

function served(doc: object): Served {
  return { body: JSON.stringify(doc), hash: openApiHash(doc) };
}

/** Only JSON is offered (the protobuf OpenAPI encodings are not): `*` ranges and no Accept mean JSON. */
function acceptsJson(accept: string | undefined): boolean {
  if (!accept?.trim()) return true;
  return parseMediaRanges(accept).some((r) => (r.type === 'application' || r.type === '*') && (r.subtype === 'json' || r.subtype === '*'));
}

export class OpenApiHandler {
  private generation = -1;
  private v2Doc: Served | undefined;
  private indexDoc: Served | undefined;
  /** v3 documents by key, only for keys the index lists (a client cannot grow this map) */
  private readonly v3 = new Map<string, Served>();
  private indexKeys: ReadonlySet<string> | undefined;

  constructor(private readonly registry: ApiRegistry) {}

  /** Drops what was derived from an older registry. */
  private current(): void {
    if (this.generation === this.registry.generation) return;
    this.generation = this.registry.generation;
    this.v2Doc = this.indexDoc = undefined;
    this.indexKeys = undefined;
    this.v3.clear();
  }

  private get v2(): Served { this.current(); return (this.v2Doc ??= served(openApiV2(this.registry))); }
  private get index(): Served {
    this.current();
    if (!this.indexDoc) {
      const index = openApiV3Index(this.registry) as { paths: Record<string, unknown> };
      this.indexKeys = new Set(Object.keys(index.paths));
      this.indexDoc = served(index);
    }
    return this.indexDoc;
  }

  private document(key: string): Served | undefined {
    void this.index;
    if (!this.indexKeys?.has(key)) return undefined;
    let doc = this.v3.get(key);
    if (!doc) this.v3.set(key, (doc = served(openApiV3Document(this.registry, key) as object)));
    return doc;
  }

  /** Serves an /openapi path; false if the path is not one. */
  serve(ex: Exchange): boolean {
    const path = ex.path;
    if (path === '/openapi/v2') return this.send(ex, this.v2, { vary: 'Accept' });
    if (path === '/openapi/v3' || path === '/openapi/v3/') return this.send(ex, this.index, {});
    if (!path.startsWith('/openapi/v3/')) return false;
    const key = path.slice('/openapi/v3/'.length).replace(/\/+$/, '');
    const doc = this.document(key);
    if (!doc) throw errors.pathNotFound();
    const asked = ex.query.get('hash');
    if (asked !== null && asked !== doc.hash) {
      // a stale link: send the client to the document as it is now
      ex.writeHead(301, { location: `/openapi/v3/${key}?hash=${doc.hash}`, 'cache-control': 'no-cache, private' });
      ex.res.end();
      return true;
    }
    const cache: Record<string, string> = asked === doc.hash
      ? { 'cache-control': 'public, immutable', expires: new Date(Date.now() + 365 * 24 * 3600 * 1000).toUTCString() }
      : {};
    return this.send(ex, doc, { vary: 'Accept', ...cache });
  }

  private send(ex: Exchange, doc: Served, headers: Record<string, string>): boolean {
    if (!acceptsJson(header(ex.req, 'accept'))) throw errors.notAcceptable(['application/json']);
    const etag = `"${doc.hash}"`;
    if (header(ex.req, 'if-none-match') === etag) {
      ex.writeHead(304, { etag, ...headers });
      ex.res.end();
      return true;
    }
    ex.send(200, 'application/json', doc.body, { etag, ...headers });
    return true;
  }
}
