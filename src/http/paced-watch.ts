/**
 * A watch stream written as its client takes it, never faster: its catch-up (initial events, or
 * the changes since its resourceVersion) is built batch by batch as the socket has room, and the
 * live batches the hub sends queue behind it whenever the socket lags. The queue holds the hub's
 * shared frames, so a lagging client costs references, not copies; the socket itself never holds
 * more than a window, so a client that resumes after a stall is fed window by window, never
 * handed its whole backlog in one write (which Node would copy, and TLS encrypt, at once). Queued
 * bytes count as buffered for the hub's bound and as unsent for the output budget. Frames in the
 * encoder pool's shared slabs are pinned from the moment they are queued until the socket took
 * them (or the stream is gone); the slab table may cut a stream that pins a slab too long.
 */
import type { Frame } from '../watch/frames.js';
import { SlabPins, type SlabHolder, type SlabTable } from '../watch/slabs.js';
import type { WatchSink } from '../watch/watcher.js';

/** A transport's sink, which also tells whether its socket has room for another batch. */
export interface PacedSink extends WatchSink {
  /** writes a batch; `done`, if given, is called once the socket took it or the stream is gone */
  write(frames: readonly Frame[], done?: () => void): void;
  hasRoom(): boolean;
  /** resolves true once the socket has room, false if the stream closed first */
  room(): Promise<boolean>;
  /** bytes per batch written from the catch-up or the queue */
  readonly batchBytes: number;
  /** counts (negative: uncounts) bytes queued in user space for this stream as unsent */
  hold(bytes: number): void;
}

/**
 * A catch-up built a batch at a time: up to about `maxBytes` of frames, synchronously or once the
 * encoder pool has them (pinned for `holder`, the stream); an empty batch when it is done.
 */
export type CatchUpBatches = (maxBytes: number, holder: SlabHolder) => Frame[] | Promise<Frame[]>;

/** A catch-up of frames built one at a time, batched. */
export function batchesOf(frames: Iterable<Frame>): CatchUpBatches {
  const it = frames[Symbol.iterator]();
  return (maxBytes) => {
    const batch: Frame[] = [];
    let bytes = 0;
    while (bytes < maxBytes) {
      const next = it.next();
      if (next.done) break;
      batch.push(next.value);
      bytes += next.value.length;
    }
    return batch;
  };
}

function bytesOf(frames: readonly Frame[]): number {
  let bytes = 0;
  for (const f of frames) bytes += f.length;
  return bytes;
}

export class PacedWatch implements WatchSink, SlabHolder {
  readonly slabPins = new SlabPins();
  /** the catch-up's batches still to build; undefined once all are written */
  private catchUp: CatchUpBatches | undefined;
  /** live batches waiting for the catch-up or for room, from `head` on */
  private queue: Array<readonly Frame[]> = [];
  private head = 0;
  private queuedBytes = 0;
  private pumping = false;
  private closed = false;
  private stop: (() => void) | undefined;
  private readonly stopped = new Promise<false>((resolve) => { this.stop = () => resolve(false); });

  constructor(private readonly sink: PacedSink, catchUp: Iterable<Frame> | CatchUpBatches, private readonly slabs?: SlabTable) {
    this.catchUp = typeof catchUp === 'function' ? catchUp : batchesOf(catchUp);
  }

  get eventPerFrame(): boolean { return this.sink.eventPerFrame === true; }

  /** Starts writing the catch-up. */
  start(): void {
    void this.pump();
  }

  write(frames: readonly Frame[]): void {
    if (this.closed || frames.length === 0) return;
    this.slabs?.retain(frames, this);
    if (!this.pumping && this.catchUp === undefined && this.head === this.queue.length && this.sink.hasRoom()) {
      // the common case, a live batch to a stream that keeps up: straight to the socket, no queue
      this.writePinned(frames);
      return;
    }
    this.queue.push(frames);
    const bytes = bytesOf(frames);
    this.queuedBytes += bytes;
    this.sink.hold(bytes);
    void this.pump();
  }

  bufferedBytes(): number {
    return this.sink.bufferedBytes() + this.queuedBytes;
  }

  end(): void {
    this.close();
    this.sink.end();
  }

  abort(): void {
    this.close();
    this.sink.abort();
    // the socket is destroyed: whatever it had not taken it never will
    this.slabs?.releaseAll(this);
  }

  /** The slab table cuts a stream that pins a slab too long: it is ended as a slow client is. */
  cut(): void {
    this.abort();
  }

  /** Writes the next batch whenever the socket has room; synchronous while it has and nothing is being encoded. */
  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (!this.closed && (this.catchUp || this.head < this.queue.length)) {
        if (!this.sink.hasRoom() && (!(await Promise.race([this.sink.room(), this.stopped])) || this.closed)) return;
        if (this.catchUp) {
          let batch: Frame[];
          try {
            // built here, or by the pool (awaited: only then does this stream wait)
            const built = this.catchUp(this.sink.batchBytes, this);
            batch = built instanceof Promise ? await built : built;
          } catch {
            // the pool could not encode the catch-up: the client resumes or relists
            this.abort();
            return;
          }
          if (batch.length === 0) { this.catchUp = undefined; continue; }
          // closed meanwhile: what the pool pinned for this stream goes with it
          if (this.closed) { this.slabs?.release(batch, this); return; }
          this.writePinned(batch);
        } else {
          this.writePinned(this.nextQueued());
        }
      }
    } finally {
      this.pumping = false;
    }
  }

  /**
   * Writes frames this stream has pinned (live ones when queued, catch-up ones as the pool
   * handed them over); their slabs are let go once the socket took them.
   */
  private writePinned(frames: readonly Frame[]): void {
    const slabs = this.slabs;
    this.sink.write(frames, slabs && (() => slabs.release(frames, this)));
  }

  /** Queued live batches, merged up to a batch (at least one). */
  private nextQueued(): Frame[] {
    const batch: Frame[] = [];
    let bytes = 0;
    while (this.head < this.queue.length && (batch.length === 0 || bytes < this.sink.batchBytes)) {
      const frames = this.queue[this.head++];
      for (const f of frames) batch.push(f);
      bytes += bytesOf(frames);
    }
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      // drop the sent prefix once it dominates, keeping the queue amortized O(1)
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    this.queuedBytes -= bytes;
    this.sink.hold(-bytes);
    return batch;
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.catchUp = undefined;
    // queued frames never reach the socket
    for (let i = this.head; i < this.queue.length; i++) this.slabs?.release(this.queue[i], this);
    this.queue = [];
    this.head = 0;
    this.sink.hold(-this.queuedBytes);
    this.queuedBytes = 0;
    // frames in a socket write stay pinned until it took them
    this.slabs?.finish(this);
    this.stop?.();
  }
}
