/**
 * Shared byte slabs for watch frames: encoder workers write frames into SharedArrayBuffers, the
 * front thread wraps slices as Buffers (no copy) and writes them to sockets. Each slab starts with
 * two Int32s, its state and generation, read and written with Atomics:
 *
 *   FREE ──worker takes it (CAS), generation+1──► FILLING ──worker moves on when full──► SEALED
 *    ▲                                                                                   │
 *    └──── front thread: the worker reported it sealed AND no stream holds a frame of it ◄─┘
 *
 * The front thread frees a slab only after a task result told it the slab was sealed: every
 * frame of the slab then belongs to results already received, and those are pinned on arrival,
 * so a slab can never be reused under frames still on their way to a stream. Streams pin the
 * slabs of the frames they hold (queued or in a socket write) and unpin them when the socket has
 * taken the bytes or the stream is gone. A stream that would pin a slab past the bound of pinned
 * bytes is cut (see `SlabTable.overBound`), so a slow client never holds the slabs of the others.
 */
import { threadId } from 'node:worker_threads';

export const FREE = 0;
export const FILLING = 1;
export const SEALED = 2;
const headerBytes = 8;

/** What a worker tells the front thread about its slabs with each result. */
export interface SlabNews {
  /** slabs created for this result: the front thread learns their memory */
  created: Array<{ id: number; buffer: SharedArrayBuffer }>;
  /** slabs the worker moved past during this result: free once no stream holds them */
  sealed: number[];
}

/** The worker's side: frames appended to the current slab; a full slab is sealed and a free (or new) one taken. */
export class SlabWriter {
  private readonly slabs: Array<{ id: number; buffer: SharedArrayBuffer; bytes: Uint8Array; state: Int32Array }> = [];
  private current = -1;
  private at = headerBytes;
  private news: SlabNews = { created: [], sealed: [] };

  constructor(private readonly slabBytes: number) {}

  /** Writes a frame; returns its [slab id, offset]. */
  put(frame: string | Uint8Array): [number, number, number] {
    const length = typeof frame === 'string' ? Buffer.byteLength(frame) : frame.length;
    let slab = this.slabs[this.current];
    if (!slab || this.at + length > slab.bytes.length) slab = this.next(length);
    const offset = this.at;
    if (typeof frame === 'string') Buffer.from(slab.buffer).write(frame, offset, 'utf8');
    else slab.bytes.set(frame, offset);
    this.at += length;
    return [slab.id, offset, length];
  }

  /** What changed since the last call. */
  takeNews(): SlabNews {
    const news = this.news;
    this.news = { created: [], sealed: [] };
    return news;
  }

  private next(length: number): (typeof this.slabs)[number] {
    const full = this.slabs[this.current];
    if (full) {
      Atomics.store(full.state, 0, SEALED);
      this.news.sealed.push(full.id);
    }
    const need = headerBytes + length;
    let index = this.slabs.findIndex((s) => s.bytes.length >= need && Atomics.compareExchange(s.state, 0, FREE, FILLING) === FREE);
    if (index < 0) {
      const buffer = new SharedArrayBuffer(Math.max(this.slabBytes, need));
      // ids unique across the pool's threads
      const slab = { id: threadId * 65536 + this.slabs.length, buffer, bytes: new Uint8Array(buffer), state: new Int32Array(buffer, 0, 2) };
      Atomics.store(slab.state, 0, FILLING);
      this.slabs.push(slab);
      this.news.created.push({ id: slab.id, buffer });
      index = this.slabs.length - 1;
    }
    const slab = this.slabs[index];
    Atomics.add(slab.state, 1, 1);
    this.current = index;
    this.at = headerBytes;
    return slab;
  }
}

/** Something that holds frames of slabs and can be made to let go (a watch stream, cut). */
export interface SlabHolder {
  cut(): void;
  /** what it pins, kept on the holder itself */
  readonly slabPins: SlabPins;
}

