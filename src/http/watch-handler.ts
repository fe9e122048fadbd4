/**
 * GET ...?watch=true: starts a stream with the start behaviour the spec tables (synthetic ADDED
 * events, a resume from a revision, sendInitialEvents with its closing bookmark), then hands it
 * to the WatchHub for live changes. Events older than the change log give one ERROR (410).
 */
import type { ServerResponse } from 'node:http';
import { apiVersionOf, type KindDeclaration } from '../api/kind.js';
import { FieldSelector } from '../api/selection/field-selector.js';
import { parseResourceVersion, type ObjectStore } from '../registry/object-store.js';
import type { ReadModel } from '../store/read-model.js';
import { errors } from '../status/status-error.js';
import { jsonFrame, type WatchHub, type WatchSink } from '../watch/watch-hub.js';
import type { Exchange } from './exchange.js';
import { parseWatchQuery } from './query.js';
import type { RequestInfo } from './request-info.js';

export interface WatchDeps {
  hub: WatchHub;
  readModel: ReadModel;
  minRequestTimeoutSeconds: number;
  watchListEnabled: boolean;
  /** closes when the server shuts down */
  onShutdown(listener: () => void): () => void;
}

export async function serveWatch(ex: Exchange, info: RequestInfo, kind: KindDeclaration, store: ObjectStore, deps: WatchDeps): Promise<void> {
  const namespace = kind.namespaced && info.namespace ? info.namespace : undefined;
  const q = parseWatchQuery(ex.query, namespace, deps.watchListEnabled);
  if (info.name) {
    // a watch on one object is a watch on its collection selecting that name
    const byName = `metadata.name=${info.name}`;
    q.fieldSelector = FieldSelector.parse(q.fieldSelector && !q.fieldSelector.empty ? `${q.fieldSelector.toString()},${byName}` : byName);
  }
  store.checkFieldSelector(q.fieldSelector);
  if (ex.negotiated.encoding !== 'json') throw errors.notAcceptable(['application/json']);

  const rm = deps.readModel;
  const rv = q.resourceVersion;
  const requested = rv && rv !== '0' ? parseResourceVersion(rv) : undefined;
  const initialEvents = q.sendInitialEvents ?? (rv === undefined || rv === '0');
  // a watch from a version not yet reached waits for it (up to the request timeout), it does not fail
  if (requested !== undefined && requested > rm.revision) await rm.waitFor(requested);

  const typeMeta = { kind: kind.kind, apiVersion: apiVersionOf(kind) };
  // both HTTP/1.1 and HTTP/2 compatibility responses write the same way; HTTP/2 buffers in its stream
  const res = ex.res as ServerResponse;
  const stream = 'stream' in ex.res ? ex.res.stream : undefined;
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache, private' });
  if (!stream) res.flushHeaders();

  const sink: WatchSink = {
    write: (frame) => { res.write(frame); },
    bufferedBytes: () => (stream ? stream.writableLength : res.writableLength),
    end: () => { if (!res.writableEnded) res.end(); },
  };
  const matches = (o: Parameters<ObjectStore['matches']>[0]) =>
    (!namespace || o.metadata.namespace === namespace) && store.matches(o, q.labelSelector, q.fieldSelector);

  let startRevision: number;
  const replay: string[] = [];
  if (initialEvents) {
    startRevision = rm.revision;
    const table = rm.table(kind.resource);
    const lo = namespace ? `${namespace}/` : undefined;
    const hi = namespace ? `${namespace}0` : '\uffff';
    table.forRange(lo ?? table.minKey() ?? '', hi, false, (_k, v) => {
      if (matches(v.object)) replay.push(jsonFrame('ADDED', v.json));
    });
  } else {
    startRevision = requested ?? rm.revision;
    const changes = deps.hub.changeLog.since(startRevision, kind.resource);
    if (!changes) {
      const status = errors.expired(`too old resource version: ${startRevision} (${deps.hub.changeLog.floor + 1})`).toStatus();
      res.end(jsonFrame('ERROR', JSON.stringify(status)));
      return;
    }
    // replayed changes are offered like live ones so that selector transitions read the same
    for (const c of changes) {
      if (namespace && !c.path.startsWith(`${namespace}/`)) continue;
      const now = c.type !== 'DELETED' && matches(c.object.object);
      const was = c.previous !== undefined && matches(c.previous.object);
      if (c.type === 'DELETED') { if (was) replay.push(jsonFrame('DELETED', c.object.json)); }
      else if (now) replay.push(jsonFrame(was ? 'MODIFIED' : 'ADDED', c.object.json));
      else if (was) {
        const prev = structuredClone(c.previous?.object) as typeof c.object.object;
        prev.metadata.resourceVersion = String(c.revision);
        replay.push(jsonFrame('DELETED', JSON.stringify(prev)));
      }
    }
    startRevision = rm.revision;
  }

  const watcher = deps.hub.add({
    resource: kind.resource,
    pathPrefix: namespace ? `${namespace}/` : undefined,
    matches,
    startRevision,
    bookmarks: q.allowWatchBookmarks,
    typeMeta,
  }, sink);
  if (replay.length) sink.write(replay.join(''));
  if (q.sendInitialEvents && q.allowWatchBookmarks) watcher.sendBookmark(startRevision, true);

  const timeoutSeconds = q.timeoutSeconds ?? deps.minRequestTimeoutSeconds * (1 + Math.random());
  await new Promise<void>((resolve) => {
    const finish = () => {
      clearTimeout(timer);
      stopShutdown();
      watcher.close();
      resolve();
    };
    const timer = setTimeout(() => {
      if (q.allowWatchBookmarks) watcher.sendBookmark(rm.revision);
      finish();
    }, timeoutSeconds * 1000);
    const stopShutdown = deps.onShutdown(() => {
      if (q.allowWatchBookmarks) watcher.sendBookmark(rm.revision);
      finish();
    });
    res.once('close', finish);
    ex.req.once('close', finish);
  });
}
