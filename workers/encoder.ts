/**
 * The encoder pool's task (piscina): encodes a batch of committed objects into their protobuf
 * envelopes, once each, off the front thread, and transfers them back in one buffer.
 */
import { Piscina } from 'piscina';
import { packEnvelopes } from '../src/codec/envelope-batch.js';
import type { EncodeTask } from '../src/codec/encode-task.js';
import { encodeEnvelope } from '../src/codec/proto/encode.js';

export default function encode(task: EncodeTask): unknown {
  const envelopes = task.objects.map((json, i) => {
    const kind = task.kinds[task.resources[i]];
    return encodeEnvelope(JSON.parse(json) as Record<string, unknown>, kind.schema, { apiVersion: kind.apiVersion, kind: kind.kind });
  });
  return Piscina.move(packEnvelopes(envelopes));
}
