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
  write(frame: string): void;
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

  constructor(readonly spec: WatchSpec, private readonly sink: WatchSink, private readonly onClose: (w: Watcher) => void) {}

  /** Adds the frame (if any) this change means for this watcher, by the cacher's selector rules. */
  offer(change: ObjectChange, frames: ChangeFrames): void {
    if (change.revision <= this.spec.startRevision) return;
    const prefix = this.spec.pathPrefix;
    if (prefix && !change.path.startsWith(prefix)) return;
    const nowMatches = change.type !== 'DELETED' && this.spec.matches(change.object.object);
    const wasMatching = change.previous !== undefined && this.spec.matches(change.previous.object);
    if (change.type === 'DELETED') {
      if (wasMatching) this.pending.push(frames.frame('DELETED'));
    } else if (nowMatches) {
      this.pending.push(frames.frame(wasMatching ? 'MODIFIED' : 'ADDED'));
    } else if (wasMatching) {
      this.pending.push(frames.leftSelectorFrame());
    }
  }

  /** Sends whatever this batch produced in one write. */
  flush(maxBufferedBytes: number): void {
    if (this.pending.length === 0 || this.closed) return;
    const chunk = this.pending.length === 1 ? this.pending[0] : this.pending.join('');
    this.pending = [];
    if (this.sink.bufferedBytes() + chunk.length > maxBufferedBytes) {
      // the client is not reading: end its watch rather than buffer without bound
      this.close();
      return;
    }
    this.sink.write(chunk);
  }

  send(frame: string): void {
    if (!this.closed) this.sink.write(frame);
  }

  bookmarkDue(now: number, intervalMs: number): boolean {
    return this.spec.bookmarks && now - this.lastBookmarkAt >= intervalMs;
  }

  sendBookmark(revision: number, initialEventsEnd = false): void {
    this.lastBookmarkAt = Date.now();
    this.send(bookmarkFrame(this.spec.typeMeta, revision, initialEventsEnd));
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

export class WatchHub {
  private readonly byResource = new Map<string, Set<Watcher>>();
  private readonly ticker: NodeJS.Timeout;

  constructor(private readonly readModel: ReadModel, readonly changeLog: ChangeLog, private readonly options: WatchHubOptions) {
    readModel.onChange((changes) => this.deliver(changes));
    this.ticker = setInterval(() => this.bookmarks(), Math.min(1000, options.bookmarkIntervalMs));
    this.ticker.unref();
  }

  get size(): number {
    let n = 0;
    for (const set of this.byResource.values()) n += set.size;
    return n;
  }

  add(spec: WatchSpec, sink: WatchSink): Watcher {
    const w = new Watcher(spec, sink, (closed) => this.byResource.get(closed.spec.resource)?.delete(closed));
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
        w.offer(change, frames);
        touched.add(w);
      }
    }
    for (const w of touched) w.flush(this.options.maxBufferedBytes);
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
