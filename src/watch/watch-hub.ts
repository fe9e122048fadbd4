/**
 * Fan-out of committed changes to watch streams. Each change is encoded at most once per shape
 * (encoding × view) its watchers want, never once per watcher, by the encoder pool into shared
 * slabs, and delivered in commit order; only shapes the pool cannot rebuild (a view of a kind
 * registered at runtime) are framed on the front thread. Streams given frames wait in one flush
 * queue and get one write for all they gathered; a stream whose unsent bytes pass its bound is
 * cut at once, its backlog dropped, so a stalled client never holds up the others or grows memory
 * (it resumes from its last resourceVersion).
 */
import type { ObjectChange, ReadModel, StoredObject } from '../store/read-model.js';
import type { ChangeLog } from './change-log.js';
import type { EncoderPool } from './encoder-pool.js';
import type { EncodeTask } from './encode-task.js';
import { FlushQueue } from './flush-queue.js';
import { InlineFrames, inlineFrame, type Frame } from './frames.js';
import { PooledFrames } from './pooled-frames.js';
import { ResourceWatchers } from './resource-watchers.js';
import type { WatchShape } from './shape.js';
import { Watcher, type EventSizes, type WatchSink, type WatchSpec } from './watcher.js';
import { WatcherGroup } from './watcher-group.js';
import { CatchUpFrames } from './catch-up-frames.js';
import type { SlabHolder } from './slabs.js';

/** One event a new watcher catches up with. */
export interface CatchUpItem { type: 'ADDED' | 'MODIFIED' | 'DELETED'; stored: StoredObject }

export interface WatchHubOptions {
  /** per-stream bound on unsent bytes */
  maxBufferedBytes: number;
  bookmarkIntervalMs: number;
}

/** What the hub has done, for metrics. */
export interface WatchCounters {
  /** streams ended because their clients stopped reading (events sent are counted per resource in `eventsSentBy`) */
  endedSlow: number;
}

/** bytes of catch-up frames kept for watchers that start after others */
const catchUpCacheBytes = 64 * 1024 * 1024;

export class WatchHub {
  private readonly byResource = new Map<string, ResourceWatchers>();
  private readonly ticker: NodeJS.Timeout;
  /** the shapes pooled watchers of each resource want, with how many watchers (and selecting watchers) each */
  private readonly shapes = new Map<string, Map<string, { shape: WatchShape; watchers: number; filtered: number }>>();
  /**
   * Each round's frames are offered to its watchers, and its revision then counted delivered, in
   * commit order however the pool finishes: one chain of the rounds' steps.
   */
  private offers: Promise<void> = Promise.resolve();
  private readonly flushes: FlushQueue<Watcher | WatcherGroup>;
  /** frames of object versions that new watchers caught up on, shared */
  private readonly catchUpFrames: CatchUpFrames;
  /** catch-up frames the pool is encoding now, so watchers starting together ask for each once */
  private readonly catchUpInFlight = new Map<StoredObject, Map<string, Promise<Frame>>>();
  /** changes committed since the last round took its share: the next round sends them together */
  private pending: ObjectChange[] = [];
  private roundScheduled = false;
  /** the newest revision the hub has received, and the newest whose frames are all handed out */
  private received: number;
  private delivered: number;
  /** work that must follow delivery of everything received when it was asked for (bookmarks, stream ends) */
  private afterDelivery: Array<{ revision: number; run: () => void }> = [];
  readonly counters: WatchCounters = { endedSlow: 0 };
  /** events sent per watched resource (storage table) and apiVersion, for apiserver_watch_events_total */
  readonly eventsSentBy = new Map<string, Map<string, { sent: number }>>();
  private eventSizes: ((resource: string, apiVersion: string) => EventSizes) | undefined;

  constructor(private readonly readModel: ReadModel, readonly changeLog: ChangeLog, readonly encoders: EncoderPool, private readonly options: WatchHubOptions) {
    this.received = this.delivered = readModel.revision;
    this.catchUpFrames = new CatchUpFrames(catchUpCacheBytes, encoders.slabs);
    this.flushes = new FlushQueue<Watcher | WatcherGroup>((entry, runs, slice) => entry.flush(options.maxBufferedBytes, runs, slice));
    readModel.onChange((changes) => this.receive(changes));
    this.ticker = setInterval(() => this.bookmarks(), Math.min(1000, options.bookmarkIntervalMs));
    this.ticker.unref();
  }

  /** The count a watcher of this resource and apiVersion adds its sent events to. */
  private sentCounter(spec: WatchSpec): { sent: number } {
    let byVersion = this.eventsSentBy.get(spec.resource);
    if (!byVersion) this.eventsSentBy.set(spec.resource, (byVersion = new Map()));
    let count = byVersion.get(spec.typeMeta.apiVersion);
    if (!count) byVersion.set(spec.typeMeta.apiVersion, (count = { sent: 0 }));
    return count;
  }

  /** Where watchers created from now on report their events' sizes, by storage table and apiVersion. */
  reportEventSizes(sizesOf: (resource: string, apiVersion: string) => EventSizes): void {
    this.eventSizes = sizesOf;
  }

