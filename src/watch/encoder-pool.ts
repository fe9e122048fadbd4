/**
 * The encoder pool (piscina) as the watch hub uses it: a batch of objects in, their protobuf
 * envelopes out, in the batch's order. Encoding happens off the front thread, once per event.
 * The kinds come from the runtime registry: each task carries the schemas its batch needs, so a
 * kind registered while the server runs is encoded like a built-in one.
 */
import { Piscina } from 'piscina';
import { apiVersionOf, type KindDeclaration } from '../api/kind.js';
import { unpackEnvelopes } from '../codec/envelope-batch.js';
import type { EncodeTask } from '../codec/encode-task.js';

/** The storage version's declaration of a storage table. */
export type KindOfTable = (table: string) => KindDeclaration | undefined;

export class EncoderPool {
  /** objects encoded so far: with N watchers of one encoding this grows by events, not events × N */
  encoded = 0;
  private kindOf: KindOfTable = () => undefined;

  private constructor(private readonly pool: Piscina) {}

  /**
   * Starts every thread now and keeps them for the server's life, each with the task's code
   * loaded: a later build rewriting dist/ cannot change (or remove) the code a running server
   * encodes with.
   */
  static async start(workerUrl: URL, threads: number): Promise<EncoderPool> {
    const pool = new Piscina({ filename: workerUrl.href, minThreads: threads, maxThreads: threads, idleTimeout: Infinity });
    const encoders = new EncoderPool(pool);
    // one empty batch per thread: the least-busy balancer hands concurrent tasks to idle threads,
    // and a thread answers only once it has imported the task module
    await Promise.all(Array.from({ length: threads }, () => encoders.encode([], [])));
    return encoders;
  }

  /** Where the kinds of storage tables are looked up (the runtime registry, once it exists). */
  useKinds(kindOf: KindOfTable): void { this.kindOf = kindOf; }

  async encode(resources: string[], objects: string[]): Promise<Uint8Array[]> {
    const kinds: EncodeTask['kinds'] = {};
    for (const table of resources) {
      if (kinds[table]) continue;
      const kind = this.kindOf(table);
      if (!kind) throw new Error(`no kind is stored in ${table}`);
      kinds[table] = { schema: kind.schema, apiVersion: apiVersionOf(kind), kind: kind.kind };
    }
    const task: EncodeTask = { resources, objects, kinds };
    const buffer = (await this.pool.run(task)) as ArrayBuffer;
    this.encoded += objects.length;
    return unpackEnvelopes(buffer);
  }

  close(): Promise<void> { return this.pool.destroy(); }
}
