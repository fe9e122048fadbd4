/**
 * bench/codec: encode and decode N objects in every wire encoding (JSON, YAML, Protobuf, CBOR),
 * beside JSON.stringify / JSON.parse of the same objects in the same run; prints ratios. Then the
 * watch path's thread messages, structured clone against msgpackr (bench/thread-messages.ts).
 * Usage: node dist/bench/codec.js [--objects 10000] [--rounds 5]
 */
import { serviceAccountKind } from '../src/api/core/service-account.js';
import { decodeCbor, encodeCbor } from '../src/codec/cbor.js';
import { decodeEnvelope } from '../src/codec/proto/decode.js';
import { encodeEnvelope } from '../src/codec/proto/encode.js';
import { fromYaml, toYaml } from '../src/codec/yaml.js';
import { flag, summarize, timeRounds } from './support.js';
import { measureThreadMessages } from './thread-messages.js';

const count = flag('objects', 10_000);
const rounds = flag('rounds', 5);
const typeMeta = { apiVersion: 'v1', kind: 'ServiceAccount' };
const schema = serviceAccountKind.schema;

const objects = Array.from({ length: count }, (_, i) => ({
  kind: 'ServiceAccount', apiVersion: 'v1',
  metadata: {
    name: `sa-${i}`, namespace: `team-${i % 20}`, uid: `0e6f6c1e-3d0c-4f5a-9a53-${String(i).padStart(12, '0')}`,
    resourceVersion: String(1000 + i), creationTimestamp: '2026-11-22T00:00:00Z',
    labels: { app: 'web', shard: String(i % 16) }, annotations: { 'orch.io/owner': 'platform' },
    managedFields: [{ manager: 'kubectl-create', operation: 'Update', apiVersion: 'v1', time: '2026-11-22T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {}, 'f:shard': {} } } } }],
  },
  secrets: [{ name: `token-${i}` }, { name: 'registry' }],
  automountServiceAccountToken: false,
}));

interface Codec { name: string; encode(o: Record<string, unknown>): string | Uint8Array; decode(b: string | Uint8Array): unknown }
const codecs: Codec[] = [
  { name: 'JSON.stringify/parse (baseline)', encode: (o) => JSON.stringify(o), decode: (b) => JSON.parse(b as string) },
  { name: 'YAML', encode: (o) => toYaml(o), decode: (b) => fromYaml(b as string) },
  { name: 'Protobuf', encode: (o) => encodeEnvelope(o, schema, typeMeta), decode: (b) => decodeEnvelope(b as Uint8Array, schema).object },
  { name: 'CBOR', encode: (o) => encodeCbor(o, schema), decode: (b) => decodeCbor(b as Uint8Array) },
];

const results = [];
for (const codec of codecs) {
  let encoded: Array<string | Uint8Array> = [];
  const enc = summarize(await timeRounds(rounds, 1, () => { encoded = objects.map((o) => codec.encode(o)); }));
  const dec = summarize(await timeRounds(rounds, 1, () => { for (const b of encoded) codec.decode(b); }));
  const bytes = encoded.reduce((n, b) => n + (typeof b === 'string' ? Buffer.byteLength(b) : b.length), 0);
  results.push({ codec: codec.name, encodeMs: enc, decodeMs: dec, bytesPerObject: Math.round(bytes / count) });
}
const base = results[0];
const messages = await measureThreadMessages(objects, rounds);
const report = {
  scenario: 'codec', objects: count, rounds, results, messages,
  ...Object.fromEntries(results.slice(1).flatMap((r) => [
    [`ratioEncode${r.codec}`, +(r.encodeMs.median / base.encodeMs.median).toFixed(2)],
    [`ratioDecode${r.codec}`, +(r.decodeMs.median / base.decodeMs.median).toFixed(2)],
  ])),
};
console.log(JSON.stringify(report, null, 2));
for (const r of results) {
  console.log(`${r.codec.padEnd(32)} encode ${r.encodeMs.median.toFixed(1).padStart(7)} ms  decode ${r.decodeMs.median.toFixed(1).padStart(7)} ms  ${r.bytesPerObject} B/object  (x${(r.encodeMs.median / base.encodeMs.median).toFixed(2)} / x${(r.decodeMs.median / base.decodeMs.median).toFixed(2)} of JSON)`);
}
for (const m of messages) {
  console.log(`${m.message.padEnd(48)} ${m.bytes} B: structured clone ${m.cloneMs} ms, msgpackr ${m.msgpackrMs} ms per message through a worker (x${m.ratio}; pack alone ${m.packMs} ms)`);
}
