/**
 * Property: whatever body a client sends in any encoding the server decodes (JSON, YAML, CBOR
 * with the CBOR gate on, Protobuf behind its `k8s\0` prefix), to create or to update, the answer
 * is a 2xx or a 4xx Status, what was stored reads back as answered and passes validation again,
 * and the server stays up.
 */
import fc from 'fast-check';
import { after, before, describe, it } from 'node:test';
import { secretKind } from '../../src/api/core/secret.js';
import { serviceAccountKind } from '../../src/api/core/service-account.js';
import { eventKind } from '../../src/api/events/event.js';
import type { KindDeclaration } from '../../src/api/kind.js';
import { encodeCbor } from '../../src/codec/cbor.js';
import { encodeEnvelope } from '../../src/codec/proto/encode.js';
import { toYaml } from '../../src/codec/yaml.js';
import { createNamespace } from '../support/api.js';
import { checkAlive, checkAnswer, closeConnections, checkRoundTrip, collectionOf, fuzzParams, objectArb, send } from '../support/fuzz.js';
import { startServer, type TestServer } from '../support/server.js';

type KindName = 'ServiceAccount' | 'Secret' | 'Event';
const kinds: Record<KindName, KindDeclaration> = { ServiceAccount: serviceAccountKind, Secret: secretKind, Event: eventKind };
const encodings = ['json', 'yaml', 'cbor', 'protobuf'] as const;
type Encoding = (typeof encodings)[number];
const contentTypes: Record<Encoding, string> = {
  json: 'application/json', yaml: 'application/yaml', cbor: 'application/cbor', protobuf: 'application/vnd.kubernetes.protobuf',
};
const protobufPrefix = Buffer.from('k8s\0', 'latin1');

/** The object in the encoding; undefined when the encoder itself refuses it (protobuf needs the schema's types). */
function encode(encoding: Encoding, kind: KindName, obj: Record<string, unknown>): Buffer | undefined {
  switch (encoding) {
    case 'json': return Buffer.from(JSON.stringify(obj));
    case 'yaml': return Buffer.from(toYaml(obj));
    case 'cbor': return encodeCbor(obj, kinds[kind].schema);
    case 'protobuf':
      try {
        return encodeEnvelope(obj, kinds[kind].schema, { apiVersion: String(obj.apiVersion), kind });
      } catch {
        return undefined;
      }
  }
}

/** Byte edits of a valid encoding: overwrite, drop or cut, at positions taken modulo its length. */
const editsArb = fc.array(fc.tuple(fc.constantFrom('set', 'drop', 'cut'), fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 4 });

function mutate(bytes: Buffer, edits: ReadonlyArray<readonly [string, number, number]>): Buffer {
  let out = Buffer.from(bytes);
  for (const [edit, at, value] of edits) {
    if (out.length === 0) break;
    const i = at % out.length;
    if (edit === 'set') out[i] = value;
    else if (edit === 'drop') out = Buffer.concat([out.subarray(0, i), out.subarray(i + 1)]);
    else out = out.subarray(0, i);
  }
  return out;
}

const kindArb = fc.constantFrom<KindName>('ServiceAccount', 'Secret', 'Event');

describe('fuzz: body decoders', () => {
  let server: TestServer;
  const ns = 'fuzz';

  before(async () => {
    server = await startServer({ args: ['--feature-gates', 'CBORServingAndStorage=true'] });
    await createNamespace(server, ns);
  });
  after(async () => { closeConnections(server); await server.dispose(); });

  for (const encoding of encodings) {
    it(`${encoding}: near-valid objects, created and updated`, async () => {
      await fc.assert(fc.asyncProperty(kindArb.chain((k) => fc.tuple(fc.constant(k), objectArb(k))), fc.boolean(), async ([kind, obj], update) => {
        const body = encode(encoding, kind, obj);
        if (!body) return;
        const collection = collectionOf(kind, ns);
        const name = String((obj.metadata as { name: string }).name);
        const path = update ? `${collection}/${encodeURIComponent(name)}` : collection;
        const what = `${update ? 'PUT' : 'POST'} ${encoding} ${kind} ${JSON.stringify(obj).slice(0, 300)}`;
        const res = await send(server, path, { method: update ? 'PUT' : 'POST', body, headers: { 'content-type': contentTypes[encoding] } });
        checkAnswer(res, what);
        await checkRoundTrip(server, collection, res, what);
      }), fuzzParams);
      await checkAlive(server);
    });

    it(`${encoding}: damaged encodings and arbitrary bytes`, async () => {
      const prefix = encoding === 'protobuf' ? protobufPrefix : encoding === 'cbor' ? Buffer.from([0xd9, 0xd9, 0xf7]) : Buffer.alloc(0);
      const bodyArb = fc.oneof(
        kindArb.chain((k) => fc.tuple(fc.constant(k), objectArb(k), editsArb)).map(([kind, obj, edits]) => {
          const valid = encode(encoding, kind, obj);
          return valid ? mutate(valid, edits) : Buffer.alloc(0);
        }),
        fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.concat([prefix, b])),
        fc.string({ maxLength: 64 }).map((s) => Buffer.from(s)),
      );
      await fc.assert(fc.asyncProperty(bodyArb, kindArb, async (body, kind) => {
        const collection = collectionOf(kind, ns);
        const what = `POST ${encoding} ${kind} ${body.toString('hex').slice(0, 300)}`;
        const res = await send(server, collection, { method: 'POST', body, headers: { 'content-type': contentTypes[encoding] } });
        checkAnswer(res, what);
        await checkRoundTrip(server, collection, res, what);
      }), fuzzParams);
      await checkAlive(server);
    });
  }
});
