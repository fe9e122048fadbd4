/**
 * GET ...?watch=true: validates the request and plans its start (synthetic ADDED events, a resume
 * from a revision, sendInitialEvents with its closing bookmark), then runs the stream over a
 * transport (chunked HTTP or WebSocket) and hands it to the WatchHub for live changes. Events
 * older than the change log give one ERROR (410); a watch-list for a version the store does not
 * reach within a few seconds one ERROR (504). The same frames go over every transport.
 */
import type { ServerResponse } from 'node:http';
import type { WebSocket } from 'ws';
import { apiVersionOf, type KindDeclaration } from '../api/kind.js';
import type { KObject } from '../api/meta.js';
import { FieldSelector } from '../api/selection/field-selector.js';
import type { LabelSelector } from '../api/selection/label-selector.js';
import { streamMediaTypesOf } from '../codec/media-types.js';
import { serializers } from '../codec/serializers.js';
import { partialObjectMetadataListOfObject } from '../codec/partial-metadata.js';
import { parseResourceVersion, type ObjectStore } from '../resource-store/object-store.js';
import { ObjectView } from '../resource-store/object-view.js';
import type { ObjectChange, ReadModel, Table } from '../store/read-model.js';
import { errors, StatusError } from '../status/status-error.js';
import { poolEncodes } from '../watch/encode-batch.js';
import { leftSelectorObject, type Frame, type WatchEncoding } from '../watch/frames.js';
import { shapeOf, watchEncoders, type WatchRepresentation } from '../watch/shape.js';
import type { IndexTerm } from '../watch/watcher-index.js';
import type { CatchUpItem, WatchHub } from '../watch/watch-hub.js';
import type { WatchSpec } from '../watch/watcher.js';
import type { Exchange } from './exchange.js';
import type { OutputBudget } from './output-budget.js';
import { writeSizes } from './body-writer.js';
import { PacedWatch, type CatchUpBatches, type PacedSink } from './paced-watch.js';
import { convertingTransport } from './converting-watch.js';
import { parseWatchQuery, type WatchQuery } from './query.js';
import type { RequestInfo } from './request-info.js';
import { errorFrame, initialEventsEndAnnotations } from './watch-encoding.js';
import { HttpWatchSink, WebSocketWatchSink } from './watch-sinks.js';

export interface WatchDeps {
  hub: WatchHub;
  readModel: ReadModel;
  minRequestTimeoutSeconds: number;
  watchListEnabled: boolean;
  /** registers a listener called when the server shuts down; returns its removal */
  onShutdown(listener: () => void): () => void;
  /** the unsent-byte budgets WebSocket watches are written under (HTTP watches use their exchange's) */
  output: OutputBudget;
}

/** Where a watch's frames go, and how the client's departure is noticed. */
export interface WatchTransport {
  /** starts the stream (for HTTP: status 200 and headers) */
  open(): PacedSink;
  onClientGone(listener: () => void): void;
}

interface WatchPlan {
  query: WatchQuery;
  spec: Omit<WatchSpec, 'startRevision'>;
  kind: KindDeclaration;
  store: ObjectStore;
  namespace?: string;
  /** the revision the client asked to start after, if any */
  requested?: number;
  initialEvents: boolean;
  /** the annotations of the bookmark that ends the initial events of a watch-list */
  initialEventsEnd?: Record<string, string>;
}