export interface Slab {
  id: number;
  buffer: SharedArrayBuffer;
  state: Int32Array;
  sealed: boolean;
  /** order of sealing (front thread's count): the oldest pinned slab is cut free first */
  sealedAt: number;
  /** frames of this slab held by streams (and by results being delivered) */
  refs: number;
}

/**
 * The slabs one holder pins, with how many of their frames each. A stream pins one or two slabs
 * at a time, so two short arrays searched in order: pinning and unpinning per write allocate
 * nothing. (A Map per slab keyed by holder, set and deleted on every write, had V8 rebuild tables
 * of a thousand entries: a third of what the front thread promoted to its old space at 1,000
 * watchers, measured with the sampling heap profiler.)
 */
export class SlabPins {
  readonly slabs: Slab[] = [];
  readonly counts: number[] = [];
  /** among the table's holders: from its first pin until it is finished and holds nothing */
  listed = false;
  /** it will pin nothing more (its stream ended); it leaves the table's holders once it holds nothing */
  finished = false;

  /** how many frames of `slab` it holds */
  countOf(slab: Slab): number {
    const i = this.slabs.indexOf(slab);
    return i < 0 ? 0 : this.counts[i];
  }
}

/** The front thread's side: every slab's memory, who holds its frames, and when it is free again. */
export class SlabTable {
  private readonly byId = new Map<number, Slab>();
  private readonly byBuffer = new Map<ArrayBufferLike, Slab>();
  /** who pins frames (see SlabPins.listed): asked only when a slab must be cut free */
  private readonly holders = new Set<SlabHolder>();
  /** bytes of sealed slabs still held: past `maxPinnedBytes`, the holders of the oldest are cut */
  private pinnedBytes = 0;
  private seals = 0;
  /** slabs freed so far (reuse), and streams cut for pinning one */
  readonly counters = { freed: 0, cutHolders: 0 };

  constructor(private readonly maxPinnedBytes: number) {}

  /** Learns a result's news: slabs created (before its frames are read), sealed (after they are pinned). */
  learn(created: SlabNews['created']): void {
    for (const { id, buffer } of created) {
      const slab: Slab = { id, buffer, state: new Int32Array(buffer, 0, 2), sealed: false, sealedAt: 0, refs: 0 };
      this.byId.set(id, slab);
      this.byBuffer.set(buffer, slab);
    }
  }

  seal(ids: readonly number[]): void {
    for (const id of ids) {
      const slab = this.byId.get(id);
      if (!slab) continue;
      slab.sealed = true;
      slab.sealedAt = ++this.seals;
      if (slab.refs === 0) this.free(slab);
      else this.pinnedBytes += slab.buffer.byteLength;
    }
    if (this.pinnedBytes > this.maxPinnedBytes) this.cutOldest();
  }

  /** A frame of a slab, as a Buffer over the shared memory (no copy). */
  frame(id: number, offset: number, length: number): Buffer {
    const slab = this.byId.get(id);
    if (!slab) throw new Error(`unknown slab ${id}`);
    return Buffer.from(slab.buffer, offset, length);
  }

  /** Pins slabs by id, once per id listed (a result's frames until they are handed out). */
  pin(ids: readonly number[]): void {
    for (const id of ids) {
      const slab = this.byId.get(id);
      if (slab) slab.refs++;
    }
  }

  unpin(ids: readonly number[]): void {
    for (const id of ids) {
      const slab = this.byId.get(id);
      if (slab) this.unref(slab, 1);
    }
  }

  /** Pins the slabs of `frames` for `holder` (frames of no slab are skipped). */
  retain(frames: readonly (string | Uint8Array)[], holder: SlabHolder | undefined): void {
    this.eachRun(frames, holder, 1);
  }

  release(frames: readonly (string | Uint8Array)[], holder: SlabHolder | undefined): void {
    this.eachRun(frames, holder, -1);
    if (holder) this.unlistIfDone(holder.slabPins, holder);
  }

