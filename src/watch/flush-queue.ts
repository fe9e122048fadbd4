/**
 * The streams that have frames waiting, written in the order they got them, a time slice per
 * macrotask. A stream is queued at most once: changes that reach it while it waits join its one
 * write, so under load each stream is written less often but never later — a change waits for one
 * pass over the waiting streams at most, not for the pass before it to finish (one pass per
 * batch would make a change committed during a pass wait that pass and its own). Between slices
 * the event loop serves requests, so fan-out never starves writes.
 *
 * An entry may also be a group of streams given the same frames (`WatcherGroup`): its pass over
 * its members may span slices, resumed first in line, and counts as written once it is over.
 */
import type { FrameRuns } from './frames.js';

/** What the queue holds: a stream, or a group of them, in line at most once. */
export interface Flushable {
  /** waiting in the queue for its turn */
  queued: boolean;
}

/**
 * Writes one entry, counting the writes it starts off `slice.writes`; returns false when the
 * slice ran out (of time or writes) before the entry was done: it is called again, first in
 * line, in the next slice.
 */
export type FlushEntry<T> = (item: T, runs: FrameRuns, slice: Slice) => boolean;

/**
 * How long one slice may run. Each stream's bytes reach its socket in a tick after the slice
 * (HTTP uncorks there, TLS encrypts), which costs a few times the slice's own time; short slices
 * keep the loop turning, so encoded batches and requests are taken up between them. Measured at
 * 1,000 watchers (JSON, Go clients): 1 ms slices, p50 66-75 ms; 4 ms slices, p50 104-136 ms
 * (loop turns of ~20 ms); 0.5 ms, p99 2 s. At 5,000 watchers a bound by time served better
 * than 64 streams per slice (82-107k against 36-70k events/s).
 */
const sliceMs = 1;
/**
 * Writes one slice may start. Their native work (TLS, the system call: ~30 µs a write) runs in
 * the ticks after the slice, unseen by its clock: once the per-stream JavaScript got cheap (groups),
 * a 1 ms slice started ~180 writes, loop turns grew to ~6 ms, and the encoder pool's replies
 * waited 26-62 ms on average to be taken up (p50 83-142 ms at 1,000 watchers; with 24 writes a
 * slice: pool replies in 2 ms, p50 27 ms).
 */
export const writesPerSlice = 24;
/** streams (or a group's members) flushed between two looks at the clock */
export const clockEvery = 8;
/** merged runs kept for the streams still to come, at most (the queue empties far sooner, normally) */
const maxRuns = 4096;

/** What is left of a slice: its end (`performance.now()`) and the writes it may still start. */
export interface Slice {
  until: number;
  writes: number;
}

export class FlushQueue<T extends Flushable> {
  /**
   * The waiting streams, `streams[head … tail)`. One array, reused pass after pass (slots cleared
   * as they are written): an array grown anew each pass lived through it and was promoted.
   */
  private readonly streams: Array<T | undefined> = [];
  private head = 0;
  private tail = 0;
  /** streams queued, and flushed, since the start: positions in the queue's history */
  private queuedCount = 0;
  private flushedCount = 0;
  /** callbacks waiting for the streams queued before them to be flushed, in order of position */
  private waiting: Array<{ at: number; run: () => void }> = [];
  private scheduled = false;
  /** the entry first in line ran out of time in the last slice and continues its pass */
  private resuming = false;
  /** merged frames of the pass under way, shared by every stream given the same run */
  private readonly runs: FrameRuns = new Map();
  /** the slice under way (one object for the queue's life: a slice runs per loop turn) */
  private readonly current: Slice = { until: 0, writes: 0 };

  /** `flush` writes one entry's frames; `runs` lets streams share the frames merged for them. */
  constructor(private readonly flush: FlushEntry<T>) {}

  /** Queues a stream (or group) that was given frames (once, however many it gets before its turn). */
  add(w: T): void {
    if (w.queued) return;
    w.queued = true;
    this.streams[this.tail++] = w;
    this.queuedCount++;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.slice);
    }
  }

  /** Runs `fn` once every stream queued so far has been written (at once if none waits). */
  whenFlushed(fn: () => void): void {
    if (this.flushedCount >= this.queuedCount) fn();
    else this.waiting.push({ at: this.queuedCount, run: fn });
  }

  /** Nothing is waiting to be written. */
  get idle(): boolean {
    return this.flushedCount >= this.queuedCount;
  }

  private readonly slice = (): void => {
    this.scheduled = false;
    const runs = this.runs;
    if (runs.size >= maxRuns) runs.clear();
    const slice = this.current;
    slice.until = performance.now() + sliceMs;
    slice.writes = writesPerSlice;
    const streams = this.streams;
    pass: while (this.head < this.tail && slice.writes > 0) {
      const end = Math.min(this.head + clockEvery, this.tail);
      while (this.head < end && slice.writes > 0) {
        const w = streams[this.head] as T;
        // frames given from here on need another turn (a resumed group cleared this when it began)
        if (!this.resuming) w.queued = false;
        this.resuming = false;
        let done = true;
        try {
          done = this.flush(w, runs, slice);
        } finally {
          // counted even when the write threw: a failed stream must not hold back every later whenFlushed
          if (done) {
            streams[this.head++] = undefined;
            this.flushedCount++;
          }
        }
        if (!done) {
          this.resuming = true;
          break pass;
        }
      }
      if (performance.now() >= slice.until) break;
    }
    if (this.head === this.tail) {
      this.head = this.tail = 0;
      this.runs.clear();
    } else if (this.head > 4096 && this.head * 2 > this.tail) {
      // move the waiting part to the front once the written prefix dominates: amortized O(1) per stream
      streams.copyWithin(0, this.head, this.tail);
      streams.fill(undefined, this.tail - this.head, this.tail);
      this.tail -= this.head;
      this.head = 0;
    }
    let due = 0;
    while (due < this.waiting.length && this.waiting[due].at <= this.flushedCount) due++;
    if (due > 0) {
      const ready = this.waiting.slice(0, due);
      this.waiting = this.waiting.slice(due);
      for (const r of ready) r.run();
    }
    if (this.head < this.tail && !this.scheduled) {
      this.scheduled = true;
      setImmediate(this.slice);
    }
  };
}