/** Validates a watch request; throws the StatusError to answer instead. */
export function planWatch(query: URLSearchParams, info: RequestInfo, kind: KindDeclaration, store: ObjectStore, deps: WatchDeps, encoding: WatchEncoding, representation?: WatchRepresentation): WatchPlan {
  const namespace = kind.namespaced && info.namespace ? info.namespace : undefined;
  const q = parseWatchQuery(query, namespace, deps.watchListEnabled);
  if (info.name) {
    // a watch on one object is a watch on its collection selecting that name
    const byName = `metadata.name=${info.name}`;
    q.fieldSelector = FieldSelector.parse(q.fieldSelector && !q.fieldSelector.empty ? `${q.fieldSelector.toString()},${byName}` : byName);
  }
  store.checkFieldSelector(q.fieldSelector);
  const rv = q.resourceVersion;
  // a version converted by webhook is watched as the storage version, its frames converted on the way out (converting-watch.ts)
  const converted = store.view.needsPreparation;
  if (converted && (encoding !== 'json' || representation)) {
    throw errors.notAcceptable(['application/json']);
  }
  const version = converted ? new ObjectView(undefined) : store.view;
  // selectors see objects as this declaration serves them
  const matches = (o: Readonly<KObject>) =>
    (!namespace || o.metadata.namespace === namespace) && store.matches(version.object(o), q.labelSelector, q.fieldSelector);
  const watchList = q.sendInitialEvents === true && q.allowWatchBookmarks;
  const shape = shapeOf(kind, encoding, representation, !version.identity);
  return {
    query: q, kind, store, namespace,
    requested: rv && rv !== '0' ? parseResourceVersion(rv) : undefined,
    initialEvents: q.sendInitialEvents ?? (rv === undefined || rv === '0'),
    initialEventsEnd: watchList ? initialEventsEndAnnotations(kind, encoding, representation) : undefined,
    spec: {
      resource: store.table,
      pathPrefix: namespace ? `${namespace}/` : undefined,
      matches,
      filtered: Boolean((q.labelSelector && !q.labelSelector.empty) || (q.fieldSelector && !q.fieldSelector.empty)),
      bookmarks: q.allowWatchBookmarks,
      ...watchEncoders(kind, encoding, representation, version.identity ? undefined : version),
      shape: poolEncodes(shape) ? shape : undefined,
      indexTerm: indexTermOf(namespace, q.labelSelector, q.fieldSelector),
    },
  };
}

/**
 * What the hub's watcher index files a watch under: the most selective term its selectors pin
 * (an object name, a label value, a namespace), so changes reach it without a scan of all watchers.
 */
function indexTermOf(namespace: string | undefined, labels: LabelSelector | undefined, fields: FieldSelector | undefined): IndexTerm {
  const name = fields?.exactValue('metadata.name');
  if (name !== undefined) return { by: 'name', value: name };
  for (const r of labels?.requirements ?? []) {
    if (r.operator === '=' || r.operator === '==' || r.operator === 'in') return { by: 'label', key: r.key, values: r.values };
  }
  const inNamespace = namespace ?? fields?.exactValue('metadata.namespace');
  return inNamespace !== undefined ? { by: 'namespace', value: inNamespace } : { by: 'all' };
}

/** The events of a catch-up, in order, before they are framed. */
function* initialItems(table: Table, lo: string | undefined, hi: string, matches: WatchSpec['matches']): Generator<CatchUpItem> {
  for (const [key, stored] of table.entries(lo)) {
    if (key >= hi) return;
    if (matches(stored.object)) yield { type: 'ADDED', stored };
  }
}

/** Replayed changes, by the same selector rules as live ones. */
function* replayedItems(changes: readonly ObjectChange[], pathPrefix: string | undefined, matches: WatchSpec['matches']): Generator<CatchUpItem> {
  for (const c of changes) {
    if (pathPrefix && !c.path.startsWith(pathPrefix)) continue;
    const now = c.type !== 'DELETED' && matches(c.object.object);
    const was = c.previous !== undefined && matches(c.previous.object);
    if (c.type === 'DELETED') { if (was) yield { type: 'DELETED', stored: c.object }; }
    else if (now) yield { type: was ? 'MODIFIED' : 'ADDED', stored: c.object };
    else if (was) yield { type: 'DELETED', stored: leftSelectorObject(c) };
  }
}

/**
 * A catch-up's events framed a batch at a time, as the client takes them: by the encoder pool for
 * a pooled watch, else on this thread (both shared across watchers, see WatchHub).
 */