  /**
   * Pins (`sign` 1) or unpins (-1) each run of consecutive frames of one slab (a batch's frames
   * mostly share one) at once. A loop, not a callback per run: this runs twice per stream write.
   */
  private eachRun(frames: readonly (string | Uint8Array)[], holder: SlabHolder | undefined, sign: 1 | -1): void {
    let buffer: ArrayBufferLike | undefined;
    let slab: Slab | undefined;
    let n = 0;
    for (let i = 0; i <= frames.length; i++) {
      const f = i < frames.length ? frames[i] : undefined;
      if (typeof f === 'string') continue;
      if (f === undefined || f.buffer !== buffer) {
        if (slab) {
          if (sign > 0) this.pinRun(slab, n, holder);
          else this.unpinRun(slab, n, holder);
        }
        if (f === undefined) return;
        buffer = f.buffer;
        slab = this.byBuffer.get(buffer);
        n = 0;
      }
      n++;
    }
  }

  private pinRun(slab: Slab, n: number, holder: SlabHolder | undefined): void {
    slab.refs += n;
    if (!holder) return;
    const pins = holder.slabPins;
    const i = pins.slabs.indexOf(slab);
    if (i < 0) {
      pins.slabs.push(slab);
      pins.counts.push(n);
    } else {
      pins.counts[i] += n;
    }
    if (!pins.listed) {
      pins.listed = true;
      this.holders.add(holder);
    }
  }

  private unpinRun(slab: Slab, n: number, holder: SlabHolder | undefined): void {
    if (holder) {
      const pins = holder.slabPins;
      const i = pins.slabs.indexOf(slab);
      // a late callback after the holder let go of everything
      if (i < 0) return;
      const held = pins.counts[i];
      n = Math.min(n, held);
      if (held === n) {
        // swap with the last: order does not matter, and the arrays keep their room
        const last = pins.slabs.length - 1;
        pins.slabs[i] = pins.slabs[last];
        pins.counts[i] = pins.counts[last];
        pins.slabs.pop();
        pins.counts.pop();
      } else {
        pins.counts[i] = held - n;
      }
    }
    this.unref(slab, n);
  }

  /** Everything `holder` still pins (its stream is gone: the socket will not read those bytes). */
  releaseAll(holder: SlabHolder): void {
    const pins = holder.slabPins;
    for (let i = 0; i < pins.slabs.length; i++) this.unref(pins.slabs[i], pins.counts[i]);
    pins.slabs.length = 0;
    pins.counts.length = 0;
    pins.finished = true;
    this.unlistIfDone(pins, holder);
  }

  /** `holder` will pin nothing more: it leaves the holders once its last frames are released. */
  finish(holder: SlabHolder): void {
    holder.slabPins.finished = true;
    this.unlistIfDone(holder.slabPins, holder);
  }

  private unlistIfDone(pins: SlabPins, holder: SlabHolder): void {
    if (pins.listed && pins.finished && pins.slabs.length === 0) {
      pins.listed = false;
      this.holders.delete(holder);
    }
  }

  /** slabs known, how many bytes are pinned after sealing, and by how many holders */
  stats(): { slabs: number; pinnedBytes: number; holders: number } {
    return { slabs: this.byId.size, pinnedBytes: this.pinnedBytes, holders: this.holders.size };
  }

  private unref(slab: Slab, n: number): void {
    slab.refs -= n;
    if (slab.refs === 0 && slab.sealed) {
      this.pinnedBytes -= slab.buffer.byteLength;
      this.free(slab);
    }
  }

  private free(slab: Slab): void {
    slab.sealed = false;
    this.counters.freed++;
    Atomics.store(slab.state, 0, FREE);
  }

  /** Cuts the streams holding the oldest pinned slab (sealed first, still held). */
  private cutOldest(): void {
    let oldest: Slab | undefined;
    for (const slab of this.byId.values()) {
      if (slab.sealed && slab.refs > 0 && (!oldest || slab.sealedAt < oldest.sealedAt)) oldest = slab;
    }
    if (!oldest) return;
    // a scan of every holder, on the overload path only: per-write pinning keeps no index by slab
    for (const holder of [...this.holders]) {
      if (holder.slabPins.countOf(oldest) === 0) continue;
      this.counters.cutHolders++;
      holder.cut();
    }
  }
}
