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
export interface SlabHolder { cut(): void }

interface Slab {
  id: number;
  buffer: SharedArrayBuffer;
  state: Int32Array;
  sealed: boolean;
  /** order of sealing (front thread's count): the oldest pinned slab is cut free first */
  sealedAt: number;
  /** frames of this slab held by streams (and by results being delivered) */
  refs: number;
  holders: Map<SlabHolder, number>;
}

/** The front thread's side: every slab's memory, who holds its frames, and when it is free again. */
export class SlabTable {
  private readonly byId = new Map<number, Slab>();
  private readonly byBuffer = new Map<ArrayBufferLike, Slab>();
  /** bytes of sealed slabs still held: past `maxPinnedBytes`, the holders of the oldest are cut */
  private pinnedBytes = 0;
  private seals = 0;
  /** slabs freed so far (reuse), and streams cut for pinning one */
  readonly counters = { freed: 0, cutHolders: 0 };

  constructor(private readonly maxPinnedBytes: number) {}

  /** Learns a result's news: slabs created (before its frames are read), sealed (after they are pinned). */
  learn(created: SlabNews['created']): void {
    for (const { id, buffer } of created) {
      const slab: Slab = { id, buffer, state: new Int32Array(buffer, 0, 2), sealed: false, sealedAt: 0, refs: 0, holders: new Map() };
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
    this.eachRun(frames, (slab, n) => {
      slab.refs += n;
      if (holder) slab.holders.set(holder, (slab.holders.get(holder) ?? 0) + n);
    });
  }

  release(frames: readonly (string | Uint8Array)[], holder: SlabHolder | undefined): void {
    this.eachRun(frames, (slab, n) => {
      if (holder) {
        const held = slab.holders.get(holder);
        // a late callback after the holder let go of everything
        if (held === undefined) return;
        n = Math.min(n, held);
        if (held === n) slab.holders.delete(holder);
        else slab.holders.set(holder, held - n);
      }
      this.unref(slab, n);
    });
  }

  /** Calls `fn` per run of consecutive frames of one slab (a batch's frames mostly share one), with the run's length. */
  private eachRun(frames: readonly (string | Uint8Array)[], fn: (slab: Slab, n: number) => void): void {
    let buffer: ArrayBufferLike | undefined;
    let slab: Slab | undefined;
    let n = 0;
    for (const f of frames) {
      if (typeof f === 'string') continue;
      if (f.buffer !== buffer) {
        if (slab) fn(slab, n);
        buffer = f.buffer;
        slab = this.byBuffer.get(buffer);
        n = 0;
      }
      n++;
    }
    if (slab) fn(slab, n);
  }

  /** Everything `holder` still pins (its stream is gone: the socket will not read those bytes). */
  releaseAll(holder: SlabHolder): void {
    for (const slab of this.byId.values()) {
      const held = slab.holders.get(holder);
      if (held === undefined) continue;
      slab.holders.delete(holder);
      this.unref(slab, held);
    }
  }

  /** slabs known, and how many are pinned after sealing */
  stats(): { slabs: number; pinnedBytes: number } {
    return { slabs: this.byId.size, pinnedBytes: this.pinnedBytes };
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
    for (const holder of [...oldest.holders.keys()]) {
      this.counters.cutHolders++;
      holder.cut();
    }
  }
}
