/**
 * Fan-out of committed changes to watch streams. Each change is encoded at most once per shape
 * (encoding × view) its watchers want, never once per watcher, by the encoder pool into shared
 * slabs, and delivered in commit order; only shapes the pool cannot rebuild (a view of a kind
 * registered at runtime) are framed on the front thread. Each stream receives one write per
 * batch; a stream whose unsent bytes pass its bound is cut at once, its backlog dropped, so a
 * stalled client never holds up the others or grows memory (it resumes from its last
 * resourceVersion).
 */
import type { KObject } from '../api/meta.js';
import type { ObjectChange, ReadModel, StoredObject } from '../store/read-model.js';
import type { ChangeLog } from './change-log.js';
import type { EncoderPool, PooledBatch } from './encoder-pool.js';
import type { EncodeTask } from './encode-task.js';
import {
  bookmarkFrame, coalesceFrames, InlineFrames, inlineFrame, pooled,
  type Frame, type FrameRuns, type FrameSource, type WatchEncoding, type WatchEventType, type WatchView,
} from './frames.js';
import type { WatchShape } from './shape.js';
import { WatcherIndex, type IndexedObject, type IndexTerm } from './watcher-index.js';
import { CatchUpFrames } from './catch-up-frames.js';
import type { SlabHolder } from './slabs.js';

/** Where a watch's bytes go: an HTTP response, a WebSocket. */
export interface WatchSink {
  /** one batch of event frames, shared with other watchers: never modify them */
  write(frames: readonly Frame[]): void;
  /** bytes accepted but not yet sent to the client */
  bufferedBytes(): number;
  end(): void;
  /**
   * Ends the stream at once, dropping what it holds, for a client that stopped reading: its
   * backlog is never flushed (HTTP/1.1: the socket is destroyed; HTTP/2: only this stream is
   * reset; WebSocket: terminated).
   */
  abort(): void;
}

export interface WatchSpec {
  resource: string;
  /** `namespace/` key prefix, or undefined for all namespaces / cluster-scoped kinds */
  pathPrefix?: string;
  matches(object: Readonly<KObject>): boolean;
  /** whether `matches` can reject an object of the resource (a selector is in use) */
  filtered: boolean;
  /** only changes after this revision are sent */
  startRevision: number;
  bookmarks: boolean;
  typeMeta: { kind: string; apiVersion: string };
  encoding: WatchEncoding;
  /** the protobuf envelope of an event's object, its view applied (protobuf watches: bookmarks, catch-up, views) */
  envelope?(object: Readonly<KObject>): Uint8Array;
  /**
   * Another representation of every event's object, bookmarks included (a Table, a
   * PartialObjectMetadata), as kube-apiserver converts each event. Watchers whose views have the
   * same `key` share each frame, built on the front thread.
   */
  view?: WatchView;
  /** for CBOR watches: one event as a self-described CBOR item of the sequence, its view applied */
  cbor?(type: WatchEventType, object: Readonly<KObject>): Uint8Array;
  /** the watch's shape as data, when the encoder pool encodes its live events (else the front thread does) */
  shape?: WatchShape;
  /** what the watcher index files it under (default: all of the resource's changes reach it) */
  indexTerm?: IndexTerm;
}

/** One event a new watcher catches up with. */
export interface CatchUpItem { type: 'ADDED' | 'MODIFIED' | 'DELETED'; stored: StoredObject }

/** What the watcher index reads of an object version. */
function indexed(stored: StoredObject): IndexedObject {
  const { name, namespace, labels } = stored.object.metadata;
  return { name: name ?? '', namespace, labels };
}

/** What a watcher reports its events' sizes to. */
export interface EventSizes { observe(bytes: number): void }

export class Watcher {
  private pending: Frame[] = [];
  private lastBookmarkAt = Date.now();
  closed = false;
  /** ended because its client stopped reading */
  endedSlow = false;

