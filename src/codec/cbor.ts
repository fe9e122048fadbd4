/**
 * CBOR as kube-apiserver 1.32 speaks it (alpha, behind CBORServingAndStorage): every document
 * starts with the self-described CBOR tag (55799: d9 d9 f7); maps have text keys; `bytes` fields
 * (base64 strings in JSON) are CBOR byte strings. The kind's schema says which fields are bytes.
 */
import type { Encoder } from 'cbor-x';
import { setOwn } from '../api/own-member.js';
import type { Schema } from '../api/schema.js';
import { CborError, decodeCborItem } from './cbor-decode.js';
import { cborX } from './libraries.js';

export { CborError } from './cbor-decode.js';

export const selfDescribedTag = Buffer.from([0xd9, 0xd9, 0xf7]);

// plain CBOR: no record extension, no typed-array tags
let encoder: Encoder | undefined;
const plainEncoder = (): Encoder => (encoder ??= new (cborX().Encoder)({ useRecords: false, tagUint8Array: false, variableMapSize: true }));


/** JSON shape → CBOR shape: base64 `bytes` become byte strings. */
function toCborShape(schema: Schema | undefined, value: unknown): unknown {
  if (!schema || value === null || value === undefined) return value;
  switch (schema.type) {
    case 'bytes': return typeof value === 'string' ? Buffer.from(value, 'base64') : value;
    case 'map': {
      if (schema.values.type !== 'bytes' && schema.values.type !== 'struct' && schema.values.type !== 'list') return value;
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) setOwn(out, k, toCborShape(schema.values, v));
      return out;
    }
    case 'list': return Array.isArray(value) ? value.map((v) => toCborShape(schema.items, v)) : value;
    case 'struct': {
      if (typeof value !== 'object') return value;
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        setOwn(out, k, toCborShape(Object.hasOwn(schema.fields, k) ? schema.fields[k] : undefined, v));
      }
      return out;
    }
    default: return value;
  }
}

export function encodeCbor(value: unknown, schema?: Schema): Buffer {
  const body = plainEncoder().encode(toCborShape(schema, value));
  return Buffer.concat([selfDescribedTag, body]);
}

/** Decodes a CBOR document into the JSON shape; the self-described tag is required, as kube-apiserver recognizes CBOR by it. */
export function decodeCbor(bytes: Uint8Array): unknown {
  if (bytes.length < 3 || bytes[0] !== 0xd9 || bytes[1] !== 0xd9 || bytes[2] !== 0xf7) {
    throw new CborError('the body does not begin with the self-described CBOR tag (0xd9d9f7)');
  }
  return decodeCborItem(bytes.subarray(3));
}
