/**
 * The encoder pool (piscina) as the watch hub uses it: a batch of objects in, their protobuf
 * envelopes out, in the batch's order. Encoding happens off the front thread, once per event.
 */
import { Piscina } from 'piscina';
import { unpackEnvelopes } from '../codec/envelope-batch.js';

export class EncoderPool {
  /** objects encoded so far: with N watchers of one encoding this grows by events, not events × N */
  encoded = 0;

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

  async encode(resources: string[], objects: string[]): Promise<Uint8Array[]> {
    const buffer = (await this.pool.run({ resources, objects })) as ArrayBuffer;
    this.encoded += objects.length;
    return unpackEnvelopes(buffer);
  }

  close(): Promise<void> { return this.pool.destroy(); }
}