  constructor(readonly spec: WatchSpec, private readonly sink: WatchSink, private readonly onClose: (w: Watcher) => void,
    /** told the size of every event this watcher sends (apiserver_watch_events_sizes) */
    private readonly sizes?: EventSizes) {}

  /** Queues the frame (if any) this change means for this watcher, by the cacher's selector rules. */
  offer(change: ObjectChange, frames: FrameSource): boolean {
    if (change.revision <= this.spec.startRevision || this.closed) return false;
    const prefix = this.spec.pathPrefix;
    if (prefix && !change.path.startsWith(prefix)) return false;
    const nowMatches = change.type !== 'DELETED' && this.spec.matches(change.object.object);
    const wasMatching = change.previous !== undefined && this.spec.matches(change.previous.object);
    if (change.type === 'DELETED') {
      if (!wasMatching) return false;
      this.pending.push(frames.frame('DELETED', this.spec));
    } else if (nowMatches) {
      this.pending.push(frames.frame(wasMatching ? 'MODIFIED' : 'ADDED', this.spec));
    } else if (wasMatching) {
      this.pending.push(frames.leftSelectorFrame(this.spec));
    } else {
      return false;
    }
    return true;
  }

  /**
   * Sends whatever this batch produced in one write (adjacent frames merged, the merged views
   * shared through `runs`); returns how many events went out.
   */
  flush(maxBufferedBytes: number, runs?: FrameRuns): number {
    if (this.pending.length === 0 || this.closed) return 0;
    const frames = this.pending;
    this.pending = [];
    if (this.sink.bufferedBytes() > maxBufferedBytes) {
      // the client is not reading: cut its watch (and drop its backlog) rather than buffer without bound
      this.endedSlow = true;
      this.close();
      return 0;
    }
    // a string frame's length counts UTF-16 units: the byte count for the ASCII JSON almost all frames are
    if (this.sizes) for (const f of frames) this.sizes.observe(f.length);
    this.sink.write(coalesceFrames(frames, runs));
    return frames.length;
  }

  send(frames: readonly Frame[]): void {
    if (!this.closed && frames.length > 0) this.sink.write(frames);
  }

  bookmarkDue(now: number, intervalMs: number): boolean {
    return this.spec.bookmarks && now - this.lastBookmarkAt >= intervalMs;
  }

  /** A bookmark never names a revision before the watch's start (a watch from a future version). */
  sendBookmark(revision: number, annotations?: Readonly<Record<string, string>>): void {
    this.lastBookmarkAt = Date.now();
    if (revision < this.spec.startRevision) return;
    this.send([bookmarkFrame(this.spec, revision, annotations)]);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.endedSlow) this.sink.abort();
    else this.sink.end();
    this.onClose(this);
  }
}

export interface WatchHubOptions {
  /** per-stream bound on unsent bytes */
  maxBufferedBytes: number;
  bookmarkIntervalMs: number;
}

/** What the hub has done, for metrics. */
export interface WatchCounters {
  eventsSent: number;
  endedSlow: number;
}

/**
 * How long one macrotask of flushing may run: between slices the event loop serves requests, so
 * fan-out never starves writes. Bounded by time, not by a count of streams: a round then takes
 * fewer loop turns (each with its I/O) yet a request never waits much longer than this behind
 * fan-out (measured at 5,000 watchers, Go clients: 82-107k events/s and 61-99 writes/s
 * accepted, against 36-70k and 52-66 with 64 streams per slice).
 */
const flushSliceMs = 4;
/** streams flushed between two looks at the clock */
const flushClockEvery = 16;

/** bytes of catch-up frames kept for watchers that start after others */
const catchUpCacheBytes = 64 * 1024 * 1024;

