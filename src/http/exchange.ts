/**
 * One request and its response, whichever HTTP version carried it, and the writing of bodies:
 * objects, lists and Status errors in the negotiated encoding.
 */
import { constants as http2Constants, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseDuration } from '../config/duration.js';
import type { UserInfo } from '../auth/user.js';
import type { AuditCapture } from '../audit/capture.js';
import type { KObject } from '../api/meta.js';
import { StoredObject } from '../store/read-model.js';
import { errors, StatusError } from '../status/status-error.js';
import type { MediaTypeOffer } from '../codec/media-types.js';
import { jsonText, serializers, type TypeMeta } from '../codec/serializers.js';
import { listSchemaOf, partialObjectMetadataListSchema, partialObjectMetadataSchema, statusSchema } from '../api/meta.js';
import type { StructSchema } from '../api/schema.js';
import { apiVersionOf, type KindDeclaration } from '../api/kind.js';
import { parseBool } from '../config/feature-gates.js';
import { tableOf, type IncludeObject, type TableRequest } from '../codec/table.js';
import {
  partialObjectMetadataListOf, partialObjectMetadataListOfObject, partialObjectMetadataOf, partialObjectMetadataOfList,
} from '../codec/partial-metadata.js';
import { negotiateResponse, type Negotiated } from './negotiation.js';
import { warningHeaders } from './warning-header.js';
import { slices, writeBody, writeSizes, type BodyTarget, type WriteSizes } from './body-writer.js';
import type { Outlet, OutputBudget } from './output-budget.js';

/** JSON and YAML write a document's own kind and apiVersion: these name nothing on the wire */
const tableTypeMeta: TypeMeta = { apiVersion: 'meta.k8s.io/v1', kind: 'Table' };
const documentTypeMeta: TypeMeta = { apiVersion: '', kind: '' };

export interface ExchangeOptions {
  /** the encodings this server offers (by its feature gates) */
  offered: readonly MediaTypeOffer[];
  /** gzip bodies of at least this many bytes for clients that accept it (APIResponseCompression); undefined: never */
  compressFrom?: number;
  /** the unsent-byte budgets every response is written under */
  output: OutputBudget;
  /** --request-timeout: a body not handed to its socket within it (or the request's shorter `timeout`) is cut; 0: never */
  requestTimeoutMs: number;
}

/** Whether an Accept-Encoding header admits gzip (and does not refuse it with q=0). */
function acceptsGzip(acceptEncoding: string | undefined): boolean {
  if (!acceptEncoding) return false;
  return acceptEncoding.split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';').map((x) => x.trim());
    return (coding === 'gzip' || coding === '*') && !params.some((p) => /^q=0(\.0*)?$/.test(p));
  });
}

export type Request = IncomingMessage | Http2ServerRequest;
export type Response = ServerResponse | Http2ServerResponse;

export class Exchange {
  readonly warnings: string[] = [];
  user: UserInfo | undefined;
  /** the kind a resource request concerns: its schema encodes protobuf, its columns print Tables */
  kind: KindDeclaration | undefined;
  /** the audit record's capture point for what this response carries; set by the audit filter when the request is audited */
  audit: AuditCapture | undefined;
  private negotiatedCache: Negotiated | undefined;
  private outletCache: Outlet | undefined;
  /** headers the pipeline's filters give every answer (Audit-Id, flow-control UIDs): name, value, … */
  private readonly pipelineHeaders: string[] = [];
  /** the response was handed to the socket, or its stream closed */
  private isHandedOff = false;
  private handOffWaiters: (() => void)[] | undefined;

  constructor(
    readonly req: Request,
    readonly res: Response,
    readonly path: string,
    readonly query: URLSearchParams,
    readonly now: number,
    readonly options: ExchangeOptions,
  ) {
    // listened for from the start: a response can finish before anyone asks. An HTTP/2 stream
    // finishes once its data is written to the session's socket; an HTTP/1.1 response closes the
    // tick after its last bytes are handed to the operating system. Either closes when the client
    // goes away. One listener per event serves every party (seat, GOAWAY, output budget): a
    // listener apiece cost a GET a few microseconds.
    if ('stream' in res) res.stream.on('finish', () => this.handOff());
    res.on('close', () => { this.handOff(); this.outletCache?.release(); });
  }

