/**
 * /openapi/v2 and /openapi/v3[/<key>], as kube-openapi serves them: each document built from the
 * registry when first asked for and kept until the registry changes, served byte for byte with
 * its hash as ETag; a v3 document fetched by its current `?hash=` is immutable and cacheable for
 * good, a stale hash redirects to the current. /openapi/v2 is also offered in gnostic's protobuf
 * encoding, which client-go's DiscoveryClient.OpenAPISchema asks for (kubectl's client-side
 * validation of a `kind: List`); the v3 documents are JSON only.
 */
import { openApiHash, openApiV2, openApiV3Document, openApiV3Index } from '../api/openapi/documents.js';
import type { ApiRegistry } from '../api/registry/api-registry.js';
import { openApiV2Protobuf } from '../codec/proto/openapi-v2.js';
import { errors } from '../status/status-error.js';
import { header, type Exchange } from './exchange.js';
import { parseMediaRanges } from './negotiation.js';

interface Served<Body extends string | Buffer = string | Buffer> { body: Body; hash: string }

function served(doc: object): Served<string> {
  return { body: JSON.stringify(doc), hash: openApiHash(doc) };
}

/** A media type a document is offered in: the subtype an Accept clause names, the type answered, the bytes. */
interface Offer { subtype: string; contentType: string; doc: () => Served }

const json = (doc: () => Served): Offer => ({ subtype: 'json', contentType: 'application/json', doc });

/** kube-openapi's two spellings of the protobuf type (client-go sends the `@` one), both answered with the dotted one. */
const protobufSubtypes = ['com.github.proto-openapi.spec.v2@v1.0+protobuf', 'com.github.proto-openapi.spec.v2.v1.0+protobuf'];
const protobufContentType = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

/**
 * The offer to answer with, as kube-openapi picks it: the Accept clauses in quality order, each
 * against the offers in order, the first match wins; no Accept is `*\/*` (JSON).
 */
function negotiate(accept: string | undefined, offers: readonly Offer[]): Offer {
  for (const range of parseMediaRanges(accept?.trim() ? accept : '*/*')) {
    const offer = offers.find((o) => (range.type === 'application' || range.type === '*') && (range.subtype === o.subtype || range.subtype === '*'));
    if (offer) return offer;
  }
  throw errors.notAcceptable([...new Set(offers.map((o) => o.contentType))]);
}

export class OpenApiHandler {
  private generation = -1;
  private v2Doc: Served<string> | undefined;
  private v2ProtobufDoc: Served<Buffer> | undefined;
  private indexDoc: Served | undefined;
  /** v3 documents by key, only for keys the index lists (a client cannot grow this map) */
  private readonly v3 = new Map<string, Served>();
  private indexKeys: ReadonlySet<string> | undefined;

  private readonly v2Offers: readonly Offer[] = [
    json(() => this.v2),
    ...protobufSubtypes.map((subtype) => ({ subtype, contentType: protobufContentType, doc: () => this.v2Protobuf })),
  ];

  constructor(private readonly registry: ApiRegistry) {}

  /** Drops what was derived from an older registry. */
  private current(): void {
    if (this.generation === this.registry.generation) return;
    this.generation = this.registry.generation;
    this.v2Doc = this.v2ProtobufDoc = this.indexDoc = undefined;
    this.indexKeys = undefined;
    this.v3.clear();
  }

  private get v2(): Served<string> { this.current(); return (this.v2Doc ??= served(openApiV2(this.registry))); }
  /**
   * Encoded from the JSON served, as kube-openapi does, and under the JSON's ETag, which
   * kube-openapi gives both forms (responses vary by Accept).
   */
  private get v2Protobuf(): Served<Buffer> {
    const { body, hash } = this.v2;
    if (!this.v2ProtobufDoc) {
      const bytes = openApiV2Protobuf(JSON.parse(body) as Record<string, unknown>);
      this.v2ProtobufDoc = { body: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), hash };
    }
    return this.v2ProtobufDoc;
  }
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
    if (path === '/openapi/v2') return this.send(ex, this.v2Offers, { vary: 'Accept' });
    if (path === '/openapi/v3' || path === '/openapi/v3/') return this.send(ex, [json(() => this.index)], {});
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
    return this.send(ex, [json(() => doc)], { vary: 'Accept', ...cache });
  }

  private send(ex: Exchange, offers: readonly Offer[], headers: Record<string, string>): boolean {
    const offer = negotiate(header(ex.req, 'accept'), offers);
    const doc = offer.doc();
    const etag = `"${doc.hash}"`;
    if (header(ex.req, 'if-none-match') === etag) {
      ex.writeHead(304, { etag, ...headers });
      ex.res.end();
      return true;
    }
    ex.send(200, offer.contentType, doc.body, { etag, ...headers });
    return true;
  }
}