export class WatchHub {
  private readonly byResource = new Map<string, WatcherIndex<Watcher>>();
  private readonly ticker: NodeJS.Timeout;
  /** the shapes pooled watchers of each resource want, with how many watchers (and selecting watchers) each */
  private readonly shapes = new Map<string, Map<string, { shape: WatchShape; watchers: number; filtered: number }>>();
  private readonly pooledWatchers = new Map<string, number>();
  /** pooled deliveries, chained so they reach watchers in commit order however the pool finishes */
  private pooledDeliveries: Promise<void> = Promise.resolve();
  /** frames of object versions that new watchers caught up on, shared */
  private readonly catchUpFrames: CatchUpFrames;
  /** catch-up frames the pool is encoding now, so watchers starting together ask for each once */
  private readonly catchUpInFlight = new Map<StoredObject, Map<string, Promise<Frame>>>();
  /** changes committed since the last round took its share: the next round sends them together */
  private pending: ObjectChange[] = [];
  private roundActive = false;
  /** the newest revision the hub has received, and the newest whose frames are all handed out */
  private received: number;
  private delivered: number;
  /** work that must follow delivery of everything received when it was asked for (bookmarks, stream ends) */
  private afterDelivery: Array<{ revision: number; run: () => void }> = [];
  readonly counters: WatchCounters = { eventsSent: 0, endedSlow: 0 };
  /** events sent per watched resource (storage table) and apiVersion, for apiserver_watch_events_total */
  readonly eventsSentBy = new Map<string, Map<string, { sent: number }>>();
  private eventSizes: ((resource: string, apiVersion: string) => EventSizes) | undefined;

  constructor(private readonly readModel: ReadModel, readonly changeLog: ChangeLog, readonly encoders: EncoderPool, private readonly options: WatchHubOptions) {
    this.received = this.delivered = readModel.revision;
    this.catchUpFrames = new CatchUpFrames(catchUpCacheBytes, encoders.slabs);
    readModel.onChange((changes) => this.receive(changes));
    this.ticker = setInterval(() => this.bookmarks(), Math.min(1000, options.bookmarkIntervalMs));
    this.ticker.unref();
  }

  private countSent(w: Watcher, sent: number): number {
    if (sent === 0) return 0;
    let byVersion = this.eventsSentBy.get(w.spec.resource);
    if (!byVersion) this.eventsSentBy.set(w.spec.resource, (byVersion = new Map()));
    let count = byVersion.get(w.spec.typeMeta.apiVersion);
    if (!count) byVersion.set(w.spec.typeMeta.apiVersion, (count = { sent: 0 }));
    count.sent += sent;
    return sent;
  }

  /** Where watchers created from now on report their events' sizes, by storage table and apiVersion. */
  reportEventSizes(sizesOf: (resource: string, apiVersion: string) => EventSizes): void {
    this.eventSizes = sizesOf;
  }

