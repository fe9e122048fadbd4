/**
 * The encoder pool's task (piscina): encodes a batch of committed changes once per shape their
 * watchers want (JSON lines, protobuf frames, CBOR items; Tables, PartialObjectMetadata, other
 * versions), off the front thread, into this thread's shared slabs (src/watch/slabs.ts), and
 * answers where each frame is.
 */
import { workerData } from 'node:worker_threads';
import { encodeBatch, type EncodedBatch } from '../src/watch/encode-batch.js';
import type { EncodeTask } from '../src/watch/encode-task.js';
import { SlabWriter } from '../src/watch/slabs.js';

// piscina hands its workers the pool's workerData as the thread's own; reading it from piscina's
// module would load the pool side of piscina in this thread as well (~0.9 MiB of heap)
const slabs = new SlabWriter((workerData as { slabBytes?: number } | undefined)?.slabBytes ?? 1 << 20);

export default function encode(task: EncodeTask): EncodedBatch {
  return encodeBatch(task, slabs);
}
