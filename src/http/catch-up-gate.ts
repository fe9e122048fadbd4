/**
 * A new watch's catch-up (its initial events, or the changes since its resourceVersion) written as
 * the client takes it, like a list's body, rather than in one write: a large collection never sits
 * whole in the socket's buffer, and never counts against the connection's output budget at once.
 * Live batches the hub sends meanwhile wait behind it, in order, and count as buffered, so the
 * hub's bound on a stream's backlog covers them too.
 */
import type { Frame, WatchSink } from '../watch/watch-hub.js';

/** A transport's sink, which also tells when its client has taken enough to be written more. */
export interface PacedSink extends WatchSink {
  /** resolves true once the stream has room for another batch, false if it closed first */
  room(): Promise<boolean>;
  /** bytes per catch-up batch */
  readonly batchBytes: number;
}

export class CatchUpGate implements WatchSink {
  /** live batches waiting for the catch-up to be written; undefined once it is */
  private held: Array<readonly Frame[]> | undefined = [];
  private heldBytes = 0;
  private closed = false;
  private stop: (() => void) | undefined;
  private readonly stopped = new Promise<false>((resolve) => { this.stop = () => resolve(false); });

  constructor(private readonly sink: PacedSink) {}

  write(frames: readonly Frame[]): void {
    if (this.closed) return;
    if (!this.held) { this.sink.write(frames); return; }
    this.held.push(frames);
    for (const f of frames) this.heldBytes += f.length;
  }

  bufferedBytes(): number {
    return this.sink.bufferedBytes() + this.heldBytes;
  }

  end(): void {
    this.close();
    this.sink.end();
  }

  abort(): void {
    this.close();
    this.sink.abort();
  }

  /** Writes the catch-up in batches as the client takes them, then whatever the hub sent meanwhile. */
  async catchUp(frames: readonly Frame[]): Promise<void> {
    let batch: Frame[] = [];
    let bytes = 0;
    for (let i = 0; i < frames.length; i++) {
      batch.push(frames[i]);
      bytes += frames[i].length;
      if (bytes < this.sink.batchBytes && i < frames.length - 1) continue;
      if (!(await Promise.race([this.sink.room(), this.stopped])) || this.closed) return;
      this.sink.write(batch);
      batch = [];
      bytes = 0;
    }
    if (this.closed) return;
    const held = this.held ?? [];
    this.held = undefined;
    this.heldBytes = 0;
    for (const b of held) this.sink.write(b);
  }

  private close(): void {
    this.closed = true;
    this.held = undefined;
    this.heldBytes = 0;
    this.stop?.();
  }
}
