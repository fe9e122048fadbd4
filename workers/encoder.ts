/**
 * The encoder pool's task (piscina): encodes a batch of committed objects into their protobuf
 * envelopes, once each, off the front thread, and transfers them back in one buffer.
 */
import { Piscina } from 'piscina';
import { apiVersionOf, type KindDeclaration } from '../src/api/kind.js';
import { builtinKinds } from '../src/api/registry.js';
import { packEnvelopes } from '../src/codec/envelope-batch.js';
import { encodeEnvelope } from '../src/codec/protobuf.js';

export interface EncodeTask {
  /** per object: the resource it belongs to, and its served JSON */
  resources: string[];
  objects: string[];
}

const byResource = new Map<string, KindDeclaration>(builtinKinds.map((k) => [k.resource, k]));

export default function encode(task: EncodeTask): unknown {
  const envelopes = task.objects.map((json, i) => {
    const kind = byResource.get(task.resources[i]);
    if (!kind) throw new Error(`no kind serves ${task.resources[i]}`);
    return encodeEnvelope(JSON.parse(json) as Record<string, unknown>, kind.schema, { apiVersion: apiVersionOf(kind), kind: kind.kind });
  });
  return Piscina.move(packEnvelopes(envelopes));
}