  /** open watches per resource */
  watchers(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [resource, set] of this.byResource) out.set(resource, set.size);
    return out;
  }

  add(spec: WatchSpec, sink: WatchSink): Watcher {
    const w = new Watcher(spec, sink, (closed) => {
      const index = this.byResource.get(closed.spec.resource);
      index?.delete(closed);
      if (index?.size === 0) this.byResource.delete(closed.spec.resource);
      if (closed.spec.shape) this.countShape(closed.spec, -1);
      if (closed.endedSlow) this.counters.endedSlow++;
    }, this.eventSizes?.(spec.resource, spec.typeMeta.apiVersion));
    let index = this.byResource.get(spec.resource);
    if (!index) this.byResource.set(spec.resource, (index = new WatcherIndex()));
    index.add(w, spec.indexTerm ?? { by: 'all' });
    if (spec.shape) this.countShape(spec, 1);
    return w;
  }

  private countShape(spec: WatchSpec, delta: 1 | -1): void {
    const shape = spec.shape as WatchShape;
    let byKey = this.shapes.get(spec.resource);
    if (!byKey) this.shapes.set(spec.resource, (byKey = new Map()));
    let entry = byKey.get(shape.key);
    if (!entry) byKey.set(shape.key, (entry = { shape, watchers: 0, filtered: 0 }));
    entry.watchers += delta;
    if (spec.filtered) entry.filtered += delta;
    this.pooledWatchers.set(spec.resource, (this.pooledWatchers.get(spec.resource) ?? 0) + delta);
    if (entry.watchers === 0) byKey.delete(shape.key);
    if (byKey.size === 0) this.shapes.delete(spec.resource);
  }

  /** The read model applied changes: they are logged at once (for resuming watches) and sent in the next round. */
  private receive(changes: readonly ObjectChange[]): void {
    if (changes.length === 0) return;
    this.changeLog.append(changes, Date.now());
    for (const c of changes) this.pending.push(c);
    this.received = changes[changes.length - 1].revision;
    if (!this.roundActive) {
      this.roundActive = true;
      setImmediate(() => this.round());
    }
  }

  /**
   * One round of fan-out: every change received since the last round, frames built once per
   * change and shape, one write per stream, the streams flushed a slice per macrotask. Changes
   * that commit meanwhile wait for the next round, which then coalesces them: the busier the
   * server, the fewer writes per event.
   */
  private round(): void {
    const changes = this.pending;
    this.pending = [];
    const touched = new Set<Watcher>();
    const toPool: ObjectChange[] = [];
    for (const change of changes) {
      const watchers = this.byResource.get(change.resource);
      if (!watchers || watchers.size === 0) continue;
      if (this.shapes.has(change.resource)) toPool.push(change);
      // every watcher pooled: nothing to frame here
      if (this.pooledWatchers.get(change.resource) === watchers.size) continue;
      let frames: InlineFrames | undefined;
      watchers.forCandidates(indexed(change.object), change.previous && indexed(change.previous), (w) => {
        if (!pooled(w.spec) && w.offer(change, (frames ??= new InlineFrames(change)))) touched.add(w);
      });
    }
    const pooledDelivery = toPool.length > 0 ? this.deliverPooled(toPool) : undefined;
    const revision = changes.length > 0 ? changes[changes.length - 1].revision : this.delivered;
    const finish = () => {
      this.delivered = Math.max(this.delivered, revision);
      this.runAfterDelivery();
      if (this.pending.length > 0) setImmediate(() => this.round());
      else this.roundActive = false;
    };
    // the next round starts once this one's pooled frames are handed out too: changes committed
    // meanwhile are then encoded and written together, one write per stream for all of them
    this.flushSliced([...touched], () => { if (pooledDelivery) void pooledDelivery.then(finish); else finish(); });
  }

  private runAfterDelivery(): void {
    if (this.afterDelivery.length === 0) return;
    const due = this.afterDelivery.filter((a) => a.revision <= this.delivered);
    this.afterDelivery = this.afterDelivery.filter((a) => a.revision > this.delivered);
    for (const a of due) a.run();
  }

  /**
   * Encodes a batch in the pool and delivers it in commit order; resolves once it is handed out
   * (or failed, its streams ended).
   */
  private deliverPooled(changes: ObjectChange[]): Promise<void> {
    const task: EncodeTask = { changes: [], tables: {} };
    const shapeIndex = new Map<string, Map<string, number>>();
    for (const c of changes) {
      let table = task.tables[c.resource];
      if (!table) {
        const entries = [...(this.shapes.get(c.resource)?.values() ?? [])];
        table = task.tables[c.resource] = {
          shapes: entries.map((e) => e.shape),
          filtered: entries.some((e) => e.filtered > 0),
          kind: this.kindDataOf(c.resource),
        };
        shapeIndex.set(c.resource, new Map(entries.map((e, i) => [e.shape.key, i])));
      }
      task.changes.push({
        resource: c.resource, type: c.type, revision: c.revision, object: c.object.json,
        previous: c.type === 'MODIFIED' && table.filtered ? c.previous?.json : undefined,
      });
    }
    const encoded = this.encoders.encode(task);
    // a failure is handled where the chain reaches it, not reported as unhandled before
    encoded.catch(() => undefined);
    this.pooledDeliveries = this.pooledDeliveries.then(() => encoded).then((batch) => new Promise<void>((done) => {
      const touched = new Set<Watcher>();
      try {
        changes.forEach((change, i) => {
          const source = new PooledFrames(batch, i, shapeIndex.get(change.resource) as Map<string, number>);
          this.byResource.get(change.resource)?.forCandidates(indexed(change.object), change.previous && indexed(change.previous), (w) => {
            if (pooled(w.spec) && w.offer(change, source)) touched.add(w);
          });
        });
      } catch (err) {
        batch.release();
        throw err;
      }
      this.flushSliced([...touched], () => { batch.release(); done(); });
    })).catch(() => {
      // a failure to encode or deliver ends the pooled streams of these resources: clients resume and relist
      for (const change of changes) for (const w of [...this.byResource.get(change.resource)?.all() ?? []]) if (pooled(w.spec)) w.close();
    });
    return this.pooledDeliveries;
  }

  /** A table's storage kind for a task; none (the worker then fails the batch) when the registry no longer stores it. */
  private kindDataOf(table: string): EncodeTask['tables'][string]['kind'] {
    try {
      return this.encoders.kindData(table);
    } catch {
      return undefined;
    }
  }

  /** Flushes streams a slice (flushSliceMs) per macrotask, requests served between slices, then calls `then`. */
  private flushSliced(streams: Watcher[], then: () => void): void {
    let next = 0;
    const runs: FrameRuns = new Map();
    const slice = (): void => {
      const until = performance.now() + flushSliceMs;
      while (next < streams.length) {
        const end = Math.min(next + flushClockEvery, streams.length);
        for (; next < end; next++) this.counters.eventsSent += this.countSent(streams[next], streams[next].flush(this.options.maxBufferedBytes, runs));
        if (performance.now() >= until) break;
      }
      if (next < streams.length) setImmediate(slice);
      else then();
    };
    slice();
  }

  /**
   * Runs `fn` once everything received so far has reached `w`, with the revision the stream is then
   * known to be complete to: a bookmark never overtakes the events it vouches for, and a stream's
   * end never cuts off events already committed.
   */
  inOrder(w: Watcher, fn: (revision: number) => void): void {
    const target = this.received;
    const run = () => {
      // everything up to `target` has been handed out (or, for protobuf, queued in order)
      const revision = this.pending.length === 0 && !this.roundActive ? Math.max(this.readModel.revision, this.delivered) : this.delivered;
      if (!pooled(w.spec)) fn(revision);
      else this.pooledDeliveries = this.pooledDeliveries.then(() => fn(revision), () => fn(revision));
    };
    if (this.delivered >= target) run();
    else this.afterDelivery.push({ revision: target, run });
  }

  /**
   * A catch-up frame for a new watcher, built once per object version, shape and event type and
   * shared by every watcher that catches up with it (kept within a bound, see CatchUpFrames);
   * a Table's frames depend on the time (ages) and are built per watcher.
   */
  catchUpFrame(type: 'ADDED' | 'MODIFIED' | 'DELETED', stored: StoredObject, spec: Omit<WatchSpec, 'startRevision'>): Frame {
    if (spec.view && !spec.view.perObject) return inlineFrame(spec, type, stored);
    return this.catchUpFrames.get(stored, `${spec.encoding}|${spec.view?.key ?? ''}|${type}`, () => inlineFrame(spec, type, stored));
  }

  /**
   * Catch-up frames of a pooled watch, encoded by the pool once per object version, shape and
   * event type, and shared by every watcher that catches up with them (and by those asking while
   * they are being encoded). The frames come pinned for `holder`, which releases them once its
   * socket took them (nothing can free their slab in between).
   */
  async catchUpPooled(items: readonly CatchUpItem[], spec: Omit<WatchSpec, 'startRevision'>, holder: SlabHolder): Promise<Frame[]> {
    const shape = spec.shape as WatchShape;
    const out: Array<Frame | Promise<Frame>> = [];
    const misses: number[] = [];
    items.forEach((item, i) => {
      const key = `${shape.key}|${item.type}`;
      const frame = this.catchUpFrames.peek(item.stored, key) ?? this.catchUpInFlight.get(item.stored)?.get(key);
      if (frame) out[i] = frame;
      else misses.push(i);
    });
    if (misses.length > 0) {
      const task: EncodeTask = {
        changes: misses.map((i) => ({ resource: spec.resource, type: items[i].type, revision: items[i].stored.revision, object: items[i].stored.json })),
        tables: { [spec.resource]: { shapes: [shape], filtered: false, kind: this.kindDataOf(spec.resource) } },
      };
      const encoded = this.encoders.encode(task);
      misses.forEach((i, n) => {
        const { stored, type } = items[i];
        const key = `${shape.key}|${type}`;
        const frame = encoded.then((batch) => {
          const f = batch.frame(n, 0, type);
          if (!f) throw new Error(`the encoder pool sent no ${type} frame for ${shape.key}`);
          this.catchUpFrames.put(stored, key, f);
          return f;
        });
        frame.catch(() => undefined).finally(() => {
          const inFlight = this.catchUpInFlight.get(stored);
          inFlight?.delete(key);
          if (inFlight?.size === 0) this.catchUpInFlight.delete(stored);
        });
        let inFlight = this.catchUpInFlight.get(stored);
        if (!inFlight) this.catchUpInFlight.set(stored, (inFlight = new Map()));
        inFlight.set(key, frame);
        out[i] = frame;
      });
      // the cache pins what it keeps; the batch's own pin ends once every frame is in it
      void encoded.then((batch) => Promise.allSettled(misses.map((i) => out[i])).then(() => batch.release()), () => undefined);
    }
    const frames = await Promise.all(out);
    this.encoders.slabs.retain(frames, holder);
    return frames;
  }

  private bookmarks(): void {
    const now = Date.now();
    for (const index of this.byResource.values()) {
      for (const w of index.all()) if (w.bookmarkDue(now, this.options.bookmarkIntervalMs)) this.inOrder(w, (revision) => w.sendBookmark(revision));
    }
  }

  /** Ends every stream (server shutdown), with a last bookmark where asked for, once all received changes went out. */
  closeAll(): Promise<void> {
    clearInterval(this.ticker);
    return new Promise<void>((resolve) => {
      const streams = [...this.byResource.values()].flatMap((index) => [...index.all()]);
      let left = streams.length;
      if (left === 0) { resolve(); return; }
      for (const w of streams) {
        this.inOrder(w, (revision) => {
          if (w.spec.bookmarks) w.sendBookmark(revision);
          w.close();
          if (--left === 0) void this.pooledDeliveries.then(resolve, resolve);
        });
      }
    });
  }
}

/** The frames of one change of a pooled batch, by shape key and slot: one Buffer over the slab per frame, shared by its watchers. */
class PooledFrames implements FrameSource {
  private readonly built = new Map<string, Frame>();
  constructor(private readonly batch: PooledBatch, private readonly change: number, private readonly shapes: ReadonlyMap<string, number>) {}

  private slot(spec: WatchSpec, slot: 'ADDED' | 'MODIFIED' | 'DELETED' | 'LEFT'): Frame {
    const key = `${(spec.shape as WatchShape).key}|${slot}`;
    let frame: Frame | undefined = this.built.get(key);
    if (frame) return frame;
    const shape = this.shapes.get((spec.shape as WatchShape).key);
    frame = shape === undefined ? undefined : this.batch.frame(this.change, shape, slot);
    if (!frame) throw new Error(`the encoder pool sent no ${slot} frame for ${key}`);
    this.built.set(key, frame);
    return frame;
  }

  frame(type: 'ADDED' | 'MODIFIED' | 'DELETED', spec: WatchSpec): Frame { return this.slot(spec, type); }
  leftSelectorFrame(spec: WatchSpec): Frame { return this.slot(spec, 'LEFT'); }
}