  private handOff(): void {
    if (this.isHandedOff) return;
    this.isHandedOff = true;
    const waiters = this.handOffWaiters;
    this.handOffWaiters = undefined;
    if (waiters) for (const fn of waiters) fn();
  }

  /** Calls `fn` once the response body has been handed to the socket, or the stream was closed or cut (at once if it was). */
  whenHandedOff(fn: () => void): void {
    if (this.isHandedOff) fn();
    else (this.handOffWaiters ??= []).push(fn);
  }

  /** A header every answer to this request carries, written with the others by `writeHead`. */
  setHeader(name: string, value: string): void {
    if (!this.sent) this.pipelineHeaders.push(name, value);
  }

  /**
   * Writes the status line and headers, the pipeline's among them, in one call: Node's fast path
   * (a `setHeader` before it would send every header through `setHeader`). `headers` is the
   * caller's own object; the pipeline's are added to it.
   */
  writeHead(status: number, headers: Record<string, string | string[]>): void {
    const extra = this.pipelineHeaders;
    for (let i = 0; i < extra.length; i += 2) headers[extra[i]] = extra[i + 1];
    this.res.writeHead(status, headers);
  }

  /** Bytes of the response body written through the output budget so far; -1 when nothing was. */
  get bodyBytes(): number { return this.outletCache?.written ?? -1; }

  /** This response's writes under the output budget (created on first use); cutting it ends the stream at once. */
  get outlet(): Outlet {
    if (this.outletCache) return this.outletCache;
    const res = this.res;
    let outlet: Outlet;
    if ('stream' in res) {
      const stream = res.stream;
      // HTTP/2: only this stream is reset; the session's other streams live on
      outlet = this.options.output.outlet(stream.session ?? stream, () => stream.close(http2Constants.NGHTTP2_CANCEL));
    } else {
      const socket = (this.req as IncomingMessage).socket;
      outlet = this.options.output.outlet(socket, () => socket.destroy());
    }
    // released when the response closes (the constructor's listener)
    if (this.gone) outlet.release();
    return (this.outletCache = outlet);
  }

  /** The client is gone: its HTTP/2 stream or its HTTP/1.1 connection is destroyed. */
  private get gone(): boolean {
    const res = this.res;
    return 'stream' in res ? res.stream.destroyed : res.destroyed || (this.req as IncomingMessage).socket.destroyed;
  }

  /** The encodings offered for this request: custom resources (a kind with `protobuf: false`) have no Protobuf. */
  get offered(): readonly MediaTypeOffer[] {
    if (this.kind?.protobuf !== false) return this.options.offered;
    return this.options.offered.filter((o) => o.encoding !== 'protobuf');
  }

  /**
   * The response encoding; throws 406 when the client accepts nothing we offer. A resource request
   * may ask for a conversion (Table, PartialObjectMetadata); other requests may not.
   */
  get negotiated(): Negotiated {
    if (this.negotiatedCache) return this.negotiatedCache;
    const n = negotiateResponse(header(this.req, 'accept'), this.offered, { conversions: this.kind !== undefined });
    return (this.negotiatedCache = { ...n, pretty: n.pretty || this.prettyPrint() });
  }

  /**
   * kube-apiserver's isPrettyPrint: a non-empty `pretty` parameter decides (strconv.ParseBool; what
   * it cannot read is false), else people's clients get indented JSON: curl, Wget, browsers.
   */
  private prettyPrint(): boolean {
    const param = this.query.get('pretty');
    if (param) {
      try { return parseBool(param); } catch { return false; }
    }
    const agent = header(this.req, 'user-agent') ?? '';
    return agent.startsWith('curl') || agent.startsWith('Wget') || agent.startsWith('Mozilla/5.0');
  }

