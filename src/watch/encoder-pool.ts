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

export class EncoderPool {
  private readonly pool: Piscina;
  /** objects encoded so far: with N watchers of one encoding this grows by events, not events × N */
  encoded = 0;

  /** `kindOf`: the storage version's declaration of a storage table */
  constructor(workerUrl: URL, maxThreads: number, private readonly kindOf: (table: string) => KindDeclaration | undefined) {
    this.pool = new Piscina({ filename: workerUrl.href, minThreads: 0, maxThreads, idleTimeout: 30_000 });
  }

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
