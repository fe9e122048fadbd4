/**
 * Reads a CBOR request body into the JSON data model under kube-apiserver 1.32's decode mode
 * (k8s.io/apimachinery/pkg/runtime/serializer/cbor/internal/modes/decode.go): at most 64 nested
 * levels (tags count), 1024 array elements and 1024 map pairs, text map keys without duplicates,
 * valid UTF-8, no NaN or infinities, no simple values but false, true and null, no bignums;
 * time tags become RFC 3339 strings and other tags stand for their content. Byte strings become
 * base64 strings, the JSON spelling of bytes fields.
 *
 * cbor-x is not used to decode: it resolves the shared-reference tags 28/29 (so a body can be a
 * cycle), constructs globals named by tag 27, renames a `__proto__` key, and has no depth limit.
 * Limits are checked before anything is built, and a `__proto__` key is kept as plain data.
 */

import { setOwn } from '../api/own-member.js';

export class CborError extends Error {}

const maxNestedLevels = 64;
const maxArrayElements = 1024;
const maxMapPairs = 1024;
const int64Max = (1n << 63n) - 1n;
const utf8 = new TextDecoder('utf-8', { fatal: true });

const fail = (message: string): never => { throw new CborError(`cbor: ${message}`); };

class Reader {
  pos = 0;
  private readonly view: DataView;