  private headers(contentType: string, extra?: Readonly<Record<string, string>>): Record<string, string | string[]> {
    const h: Record<string, string | string[]> = { 'content-type': contentType, 'cache-control': 'no-cache, private' };
    const warnings = warningHeaders(this.warnings);
    if (warnings.length) h.warning = warnings;
    if (extra) Object.assign(h, extra);
    return h;
  }

  send(status: number, contentType: string, text: string | Buffer, extra?: Readonly<Record<string, string>>): void {
    if (this.sent) return;
    const h = this.headers(contentType, extra);
    const sizes = this.writeSizes();
    // a body that may take more than one write is encoded once here, then written in views of it
    const body = typeof text === 'string' && text.length * 3 > sizes.chunk ? Buffer.from(text, 'utf8') : text;
    const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
    if (this.compresses(length)) {
      this.stream(status, h, typeof body === 'string' ? [body] : slices(body, sizes.chunk), true, sizes);
      return;
    }
    h['content-length'] = String(length);
    if (!this.begin(status, h)) return;
    // HTTP/1.1 sends the head and a string body as one UTF-8 string, which would encode the
    // Warning headers' bytes (see warning-header.ts) a second time; a Buffer body keeps them
    const payload = typeof body === 'string' && h.warning ? Buffer.from(body, 'utf8') : body;
    if (length <= sizes.chunk) this.outlet.write(length, (taken) => this.res.end(payload, taken));
    else void writeBody(this.bodyTarget(sizes), slices(payload as Buffer, sizes.chunk), false);
  }

  /** The headers now and the body as the client takes it, without a Content-Length (HTTP/1.1 sends it chunked). */
  private stream(status: number, h: Record<string, string | string[]>, chunks: Iterable<string | Buffer>, gzip: boolean, sizes: WriteSizes): void {
    if (gzip) {
      h['content-encoding'] = 'gzip';
      h.vary = 'Accept-Encoding';
    }
    if (this.begin(status, h)) void writeBody(this.bodyTarget(sizes), chunks, gzip);
  }

  /** Writes the status and headers; false when no body follows (HEAD, or the client is gone). */
  private begin(status: number, h: Record<string, string | string[]>): boolean {
    this.responding = true;
    if (this.gone) return false;
    this.writeHead(status, h);
    if (this.req.method !== 'HEAD') return true;
    this.res.end();
    return false;
  }

  /** Whether to gzip a body of this size for this client (zlib runs in its thread pool, off the event loop). */
  private compresses(length: number): boolean {
    const threshold = this.options.compressFrom;
    return threshold !== undefined && length >= threshold && acceptsGzip(header(this.req, 'accept-encoding'));
  }

  private writeSizes(): WriteSizes {
    return writeSizes(this.options.output.options.perConnection);
  }

  private bodyTarget(sizes: WriteSizes): BodyTarget {
    return { stream: this.res as ServerResponse, outlet: this.outlet, sizes, deadline: this.deadline() };
  }

  /** The request's deadline, as kube-apiserver's: --request-timeout from its arrival, shortened by a `timeout` parameter. */
  private deadline(): number {
    let ms = this.options.requestTimeoutMs;
    const requested = this.query.get('timeout');
    if (requested) {
      try { ms = Math.min(ms, parseDuration(requested)); } catch { /* a malformed timeout is answered 400 before any body */ }
    }
    return ms > 0 ? this.now + ms : Number.POSITIVE_INFINITY;
  }

  /** a response has begun: nothing else may answer */
  private responding = false;

  get sent(): boolean { return this.res.headersSent || this.responding; }

  /** The Table the client asked for, with its includeObject option. */
  tableRequest(): TableRequest | undefined {
    const conversion = this.negotiated.conversion;
    if (conversion?.kind !== 'Table' || !this.kind) return undefined;
    const include = this.query.get('includeObject') ?? 'Metadata';
    if (include !== 'None' && include !== 'Metadata' && include !== 'Object') {
      throw errors.badRequest(`includeObject: Unsupported value: ${JSON.stringify(include)}: supported values: "None", "Metadata", "Object"`);
    }
    return { group: conversion.group, version: conversion.version, includeObject: include as IncludeObject };
  }