function framedBatches(items: Iterable<CatchUpItem>, spec: WatchPlan['spec'], hub: WatchHub): CatchUpBatches {
  // let go once done: the iterator holds the table snapshot, whose nodes the live table has since
  // copied away from, for as long as the watch lasts
  let it: Iterator<CatchUpItem> | undefined = items[Symbol.iterator]();
  return (maxBytes, holder) => {
    const batch: CatchUpItem[] = [];
    // sized by the objects' JSON: close enough for every encoding to keep batches near a window
    for (let bytes = 0; it && bytes < maxBytes;) {
      const next = it.next();
      if (next.done) { it = undefined; break; }
      batch.push(next.value);
      bytes += next.value.stored.json.length;
    }
    if (batch.length === 0) return [];
    if (spec.shape) return hub.catchUpPooled(batch, spec, holder);
    return batch.map((i) => hub.catchUpFrame(i.type, i.stored, spec));
  }
}

/**
 * The frames that bring a new watcher up to date: synthetic ADDED events from an O(1) snapshot of
 * the table, or the changes since a revision. What they cover is fixed now; the frames themselves
 * are built as the client takes them, so a client that never reads costs a window of them.
 */
function catchUp(plan: WatchPlan, deps: WatchDeps): { frames: CatchUpBatches; expired?: Frame } {
  const rm = deps.readModel;
  const { matches } = plan.spec;
  if (plan.initialEvents) {
    const { table } = rm.snapshot(plan.store.table);
    const lo = plan.namespace ? `${plan.namespace}/` : undefined;
    const hi = plan.namespace ? `${plan.namespace}0` : '\uffff';
    return { frames: framedBatches(initialItems(table, lo, hi, matches), plan.spec, deps.hub) };
  }
  const from = plan.requested ?? rm.revision;
  const changes = deps.hub.changeLog.since(from, plan.store.table);
  if (!changes) {
    const status = errors.expired(`too old resource version: ${from} (${deps.hub.changeLog.floor + 1})`).toStatus();
    return { frames: () => [], expired: errorFrame(plan.spec.encoding, status) };
  }
  return { frames: framedBatches(replayedItems(changes, plan.spec.pathPrefix, matches), plan.spec, deps.hub) };
}

/**
 * A watch-list from a version the store has not reached waits for it a few seconds (the cacher's
 * waitUntilFreshAndBlock), then fails with the 504 Status kube-apiserver sends as an ERROR event.
 */
async function tooLargeResourceVersion(plan: WatchPlan, readModel: ReadModel): Promise<StatusError | undefined> {
  if (!plan.query.sendInitialEvents || plan.requested === undefined || plan.requested <= readModel.revision) return undefined;
  try {
    await plan.store.waitForRevision(plan.requested);
    return undefined;
  } catch (err) {
    if (err instanceof StatusError) return err;
    throw err;
  }
}

/**
 * Runs a planned watch until its timeout, the client leaving, or shutdown. A plain watch from a
 * version ahead of the store starts at once and sends only changes after that version (the
 * cacher does not block it); its timeout runs from the start.
 */
