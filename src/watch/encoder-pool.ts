/**
 * The encoder pool (piscina) as the watch hub uses it: a batch of objects in, their protobuf
 * envelopes out, in the batch's order. Encoding happens off the front thread, once per event.
 */
import { Piscina } from 'piscina';
import { unpackEnvelopes } from '../codec/envelope-batch.js';

export class EncoderPool {
  private readonly pool: Piscina;
  /** objects encoded so far: with N watchers of one encoding this grows by events, not events × N */
  encoded = 0;

  constructor(workerUrl: URL, maxThreads: number) {
    this.pool = new Piscina({ filename: workerUrl.href, minThreads: 0, maxThreads, idleTimeout: 30_000 });
  }

  async encode(resources: string[], objects: string[]): Promise<Uint8Array[]> {
    const buffer = (await this.pool.run({ resources, objects })) as ArrayBuffer;
    this.encoded += objects.length;
    return unpackEnvelopes(buffer);
  }

  close(): Promise<void> { return this.pool.destroy(); }
}