  private sendTable(status: number, table: TableRequest, objects: readonly Readonly<KObject>[], listMeta: Record<string, unknown>): void {
    const doc = tableOf(this.kind as KindDeclaration, objects, listMeta, table, this.now) as Record<string, unknown>;
    const n = this.negotiated;
    // a Table is served in JSON and YAML only (negotiation), under the media type asked for
    this.send(status, n.mediaType, serializers[n.encoding].encode(doc, undefined, tableTypeMeta, n.pretty));
  }

  /** A document that carries its own kind and apiVersion, in the negotiated encoding. */
  private sendEncoded(status: number, n: Negotiated, doc: Record<string, unknown>, schema: StructSchema, headers?: Readonly<Record<string, string>>): void {
    const serializer = serializers[n.encoding];
    this.send(status, serializer.contentType(n.mediaType), serializer.encode(doc, schema, { apiVersion: String(doc.apiVersion), kind: String(doc.kind) }, n.pretty), headers);
  }

  /** Sends an object; stored objects reuse their cached JSON. A conversion applies to every object a verb answers with. */
  sendObject(status: number, obj: StoredObject | Readonly<KObject>): void {
    const n = this.negotiated;
    const object = obj instanceof StoredObject ? obj.object : obj;
    if (this.audit && !this.sent) this.audit.responseObject(status, obj);
    const conversion = n.conversion;
    if (conversion && this.kind) {
      const table = this.tableRequest();
      if (table) {
        const rv = object.metadata.resourceVersion;
        this.sendTable(status, table, [object], rv ? { resourceVersion: rv } : {});
        return;
      }
      if (conversion.kind === 'PartialObjectMetadataList') throw partialObjectMetadataListOfObject(this.kind);
      this.sendEncoded(status, n, partialObjectMetadataOf(object, conversion), partialObjectMetadataSchema);
      return;
    }
    // protobuf needs the kind's message; without one (an error Status) the answer is JSON
    if (n.encoding !== 'json' && (n.encoding !== 'protobuf' || this.kind)) {
      const typeMeta = { apiVersion: object.apiVersion ?? (this.kind ? apiVersionOf(this.kind) : ''), kind: object.kind ?? this.kind?.kind ?? '' };
      const serializer = serializers[n.encoding];
      this.send(status, serializer.contentType(n.mediaType), serializer.encode(object as Record<string, unknown>, this.kind?.schema, typeMeta, n.pretty));
      return;
    }
    if (n.pretty) { this.send(status, 'application/json', jsonText(object, true)); return; }
    this.send(status, 'application/json', `${obj instanceof StoredObject ? obj.json : JSON.stringify(obj)}\n`);
  }

  /** Sends a document that is no API object (discovery, version): JSON or YAML only. */
  sendDocument(status: number, doc: unknown): void {
    const n = this.negotiated;
    if (this.audit && !this.sent) this.audit.responseObject(status, doc as object);
    const serializer = serializers[n.encoding === 'yaml' ? 'yaml' : 'json'];
    this.send(status, serializer.contentType(n.mediaType), serializer.encode(doc as Record<string, unknown>, undefined, documentTypeMeta, n.pretty));
  }

