/**
 * Fan-out of committed changes to watch streams. Each change is encoded at most once per event
 * shape (not once per watcher); each stream receives one write per batch of changes; a stream
 * whose unread bytes pass its bound is ended, so a stalled client never holds up the others or
 * grows memory (it resumes from its last resourceVersion).
 */
import type { KObject } from '../api/meta.js';
import { StoredObject, type ObjectChange, type ReadModel } from '../store/read-model.js';
import type { ChangeLog } from './change-log.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** Where a watch's bytes go: an HTTP response, a WebSocket. */
export interface WatchSink {
  /** one batch of event frames, each a whole event (JSON and a newline), shared with other watchers */
  write(frames: readonly string[]): void;
  /** bytes accepted but not yet sent to the client */
  bufferedBytes(): number;
  end(): void;
}

export interface WatchSpec {
  resource: string;
  /** `namespace/` key prefix, or undefined for all namespaces / cluster-scoped kinds */
  pathPrefix?: string;
  matches(object: Readonly<KObject>): boolean;
  /** only changes after this revision are sent */
  startRevision: number;
  bookmarks: boolean;
  typeMeta: { kind: string; apiVersion: string };
}

export function jsonFrame(type: WatchEventType, objectJson: string): string {
  return `{"type":"${type}","object":${objectJson}}\n`;
}

export function bookmarkFrame(typeMeta: { kind: string; apiVersion: string }, revision: number, initialEventsEnd = false): string {
  const annotations = initialEventsEnd ? ',"annotations":{"orch.io/initial-events-end":"true"}' : '';
  return jsonFrame('BOOKMARK', `{"kind":${JSON.stringify(typeMeta.kind)},"apiVersion":${JSON.stringify(typeMeta.apiVersion)},"metadata":{"resourceVersion":"${revision}","creationTimestamp":null${annotations}}}`);
}

/** The frames one change may produce, each built on first use and shared by every watcher. */
class ChangeFrames {
  private added?: string;
  private modified?: string;
  private deleted?: string;
  private leftSelector?: string;

  constructor(private readonly change: ObjectChange) {}

  frame(type: 'ADDED' | 'MODIFIED' | 'DELETED'): string {
    const json = this.change.object.json;
    switch (type) {
      case 'ADDED': return (this.added ??= jsonFrame('ADDED', json));
      case 'MODIFIED': return (this.modified ??= jsonFrame('MODIFIED', json));
      case 'DELETED': return (this.deleted ??= jsonFrame('DELETED', json));
    }
  }

  /** An object that stopped matching a selector: DELETED with its previous content at this revision. */
  leftSelectorFrame(): string {
    if (this.leftSelector !== undefined) return this.leftSelector;
    const prev = structuredClone(this.change.previous?.object ?? this.change.object) as KObject;
    prev.metadata.resourceVersion = String(this.change.revision);
    return (this.leftSelector = jsonFrame('DELETED', new StoredObject(prev, this.change.revision).json));
  }
}

export class Watcher {
  private pending: string[] = [];
  private lastBookmarkAt = Date.now();
  closed = false;
  /** ended because its client stopped reading */
  endedSlow = false;

  constructor(readonly spec: WatchSpec, private readonly sink: WatchSink, private readonly onClose: (w: Watcher) => void) {}

  /** Queues the frame (if any) this change means for this watcher, by the cacher's selector rules. */
  offer(change: ObjectChange, frames: ChangeFrames): boolean {
    if (change.revision <= this.spec.startRevision || this.closed) return false;
    const prefix = this.spec.pathPrefix;
    if (prefix && !change.path.startsWith(prefix)) return false;
    const nowMatches = change.type !== 'DELETED' && this.spec.matches(change.object.object);
    const wasMatching = change.previous !== undefined && this.spec.matches(change.previous.object);
    if (change.type === 'DELETED') {
      if (!wasMatching) return false;
      this.pending.push(frames.frame('DELETED'));
    } else if (nowMatches) {
      this.pending.push(frames.frame(wasMatching ? 'MODIFIED' : 'ADDED'));
    } else if (wasMatching) {
      this.pending.push(frames.leftSelectorFrame());
    } else {
      return false;
    }
    return true;
  }

  /** Sends whatever this batch produced in one write; returns how many events went out. */
  flush(maxBufferedBytes: number): number {
    if (this.pending.length === 0 || this.closed) return 0;
    const frames = this.pending;
    this.pending = [];
    if (this.sink.bufferedBytes() > maxBufferedBytes) {
      // the client is not reading: end its watch rather than buffer without bound
      this.endedSlow = true;
      this.close();
      return 0;
    }
    this.sink.write(frames);
    return frames.length;
  }

  send(frames: readonly string[]): void {
    if (!this.closed && frames.length > 0) this.sink.write(frames);
  }

  bookmarkDue(now: number, intervalMs: number): boolean {
    return this.spec.bookmarks && now - this.lastBookmarkAt >= intervalMs;
  }

  sendBookmark(revision: number, initialEventsEnd = false): void {
    this.lastBookmarkAt = Date.now();
    this.send([bookmarkFrame(this.spec.typeMeta, revision, initialEventsEnd)]);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.sink.end();
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

export class WatchHub {
  private readonly byResource = new Map<string, Set<Watcher>>();
  readonly counters: WatchCounters = { eventsSent: 0, endedSlow: 0 };
  private readonly ticker: NodeJS.Timeout;

  constructor(private readonly readModel: ReadModel, readonly changeLog: ChangeLog, private readonly options: WatchHubOptions) {
    readModel.onChange((changes) => this.deliver(changes));
    this.ticker = setInterval(() => this.bookmarks(), Math.min(1000, options.bookmarkIntervalMs));
    this.ticker.unref();
  }

  /** open watches per resource */
  watchers(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [resource, set] of this.byResource) out.set(resource, set.size);
    return out;
  }

  add(spec: WatchSpec, sink: WatchSink): Watcher {
    const w = new Watcher(spec, sink, (closed) => {
      this.byResource.get(closed.spec.resource)?.delete(closed);
      if (closed.endedSlow) this.counters.endedSlow++;
    });
    let set = this.byResource.get(spec.resource);
    if (!set) this.byResource.set(spec.resource, (set = new Set()));
    set.add(w);
    return w;
  }

  private deliver(changes: readonly ObjectChange[]): void {
    this.changeLog.append(changes, Date.now());
    const touched = new Set<Watcher>();
    for (const change of changes) {
      const watchers = this.byResource.get(change.resource);
      if (!watchers || watchers.size === 0) continue;
      const frames = new ChangeFrames(change);
      for (const w of watchers) {
        if (w.offer(change, frames)) touched.add(w);
      }
    }
    for (const w of touched) this.counters.eventsSent += w.flush(this.options.maxBufferedBytes);
  }

  private bookmarks(): void {
    const now = Date.now();
    for (const set of this.byResource.values()) {
      for (const w of set) if (w.bookmarkDue(now, this.options.bookmarkIntervalMs)) w.sendBookmark(this.readModel.revision);
    }
  }

  /** Ends every stream (server shutdown), with a last bookmark where asked for. */
  closeAll(): void {
    clearInterval(this.ticker);
    for (const set of this.byResource.values()) {
      for (const w of [...set]) {
        if (w.spec.bookmarks) w.sendBookmark(this.readModel.revision);
        w.close();
      }
    }
  }
}
