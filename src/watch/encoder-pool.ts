/**
 * The encoder pool (piscina) as the watch hub uses it: a batch of changes and the shapes their
 * watchers want in, the frames out — in the workers' shared slabs, wrapped here as Buffers without
 * copying. A batch's frames stay pinned until the hub has handed them to its streams (`release`).
 * The kinds come from the runtime registry: a task carries the storage kind of a table as data when
 * the workers do not hold its declaration, so a kind registered while the server runs is encoded
 * like a built-in one.
 */
import { Piscina } from 'piscina';
import type { KindDeclaration } from '../api/kind.js';
import { workerKnows, type EncodedBatch } from './encode-batch.js';
import { entryAt, entryInts, indexBases, type EncodeTask, type FrameSlot } from './encode-task.js';
import { SlabTable } from './slabs.js';

/** The storage version's declaration of a storage table. */
export type KindOfTable = (table: string) => KindDeclaration | undefined;

export interface EncoderPoolOptions {
  threads: number;
  /** bytes of one slab (a frame larger than this gets a slab of its own) */
  slabBytes: number;
  /** bytes of sealed slabs streams may keep pinned: past it, the streams holding the oldest are cut */
  maxPinnedBytes: number;
}

/**
 * A worker's answer, received: its new slabs learnt, its frames pinned, then the slabs it sealed
 * freed where no stream holds them (in that order: see slabs.ts).
 */
export function receiveBatch(slabs: SlabTable, task: EncodeTask, result: EncodedBatch): PooledBatch {
  slabs.learn(result.slabs.created);
  const pinned: number[] = [];
  for (let i = 0; i < result.index.length; i += entryInts) if (result.index[i] >= 0) pinned.push(result.index[i]);
  slabs.pin(pinned);
  slabs.seal(result.slabs.sealed);
  return new PooledBatch(task, result.index, slabs, pinned);
}

/** One encoded batch, as the hub reads it. */
export class PooledBatch {
  private readonly bases: number[];
  constructor(task: EncodeTask, private readonly index: Int32Array, private readonly slabs: SlabTable, private readonly pinned: number[]) {
    this.bases = indexBases(task);
  }

  get frames(): number { return this.pinned.length; }

  /** The frame of change `change` in shape `shape` (its position in the task's table) and slot, if encoded. */
  frame(change: number, shape: number, slot: FrameSlot): Buffer | undefined {
    const at = entryAt(this.bases[change], shape, slot);
    const slab = this.index[at];
    return slab < 0 ? undefined : this.slabs.frame(slab, this.index[at + 1], this.index[at + 2]);
  }

  /** The hub has handed the frames to its streams (which pin what they keep). */
  release(): void {
    this.slabs.unpin(this.pinned);
  }
}

/**
 * A worker's young generation, at most. A task's garbage (its batch's parsed objects and frame
 * strings) is gone when the task ends; left to V8, the young generation grew to 8 MiB at 1,000
 * watchers and stayed resident for the server's life. At 3 the worker's heap was 11 MiB instead
 * of 18, at the same latency (1,000 watchers, JSON and a Protobuf + Table mix).
 */
const encoderYoungGenerationMb = 3;

export class EncoderPool {
  /** changes encoded so far: with N watchers of one shape this grows by events, not events × N */
  encoded = 0;
  /** frames encoded so far (changes × shapes × the slots each needs) */
  frames = 0;
  readonly slabs: SlabTable;
  private kindOf: KindOfTable = () => undefined;

  private constructor(private readonly pool: Piscina, options: EncoderPoolOptions) {
    this.slabs = new SlabTable(options.maxPinnedBytes);
  }

  /**
   * Starts every thread now and keeps them for the server's life, each with the task's code
   * loaded: a later build rewriting dist/ cannot change (or remove) the code a running server
   * encodes with.
   */
  static async start(workerUrl: URL, options: EncoderPoolOptions): Promise<EncoderPool> {
    const { threads } = options;
    const pool = new Piscina({
      filename: workerUrl.href, minThreads: threads, maxThreads: threads, idleTimeout: Infinity, workerData: { slabBytes: options.slabBytes },
      resourceLimits: { maxYoungGenerationSizeMb: encoderYoungGenerationMb },
    });
    const encoders = new EncoderPool(pool, options);
    // one empty batch per thread: the least-busy balancer hands concurrent tasks to idle threads,
    // and a thread answers only once it has imported the task module
    await Promise.all(Array.from({ length: threads }, () => encoders.encode({ changes: [], tables: {} })));
    return encoders;
  }

  /** piscina's utilisation: the share of the threads' time spent running tasks since the pool started */
  get utilization(): number { return this.pool.utilization; }

  /** Where the kinds of storage tables are looked up (the runtime registry, once it exists). */
  useKinds(kindOf: KindOfTable): void { this.kindOf = kindOf; }

  /** The storage kind of a table as data for the task, unless the workers hold its declaration. */
  kindData(table: string): EncodeTask['tables'][string]['kind'] {
    const kind = this.kindOf(table);
    if (!kind) throw new Error(`no kind is stored in ${table}`);
    return workerKnows(kind) ? undefined : { group: kind.group, version: kind.version, kind: kind.kind, schema: kind.schema };
  }

  async encode(task: EncodeTask): Promise<PooledBatch> {
    const batch = receiveBatch(this.slabs, task, (await this.pool.run(task)) as EncodedBatch);
    this.encoded += task.changes.length;
    this.frames += batch.frames;
    return batch;
  }

  close(): Promise<void> { return this.pool.destroy(); }
}