  /** Sends a list envelope around items' cached JSON, without re-serializing them. */
  sendList(listKind: string, apiVersion: string, listMeta: Record<string, unknown>, items: readonly StoredObject[]): void {
    const n = this.negotiated;
    if (this.audit && !this.sent) this.audit.responseList(200, listKind, apiVersion, listMeta, items);
    // items of built-in lists carry no kind or apiVersion; unstructured ones (custom resources) do, as in Kubernetes
    const itemText = this.kind?.decodeUnstructured ? (i: StoredObject) => i.json : (i: StoredObject) => i.itemJson;
    const conversion = n.conversion;
    if (conversion && this.kind) {
      const table = this.tableRequest();
      if (table) { this.sendTable(200, table, items.map((i) => i.object), listMeta); return; }
      if (conversion.kind === 'PartialObjectMetadata') throw partialObjectMetadataOfList(this.kind);
      this.sendEncoded(200, n, partialObjectMetadataListOf(items.map((i) => i.object), listMeta, conversion), partialObjectMetadataListSchema);
      return;
    }
    if ((n.encoding === 'protobuf' && this.kind) || n.encoding === 'cbor') {
      // the binary encodings write the list's own apiVersion/kind from the envelope, not the document
      const list = n.encoding === 'cbor' ? { kind: listKind, apiVersion, metadata: listMeta, items: items.map((i) => i.object) } : { metadata: listMeta, items: items.map((i) => i.object) };
      const serializer = serializers[n.encoding];
      this.send(200, serializer.contentType(n.mediaType), serializer.encode(list, this.kind && listSchemaOf(this.kind.schema), { apiVersion, kind: listKind }, false));
      return;
    }
    if (n.encoding !== 'json' || n.pretty) {
      const list = { kind: listKind, apiVersion, metadata: listMeta, items: items.map((i) => JSON.parse(itemText(i)) as unknown) };
      const serializer = serializers[n.encoding === 'yaml' ? 'yaml' : 'json'];
      this.send(200, serializer.contentType(n.mediaType), serializer.encode(list, undefined, { apiVersion, kind: listKind }, true));
      return;
    }
    const head = `{"kind":${JSON.stringify(listKind)},"apiVersion":${JSON.stringify(apiVersion)},"metadata":${JSON.stringify(listMeta)},"items":[`;
    const sizes = this.writeSizes();
    let chars = head.length + 3;
    for (const item of items) chars += itemText(item).length + 1;
    if (chars > sizes.chunk && !this.sent) {
      // streamed from the items' cached JSON: the whole body is never built, and a client that
      // does not read holds one window of it
      this.stream(200, this.headers(n.mediaType), jsonListPieces(head, items, sizes.chunk, itemText), this.compresses(chars), sizes);
      return;
    }
    const parts = new Array<string>(items.length);
    for (let i = 0; i < items.length; i++) parts[i] = itemText(items[i]);
    this.send(200, n.mediaType, `${head}${parts.join(',')}]}\n`);
  }

  /**
   * A Status, never converted: negotiated again without conversions, as kube-apiserver's
   * ErrorNegotiated does, and indented JSON when even that fails (its WriteRawJSON).
   */
  private sendStatus(code: number, status: Record<string, unknown>, headers?: Readonly<Record<string, string>>): void {
    if (this.audit && !this.sent) this.audit.responseStatus(code, status);
    let n: Negotiated;
    try {
      n = negotiateResponse(header(this.req, 'accept'), this.offered, { conversions: false });
    } catch {
      this.send(code, 'application/json', jsonText(status, true), headers);
      return;
    }
    this.sendEncoded(code, { ...n, pretty: n.pretty || this.prettyPrint() }, status, statusSchema, headers);
  }

  sendError(err: unknown): void {
    const e = err instanceof StatusError ? err : errors.internal(err);
    this.sendStatus(e.code, e.toStatus() as unknown as Record<string, unknown>, e.headers);
  }

  /** A verb's Success Status (a delete's): in the encoding negotiated for the verb, never converted. */
  sendSuccessStatus(details: Record<string, unknown>): void {
    this.sendEncoded(200, this.negotiated, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details }, statusSchema);
  }
}


/** A JSON list in pieces of about `size` characters, joined from its items' cached JSON. */
function* jsonListPieces(head: string, items: readonly StoredObject[], size: number, itemText: (item: StoredObject) => string): Generator<string> {
  let parts: string[] = [head];
  let length = head.length;
  for (let i = 0; i < items.length; i++) {
    const json = itemText(items[i]);
    if (i > 0) parts.push(',');
    parts.push(json);
    length += json.length + 1;
    if (length >= size) {
      yield parts.join('');
      parts = [];
      length = 0;
    }
  }
  parts.push(']}\n');
  yield parts.join('');
}

export function header(req: Request, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}