export async function runWatch(plan: WatchPlan, transport: WatchTransport, deps: WatchDeps): Promise<void> {
  const rm = deps.readModel;
  const tooLarge = await tooLargeResourceVersion(plan, rm);
  const sink = transport.open();
  if (tooLarge) {
    sink.write([errorFrame(plan.spec.encoding, tooLarge.toStatus())]);
    sink.end();
    return;
  }
  // catching up and registering happen in one synchronous step: no change can fall between them
  const { frames, expired } = catchUp(plan, deps);
  if (expired) {
    sink.write([expired]);
    sink.end();
    return;
  }
  const startRevision = Math.max(rm.revision, plan.requested ?? 0);
  const paced = new PacedWatch(sink, frames, deps.hub.encoders.slabs);
  const watcher = deps.hub.add({ ...plan.spec, startRevision }, paced);
  paced.start();
  if (plan.initialEventsEnd) watcher.sendBookmark(startRevision, plan.initialEventsEnd);
  const hub = deps.hub;

  const timeoutSeconds = plan.query.timeoutSeconds ?? deps.minRequestTimeoutSeconds * (1 + Math.random());
  await new Promise<void>((resolve) => {
    let done = false;
    const finish = (lastBookmark: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      stopShutdown();
      hub.inOrder((revision) => {
        if (lastBookmark && plan.query.allowWatchBookmarks) watcher.sendBookmark(revision);
        watcher.close();
        resolve();
      });
    };
    const timer = setTimeout(() => finish(true), timeoutSeconds * 1000);
    const stopShutdown = deps.onShutdown(() => finish(true));
    transport.onClientGone(() => finish(false));
  });
}

/** The chunked-HTTP transport (HTTP/1.1 chunked encoding, HTTP/2 data frames), written under the output budget. */
export function httpTransport(ex: Exchange, contentType: string): WatchTransport {
  // both compatibility responses write alike; HTTP/2 buffers in its stream
  const res = ex.res as ServerResponse;
  const stream = 'stream' in ex.res ? ex.res.stream : undefined;
  return {
    open() {
      ex.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-cache, private' });
      if (!stream) res.flushHeaders();
      return new HttpWatchSink(ex.outlet, writeSizes(ex.options.output.options.perConnection), res, stream);
    },
    onClientGone(listener) {
      res.once('close', listener);
      ex.req.once('close', listener);
    },
  };
}

/** The WebSocket transport: one event per message, text for JSON watches as kube-apiserver frames them. */
export function webSocketTransport(ws: WebSocket, output: OutputBudget, binary: boolean): WatchTransport {
  return {
    open: () => {
      const outlet = output.outlet(ws, () => ws.terminate());
      ws.once('close', () => outlet.release());
      return new WebSocketWatchSink(outlet, writeSizes(output.options.perConnection), ws, binary);
    },
    onClientGone(listener) {
      ws.once('close', listener);
      ws.once('error', listener);
    },
  };
}

export async function serveWatch(ex: Exchange, info: RequestInfo, kind: KindDeclaration, store: ObjectStore, deps: WatchDeps): Promise<void> {
  const n = ex.negotiated;
  // the stream serializer of the negotiated type: YAML has none
  const stream = serializers[n.encoding].stream;
  if (!stream) throw errors.notAcceptable(streamMediaTypesOf(ex.offered));
  const table = ex.tableRequest();
  let representation: WatchRepresentation | undefined;
  if (table) representation = { as: 'Table', table };
  else if (n.conversion?.kind === 'PartialObjectMetadata') representation = { as: 'PartialObjectMetadata', gv: n.conversion };
  // each event is one object: kube-apiserver cannot encode it as a list either, and breaks the stream
  else if (n.conversion?.kind === 'PartialObjectMetadataList') throw partialObjectMetadataListOfObject(kind);
  // an encoding with a stream serializer is a watch encoding
  const plan = planWatch(ex.query, info, kind, store, deps, n.encoding as WatchEncoding, representation);
  await runWatch(plan, servedTransport(kind, store, httpTransport(ex, stream.contentType(n.mediaType))), deps);
}

/** The transport itself, or for a version converted by webhook, one that converts its frames first. */
export function servedTransport(kind: KindDeclaration, store: ObjectStore, transport: WatchTransport): WatchTransport {
  const conversion = kind.conversion;
  if (!store.view.needsPreparation || !conversion?.prepare) return transport;
  const prepare = conversion.prepare.bind(conversion);
  return convertingTransport(transport, async (objects) => {
    await prepare(objects, 'fromStorage');
    return objects.map((o) => conversion.fromStorage(o));
  }, apiVersionOf(kind));
}
