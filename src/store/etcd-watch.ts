/**
 * The etcd engine's one watch over its key range. It survives member failures by resuming, on
 * the next member, at the revision after the last one it delivered: etcd sends all events of a
 * revision in one response (it splits only when asked to fragment), so resuming at a revision
 * boundary neither skips nor repeats a change. When etcd has compacted the revision it must
 * resume from, changes were missed, and it says so instead of resuming.
 */
import type { IEvent, IWatchResponse } from 'etcd3';
import type { EtcdConnection, WatchStream } from './etcd-connection.js';

export interface WatchHandlers {
  /** the events of whole revisions, in order; `revision`: every change at or below it has now been delivered */
  changes(events: readonly IEvent[], revision: number): void;
  /** the watch cannot resume without missing changes */
  lost(message: string): void;
}

const maxBackoffMs = 1000;

export class EtcdWatch {
  private stream: WatchStream | undefined;
  /** which member the next stream goes to: moves on after every failure */
  private attempt = 0;
  private failures = 0;
  private nextRevision = 0;
  private established = false;
  private downSince = Date.now();
  private lastError = 'not started';
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly connection: EtcdConnection,
    private readonly key: Buffer,
    private readonly rangeEnd: Buffer,
    private readonly handlers: WatchHandlers,
  ) {}

  start(fromRevision: number): void {
    this.nextRevision = fromRevision;
    this.open();
  }

  /** Why the watch is down, once it has been down for longer than `graceMs`. */
  problem(now: number, graceMs: number): string | undefined {
    if (this.established || now - this.downSince <= graceMs) return undefined;
    return `the etcd watch is down: ${this.lastError}`;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.stream?.cancel();
    this.stream = undefined;
  }

  private open(): void {
    if (this.closed) return;
    const stream = this.connection.openWatch(this.attempt);
    this.stream = stream;
    stream.on('data', (r: IWatchResponse) => this.receive(stream, r));
    stream.on('error', (err: Error) => this.reconnect(stream, err.message));
    stream.on('end', () => this.reconnect(stream, 'the watch stream ended'));
    // progress_notify: etcd's timed progress notifications travel with the events, in order
    stream.write({ create_request: { key: this.key, range_end: this.rangeEnd, start_revision: this.nextRevision, progress_notify: true } });
  }

  private receive(stream: WatchStream, r: IWatchResponse): void {
    if (stream !== this.stream) return;
    if (r.compact_revision !== '0') {
      this.close();
      this.handlers.lost(`etcd compacted revision ${r.compact_revision}, past revision ${this.nextRevision} this process's watch had to resume from`);
      return;
    }
    if (r.canceled) {
      this.reconnect(stream, r.cancel_reason || 'etcd canceled the watch');
      return;
    }
    if (r.created) {
      this.established = true;
      this.failures = 0;
      return;
    }
    // A requested progress notification (watch id -1) is never asked for: before etcd 3.4.31 it
    // is sent beside the event queue with the store's revision and can overtake events (etcd#15220).
    if (r.watch_id === '-1') return;
    if (r.events.length === 0) {
      // a timed progress notification: sent through the watcher's own queue, so it is exact
      const revision = Number(r.header.revision);
      if (revision < this.nextRevision) return;
      this.nextRevision = revision + 1;
      this.handlers.changes([], revision);
      return;
    }
    // the header of a catching-up response names the store's revision, not how far it got
    const last = Number(r.events[r.events.length - 1].kv.mod_revision);
    this.nextRevision = last + 1;
    this.handlers.changes(r.events, last);
  }

  private reconnect(stream: WatchStream, reason: string): void {
    if (stream !== this.stream || this.closed) return;
    this.stream = undefined;
    stream.cancel();
    if (this.established) {
      this.established = false;
      this.downSince = Date.now();
    }
    this.lastError = reason;
    this.attempt++;
    const delay = Math.min(50 * 2 ** this.failures++, maxBackoffMs);
    this.timer = setTimeout(() => this.open(), delay);
  }
}
