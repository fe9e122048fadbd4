/**
 * One watch stream as the hub sees it: what it selects, the frames a delivery gave it, and the
 * sink they go to. The hub's flush queue writes its frames, all it has gathered, in one write.
 */
import type { KObject } from '../api/meta.js';
import type { ObjectChange } from '../store/read-model.js';
import type { Flushable, Slice } from './flush-queue.js';
import { bookmarkFrame, coalesceFrames, type Frame, type FrameRuns, type FrameSource, type WatchEncoding, type WatchEventType, type WatchView } from './frames.js';
import type { WatchShape } from './shape.js';
import type { IndexTerm } from './watcher-index.js';
import type { WatcherGroup } from './watcher-group.js';

/** Where a watch's bytes go: an HTTP response, a WebSocket. */
export interface WatchSink {
  /** one batch of event frames, shared with other watchers: never modify them */
  write(frames: readonly Frame[]): void;
  /** bytes accepted but not yet sent to the client */
  bufferedBytes(): number;
  /**
   * Each frame it is given must hold exactly one event (a WebSocket message per event, a sink
   * that converts frames one by one): it never gets frames merged into one
   */
  readonly eventPerFrame?: boolean;
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

/** What a watcher reports its events' sizes to. */
export interface EventSizes { observe(bytes: number): void }

export class Watcher implements Flushable {
  /**
   * The spec's fields every change reads, copied into this class's one shape: specs are built by
   * spreading optional parts, so their shapes vary and reading them per change and watcher went
   * through V8's slow property lookups (a fifth of the front thread's fan-out work, profiled).
   * Only changes after `startRevision` are its own.
   */
  readonly startRevision: number;
  private readonly pathPrefix: string | undefined;
  private readonly matches: WatchSpec['matches'];
  /** its live frames come from the encoder pool */
  readonly pooled: boolean;
  /**
   * What its frames are shared under among the watchers of a change: the pool-encoded shape's key,
   * or (framed on the front thread) its encoding and view
   */
  readonly frameKey: string;
  /** its sink takes frames merged (adjacent ones as one view, a group's as one buffer) */
  readonly takesMerged: boolean;
  /**
   * Frames offered since the last flush, `pending[0 … pendingCount)`. One array for the watcher's
   * life: under load a stream waits tens of ms for its turn, and an array per flush lived long
   * enough for V8 to promote it; that garbage was most of the front thread's old space at 1,000
   * watchers (sampling heap profiler), and what the process's RSS grew by.
   */
  private readonly pending: Frame[] = [];
  private pendingCount = 0;
  /** in the hub's flush queue (at most once) */
  queued = false;
  /**
   * The group it takes its frames from, when it selects nothing (then it is offered no change of
   * its own), and the position in the group's frames up to which it has been given them.
   */
  group: WatcherGroup | undefined;
  cursor = 0;
  private lastBookmarkAt = Date.now();
  closed = false;
  /** ended because its client stopped reading */
  endedSlow = false;

  constructor(readonly spec: WatchSpec, private readonly sink: WatchSink, private readonly onClose: (w: Watcher) => void,
    /** the count its sent events add to (apiserver_watch_events_total) */
    private readonly sent: { sent: number },
    /** told the size of every event this watcher sends (apiserver_watch_events_sizes) */
    private readonly sizes?: EventSizes) {
    this.startRevision = spec.startRevision;
    this.pathPrefix = spec.pathPrefix;
    this.matches = spec.matches;
    this.pooled = spec.shape !== undefined;
    this.frameKey = spec.shape?.key ?? `${spec.encoding}|${spec.view?.key ?? ''}`;
    this.takesMerged = sink.eventPerFrame !== true;
  }

  /** Queues the frame (if any) this change means for this watcher, by the cacher's selector rules. */
  offer(change: ObjectChange, frames: FrameSource): boolean {
    if (change.revision <= this.startRevision || this.closed) return false;
    const prefix = this.pathPrefix;
    if (prefix && !change.path.startsWith(prefix)) return false;
    const nowMatches = change.type !== 'DELETED' && this.matches(change.object.object);
    const wasMatching = change.previous !== undefined && this.matches(change.previous.object);
    if (change.type === 'DELETED') {
      if (!wasMatching) return false;
      this.pending[this.pendingCount++] = frames.frame('DELETED', this);
    } else if (nowMatches) {
      this.pending[this.pendingCount++] = frames.frame(wasMatching ? 'MODIFIED' : 'ADDED', this);
    } else if (wasMatching) {
      this.pending[this.pendingCount++] = frames.leftSelectorFrame(this);
    } else {
      return false;
    }
    return true;
  }

  /**
   * Sends whatever this batch produced in one write (adjacent frames merged, the merged views
   * shared through `runs`), counted off the slice's writes. Always done in one call.
   */
  flush(maxBufferedBytes: number, runs: FrameRuns, slice: Slice): boolean {
    const count = this.pendingCount;
    if (count === 0 || this.closed) return true;
    this.pendingCount = 0;
    const frames = this.pending;
    // the sink keeps its own (new) array until the socket took the bytes, a tick when it keeps up
    const written = this.takesMerged ? coalesceFrames(frames, count, runs) : frames.slice(0, count);
    this.deliver(frames, 0, count, written, maxBufferedBytes);
    slice.writes--;
    // let go of the frames: strings and views must not live on in a reused array
    frames.fill(undefined as never, 0, count);
    return true;
  }

  /**
   * Writes the events `frames[from … to)` as `merged` (the same bytes, merged as `takesMerged`
   * allows; shared with other watchers, never modified), unless its client stopped reading: then
   * the watch is cut, its backlog dropped, rather than buffered without bound.
   */
  deliver(frames: readonly Frame[], from: number, to: number, merged: readonly Frame[], maxBufferedBytes: number): void {
    if (this.closed) return;
    if (this.sink.bufferedBytes() > maxBufferedBytes) {
      this.endedSlow = true;
      this.close();
      return;
    }
    // a string frame's length counts UTF-16 units: the byte count for the ASCII JSON almost all frames are
    if (this.sizes) for (let i = from; i < to; i++) this.sizes.observe(frames[i].length);
    this.sink.write(merged);
    this.sent.sent += to - from;
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
