/**
 * /openapi/v2 and /openapi/v3[/<key>], as kube-openapi serves them: every document built once from
 * the declarations at start, served byte for byte with its hash as ETag; a v3 document fetched by
 * its current `?hash=` is immutable and cacheable for good, a stale hash redirects to the current.
 */
import { openApiHash, openApiV2, openApiV3Document, openApiV3Index } from '../api/openapi.js';
import type { KindRegistry } from '../api/registry.js';
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
  private readonly v2: Served;
  private readonly index: Served;
  private readonly v3 = new Map<string, Served>();

  constructor(kinds: KindRegistry) {
    this.v2 = served(openApiV2(kinds));
    const index = openApiV3Index(kinds) as { paths: Record<string, unknown> };
    this.index = served(index);
    for (const key of Object.keys(index.paths)) this.v3.set(key, served(openApiV3Document(kinds, key) as object));
  }

  /** Serves an /openapi path; false if the path is not one. */
  serve(ex: Exchange): boolean {
    const path = ex.path;
    if (path === '/openapi/v2') return this.send(ex, this.v2, { vary: 'Accept' });
    if (path === '/openapi/v3' || path === '/openapi/v3/') return this.send(ex, this.index, {});
    if (!path.startsWith('/openapi/v3/')) return false;
    const key = path.slice('/openapi/v3/'.length).replace(/\/+$/, '');
    const doc = this.v3.get(key);
    if (!doc) throw errors.pathNotFound();
    const asked = ex.query.get('hash');
    if (asked !== null && asked !== doc.hash) {
      // a stale link: send the client to the document as it is now
      ex.res.writeHead(301, { location: `/openapi/v3/${key}?hash=${doc.hash}`, 'cache-control': 'no-cache, private' });
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
      ex.res.writeHead(304, { etag, ...headers });
      ex.res.end();
      return true;
    }
    ex.send(200, 'application/json', doc.body, { etag, ...headers });
    return true;
  }
}