  constructor(readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  need(n: number): void {
    if (this.bytes.length - this.pos < n) fail('unexpected EOF');
  }

  byte(): number {
    this.need(1);
    return this.bytes[this.pos++];
  }

  /** The argument of an initial byte: a number, a bigint past 2^53, or -1 for indefinite length. */
  argument(info: number): number | bigint {
    if (info < 24) return info;
    const start = this.pos;
    switch (info) {
      case 24: return this.byte();
      case 25: this.need(2); this.pos += 2; return this.view.getUint16(start);
      case 26: this.need(4); this.pos += 4; return this.view.getUint32(start);
      case 27: {
        this.need(8);
        this.pos += 8;
        const v = this.view.getBigUint64(start);
        return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
      }
      case 31: return -1;
      default: return fail(`invalid additional information ${info}`);
    }
  }

  take(n: number): Uint8Array {
    this.need(n);
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
}

/** A length or count that must fit the body (a count larger than what is left cannot be real). */
function length(arg: number | bigint, r: Reader): number {
  if (typeof arg === 'bigint' || arg > r.bytes.length - r.pos) return fail('unexpected EOF');
  return arg;
}

/** The bytes of a (possibly indefinite-length) byte or text string. */
function stringBytes(r: Reader, major: number, arg: number | bigint): Uint8Array {
  if (arg !== -1) return r.take(length(arg, r));
  const chunks: Uint8Array[] = [];
  for (;;) {
    const ib = r.byte();
    if (ib === 0xff) return Buffer.concat(chunks);
    if (ib >> 5 !== major) fail('wrong element type for indefinite-length string');
    const chunk = r.argument(ib & 0x1f);
    if (chunk === -1) fail('nested indefinite-length string');
    chunks.push(r.take(length(chunk, r)));
  }
}

function halfFloat(bits: number): number {
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  const sign = bits & 0x8000 ? -1 : 1;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 31) return fraction ? NaN : sign * Infinity;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

function float(r: Reader, info: number): number {
  const start = r.pos;
  let value: number;
  if (info === 25) { r.need(2); r.pos += 2; value = halfFloat((r.bytes[start] << 8) | r.bytes[start + 1]); }
  else if (info === 26) { r.need(4); r.pos += 4; value = new DataView(r.bytes.buffer, r.bytes.byteOffset + start, 4).getFloat32(0); }
  else { r.need(8); r.pos += 8; value = new DataView(r.bytes.buffer, r.bytes.byteOffset + start, 8).getFloat64(0); }
  if (Number.isNaN(value)) fail('floating-point number NaN is not allowed');
  if (!Number.isFinite(value)) fail('floating-point infinity is not allowed');
  return value;
}

/** Go's RFC3339Nano of an epoch-seconds time tag. */
function rfc3339(seconds: number): string {
  const ms = seconds * 1000;
  if (!Number.isFinite(ms) || Math.abs(ms) > 8.64e15) fail('time tag value out of range');
  return new Date(ms).toISOString().replace(/\.?0+Z$/, 'Z').replace(/\.Z$/, 'Z');
}

function item(r: Reader, depth: number): unknown {
  const ib = r.byte();
  const major = ib >> 5;
  const info = ib & 0x1f;
  if (major === 7) {
    switch (info) {
      case 20: return false;
      case 21: return true;
      case 22: return null;
      case 25: case 26: case 27: return float(r, info);
      case 31: return fail('unexpected "break" code');
      case 24: {
        const v = r.byte();
        return v < 32 ? fail(`invalid simple value ${v} for type primitives`) : fail(`simple value ${v} is not recognized`);
      }
      default: return info >= 28 ? fail(`invalid additional information ${info} for type primitives`) : fail(`simple value ${info} is not recognized`);
    }
  }
  const arg = r.argument(info);
  if (arg === -1 && (major === 0 || major === 1 || major === 6)) fail(`invalid additional information 31 for major type ${major}`);
  switch (major) {
    case 0: case 1: {
      const n = BigInt(arg);
      if (n > int64Max) fail(`cannot unmarshal ${major === 0 ? 'positive' : 'negative'} integer into Go value of type int64 (overflows)`);
      return major === 0 ? Number(n) : Number(-1n - n);
    }
    case 2: return Buffer.from(stringBytes(r, 2, arg)).toString('base64');
    case 3:
      try {
        return utf8.decode(stringBytes(r, 3, arg));
      } catch (err) {
        if (err instanceof CborError) throw err;
        return fail('invalid UTF-8 string');
      }
    case 4: case 5: case 6:
      if (depth + 1 > maxNestedLevels) fail(`exceeded max nested level ${maxNestedLevels}`);
      if (major === 4) return array(r, arg, depth + 1);
      if (major === 5) return map(r, arg, depth + 1);
      return tag(r, arg, depth + 1);
    default: return fail(`unknown major type ${major}`);
  }
}

function array(r: Reader, arg: number | bigint, depth: number): unknown[] {
  const out: unknown[] = [];
  const definite = arg !== -1;
  const count = definite ? (typeof arg === 'bigint' || arg > maxArrayElements ? maxArrayElements + 1 : arg) : Infinity;
  if (definite && count > maxArrayElements) fail(`exceeded max number of elements ${maxArrayElements} for CBOR array`);
  for (let i = 0; i < count; i++) {
    if (!definite && r.bytes[r.pos] === 0xff) { r.pos++; break; }
    if (out.length === maxArrayElements) fail(`exceeded max number of elements ${maxArrayElements} for CBOR array`);
    out.push(item(r, depth));
  }
  return out;
}

function map(r: Reader, arg: number | bigint, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const definite = arg !== -1;
  const count = definite ? (typeof arg === 'bigint' || arg > maxMapPairs ? maxMapPairs + 1 : arg) : Infinity;
  if (definite && count > maxMapPairs) fail(`exceeded max number of key-value pairs ${maxMapPairs} for CBOR map`);
  for (let i = 0; i < count; i++) {
    if (!definite && r.bytes[r.pos] === 0xff) { r.pos++; break; }
    if (i === maxMapPairs) fail(`exceeded max number of key-value pairs ${maxMapPairs} for CBOR map`);
    const keyStart = r.pos;
    const keyMajor = (r.bytes[keyStart] ?? 0) >> 5;
    const key = item(r, depth);
    if (keyMajor !== 3 || typeof key !== 'string') fail(`invalid map key type: ${['positive integer', 'negative integer', 'byte string', 'UTF-8 text string', 'array', 'map', 'tag', 'primitives'][keyMajor]}`);
    const k = key as string;
    if (Object.hasOwn(out, k)) fail(`found duplicate map key ${JSON.stringify(k)} at map element index ${i}`);
    setOwn(out, k, item(r, depth));
  }
  return out;
}

function tag(r: Reader, number: number | bigint, depth: number): unknown {
  if (number === 2 || number === 3) fail('bignum tags are not allowed');
  const content = item(r, depth);
  if (number === 0) return typeof content === 'string' ? content : fail('tag number 0 must be followed by text string');
  if (number === 1) return typeof content === 'number' ? rfc3339(content) : fail('tag number 1 must be followed by integer or floating-point number');
  // any other tag (self-described CBOR, expected encodings, shared references, ...) stands for its content
  return content;
}

/** Decodes exactly one data item (after the self-described tag, which counts as one level). */
export function decodeCborItem(bytes: Uint8Array): unknown {
  const r = new Reader(bytes);
  const value = item(r, 1);
  if (r.pos < bytes.length) fail(`${bytes.length - r.pos} bytes of extraneous data starting at index ${r.pos}`);
  return value;
}