  /** open watches per resource */
  watchers(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [resource, watchers] of this.byResource) out.set(resource, watchers.size);
    return out;
  }

  add(spec: WatchSpec, sink: WatchSink): Watcher {
    const w = new Watcher(spec, sink, (closed) => {
      const watchers = this.byResource.get(closed.spec.resource);
      watchers?.delete(closed);
      if (watchers?.size === 0) this.byResource.delete(closed.spec.resource);
      if (closed.spec.shape) this.countShape(closed.spec, -1);
      if (closed.endedSlow) this.counters.endedSlow++;
    }, this.sentCounter(spec), this.eventSizes?.(spec.resource, spec.typeMeta.apiVersion));
    let watchers = this.byResource.get(spec.resource);
    if (!watchers) this.byResource.set(spec.resource, (watchers = new ResourceWatchers()));
    watchers.add(w);
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
    if (entry.watchers === 0) byKey.delete(shape.key);
    if (byKey.size === 0) this.shapes.delete(spec.resource);
  }

  /** The read model applied changes: they are logged at once (for resuming watches) and sent in the next round. */
  private receive(changes: readonly ObjectChange[]): void {
    if (changes.length === 0) return;
    this.changeLog.append(changes, Date.now());
    for (const c of changes) this.pending.push(c);
    this.received = changes[changes.length - 1].revision;
    if (!this.roundScheduled) {
      this.roundScheduled = true;
      // at the end of this task, not a loop turn later (a turn takes milliseconds under fan-out):
      // the changes of one message from the writer still go out as one round
      queueMicrotask(() => this.round());
    }
  }

  /**
   * One round of fan-out: every change received since the last round, frames built once per
   * change and shape (by the pool, or here for shapes it cannot build), offered to their watchers,
   * which join the flush queue. The round's revision counts as delivered once the streams its
   * frames went to are written, in commit order with the rounds before it.
   */
  private round(): void {
    this.roundScheduled = false;
    const changes = this.pending;
    this.pending = [];
    const toPool: ObjectChange[] = [];
    for (const change of changes) {
      const watchers = this.byResource.get(change.resource);
      if (!watchers || watchers.size === 0) continue;
      if (this.shapes.has(change.resource)) toPool.push(change);
      // frames built here only for watchers the pool does not frame
      if (watchers.inline > 0) watchers.offer(change, new InlineFrames(change), false, this.queue);
    }
    if (toPool.length > 0) this.offerPooled(toPool);
    const revision = changes.length > 0 ? changes[changes.length - 1].revision : this.delivered;
    this.offers = this.offers.then(() => this.flushes.whenFlushed(() => {
      this.delivered = Math.max(this.delivered, revision);
      this.runAfterDelivery();
    }));
  }

  /** A watcher or group given frames waits for its write in the flush queue (bound once: called per offer). */
  private readonly queue = (taken: Watcher | WatcherGroup): void => { this.flushes.add(taken); };

  private runAfterDelivery(): void {
    if (this.afterDelivery.length === 0) return;
    const due = this.afterDelivery.filter((a) => a.revision <= this.delivered);
    this.afterDelivery = this.afterDelivery.filter((a) => a.revision > this.delivered);
    for (const a of due) a.run();
  }

  /**
   * Encodes a batch in the pool (while earlier ones are still being written) and offers its
   * frames to their watchers in commit order; the batch's slabs are let go once those watchers'
   * streams took their frames.
   */
  private offerPooled(changes: ObjectChange[]): void {
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
    this.offers = this.offers.then(() => encoded).then((batch) => {
      try {
        changes.forEach((change, i) => {
          const source = new PooledFrames(batch, i, shapeIndex.get(change.resource) as Map<string, number>);
          this.byResource.get(change.resource)?.offer(change, source, true, this.queue);
        });
      } finally {
        this.flushes.whenFlushed(() => batch.release());
      }
    }).catch(() => {
      // a failure to encode or deliver ends the pooled streams of these resources: clients resume and relist
      for (const change of changes) for (const w of [...this.byResource.get(change.resource)?.all() ?? []]) if (w.pooled) w.close();
    });
  }

  /** A table's storage kind for a task; none (the worker then fails the batch) when the registry no longer stores it. */
  private kindDataOf(table: string): EncodeTask['tables'][string]['kind'] {
    try {
      return this.encoders.kindData(table);
    } catch {
      return undefined;
    }
  }

  /**
   * Runs `fn` once everything received so far has been written to every stream, with the revision
   * the streams are then known to be complete to: a bookmark never overtakes the events it vouches
   * for, and a stream's end never cuts off events already committed.
   */
  inOrder(fn: (revision: number) => void): void {
    const target = this.received;
    const run = () => {
      // everything up to `target` has been written; with nothing on its way, all the store has
      const quiet = this.pending.length === 0 && !this.roundScheduled && this.delivered >= this.received && this.flushes.idle;
      fn(quiet ? Math.max(this.readModel.revision, this.delivered) : this.delivered);
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
    for (const watchers of this.byResource.values()) {
      for (const w of watchers.all()) if (w.bookmarkDue(now, this.options.bookmarkIntervalMs)) this.inOrder((revision) => w.sendBookmark(revision));
    }
  }

  /** Ends every stream (server shutdown), with a last bookmark where asked for, once all received changes went out. */
  closeAll(): Promise<void> {
    clearInterval(this.ticker);
    return new Promise<void>((resolve) => {
      const streams = [...this.byResource.values()].flatMap((watchers) => [...watchers.all()]);
      let left = streams.length;
      if (left === 0) { resolve(); return; }
      for (const w of streams) {
        this.inOrder((revision) => {
          if (w.spec.bookmarks) w.sendBookmark(revision);
          w.close();
          if (--left === 0) void this.offers.then(resolve, resolve);
        });
      }
    });
  }
}

