/** What the watch hub asks an encoder worker to do: a batch of stored objects and the kinds they are of. */
import type { StructSchema } from '../api/schema.js';

export interface EncodeTask {
  /** per object: the storage table it belongs to, and its served JSON */
  resources: string[];
  objects: string[];
  /** per storage table in the batch: the schema and type of its objects */
  kinds: Record<string, { schema: StructSchema; apiVersion: string; kind: string }>;
}
