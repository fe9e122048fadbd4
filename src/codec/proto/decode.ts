/**
 * Reading Kubernetes' protobuf wire format with protobufjs' Reader, field by field against the
 * kind's message plan (message-types.ts). protobufjs' generated decoders are not used because
 * they do not check wire types, which gogo rejects ("wrong wireType"), and name no field in their
 * errors; this walker keeps both, with the field's path.
 *
 * Decoding leaves out what Go's JSON encoding leaves out (omitempty strings, numbers, lists, maps;
 * a zero Time is null) and keeps nested messages, `{}` when empty, as Go writes a struct — so a
 * client's protobuf body and its JSON body decode to the same object. Unknown fields are skipped.
 */
import type * as protobuf from 'protobufjs';
import { setOwn } from '../../api/own-member.js';
import type { Schema, StructSchema } from '../../api/schema.js';
import { s } from '../../api/schema/builtin-structural.js';
import { internalStructOf } from '../../api/schema/to-internal.js';
import { parseJson } from '../json.js';
import { protobufjs } from '../libraries.js';
import { protobufMagic } from './encode.js';
import { ProtobufError } from './errors.js';
import { planOf } from './message-types.js';
import { civilTime, goZeroTimeSeconds, maxTimeSeconds } from './time.js';

type Reader = protobuf.Reader;

const VARINT = 0;
const FIXED64 = 1;
const LEN = 2;
const FIXED32 = 5;
const wireTypeNames = ['varint', 'fixed64', 'length-delimited', 'group start', 'group end', 'fixed32'];

function wireTypeOf(schema: Schema): number {
  return schema.type === 'integer' || schema.type === 'boolean' ? VARINT : LEN;
}

function truncated(r: Reader, what: string): ProtobufError {
  return new ProtobufError(`protobuf data truncated: ${what} at byte ${r.pos} runs past the end of its message (byte ${r.len})`);
}

function wrongWireType(path: string, actual: number, expected: number): ProtobufError {
  return new ProtobufError(`protobuf field ${path} has wire type ${actual} (${wireTypeNames[actual] ?? 'invalid'}), expected ${expected} (${wireTypeNames[expected]})`);
}

function join(path: string, name: string): string {
  return path && name ? `${path}.${name}` : path || name;
}

/** protobufjs' own errors (a varint past the end, or over 10 bytes) in this codec's words. */
function readerError(r: Reader, err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  if (err instanceof RangeError && err.message.startsWith('index out of range')) return truncated(r, 'varint');
  if (err.message === 'invalid varint encoding') return new ProtobufError(`protobuf varint at byte ${r.pos} is longer than 10 bytes`);
  return err;
}

/** A field key; returns it with the field number in its upper bits. */
function tag(r: Reader): number {
  const key = r.uint32();
  if (key < 8) throw new ProtobufError(`protobuf data holds an invalid field key at byte ${r.pos}`);
  return key;
}

function int64(r: Reader): number {
  const v = r.int64() as unknown as number | { toNumber(): number };
  return typeof v === 'number' ? v : v.toNumber();
}

/** A length prefix; returns where the value ends. `path`/`name` name the field in errors. */
function length(r: Reader, path: string, name = ''): number {
  const start = r.pos;
  const n = r.uint32();
  if (n > r.len - r.pos) {
    r.pos = start;
    throw truncated(r, join(path, name));
  }
  return r.pos + n;
}

function skip(r: Reader, wireType: number, number: number): void {
  switch (wireType) {
    case VARINT: r.uint32(); return;
    case LEN: r.pos = length(r, `field ${number}`); return;
    case FIXED64: case FIXED32: {
      const end = r.pos + (wireType === FIXED64 ? 8 : 4);
      if (end > r.len) throw truncated(r, `field ${number}`);
      r.pos = end;
      return;
    }
    default:
      throw new ProtobufError(`protobuf field ${number} at byte ${r.pos} has unsupported wire type ${wireType}`);
  }
}

/** Reads fields into `out` up to the reader's limit, in any order; unknown field numbers are skipped. */
function readFields(r: Reader, schema: StructSchema, path: string, out: Record<string, unknown>): void {
  const plan = planOf(schema);
  while (r.pos < r.len) {
    const key = tag(r);
    const wireType = key & 7;
    const field = plan.byNumber[key >>> 3];
    if (field === undefined) {
      skip(r, wireType, key >>> 3);
      continue;
    }
    const { name, schema: fieldSchema } = field;
    if (fieldSchema.type === 'list') {
      const items = fieldSchema.items;
      if (wireType === LEN && wireTypeOf(items) === VARINT) {
        // a packed run of scalars, which parsers must accept although Kubernetes does not pack
        const saved = r.len;
        r.len = length(r, path, name);
        while (r.pos < r.len) append(out, name, readValue(r, items, VARINT, path, name));
        r.len = saved;
      } else {
        const item = readValue(r, items, wireType, path, name);
        if (item !== undefined) append(out, name, item);
      }
    } else if (fieldSchema.type === 'map') {
      readMapEntry(r, fieldSchema.values, wireType, path, name, (out[name] ??= {}) as Record<string, unknown>);
    } else {
      const v = readValue(r, fieldSchema, wireType, path, name);
      if (!isZero(fieldSchema, v)) out[name] = v;
      else if (out[name] !== undefined) delete out[name]; // a repeated occurrence wins, as in Go
    }
  }
}

function append(out: Record<string, unknown>, name: string, item: unknown): void {
  const list = out[name] as unknown[] | undefined;
  if (list === undefined) out[name] = [item];
  else list.push(item);
}

const stringSchema: Schema = { type: 'string' };

/** One map entry {key = 1; value = 2}; a missing key or value is the zero value, as in Go. */
function readMapEntry(r: Reader, values: Schema, wireType: number, path: string, name: string, map: Record<string, unknown>): void {
  if (wireType !== LEN) throw wrongWireType(join(path, name), wireType, LEN);
  const saved = r.len;
  r.len = length(r, path, name);
  let k = '';
  let v: unknown;
  while (r.pos < r.len) {
    const key = tag(r);
    if (key >>> 3 === 1) k = readValue(r, stringSchema, key & 7, path, name) as string;
    else if (key >>> 3 === 2) v = readValue(r, values, key & 7, path, name);
    else skip(r, key & 7, key >>> 3);
  }
  r.len = saved;
  setOwn(map, k, v ?? zeroValue(values));
}

/** What an absent map value decodes to in Go. */
function zeroValue(schema: Schema): unknown {
  switch (schema.type) {
    case 'string': case 'bytes': return '';
    case 'integer': return 0;
    case 'boolean': return false;
    case 'struct': return {};
    default: return null;
  }
}

/**
 * Values JSON's omitempty (or a zero Time's null) leaves out of a struct. A boolean on the wire is
 * a set pointer (every bool in these types is one), as is a string or integer marked `pointer`, and
 * a struct is never omitted, as in Go.
 */
function isZero(schema: Schema, v: unknown): boolean {
  switch (schema.type) {
    case 'string': return v === '' && !schema.pointer;
    case 'bytes': return v === '';
    case 'integer': return v === 0 && !schema.pointer;
    case 'boolean': case 'struct': return false;
    default: return v === undefined;
  }
}

/** One value of the given schema; `undefined` for a zero time or an empty raw value. */
function readValue(r: Reader, schema: Schema, wireType: number, path: string, name: string): unknown {
  const expected = wireTypeOf(schema);
  if (wireType !== expected) throw wrongWireType(join(path, name), wireType, expected);
  switch (schema.type) {
    case 'integer':
      return schema.format === 'int32' ? r.int32() : int64(r);
    case 'boolean':
      return r.bool();
    case 'string': case 'bytes': {
      const end = length(r, path, name);
      const s = (r.buf as Buffer).toString(schema.type === 'string' ? 'utf8' : 'base64', r.pos, end);
      r.pos = end;
      return s;
    }
    case 'struct': {
      const nested = join(path, name);
      const saved = r.len;
      r.len = length(r, nested);
      const out: Record<string, unknown> = {};
      readFields(r, schema, nested, out);
      r.len = saved;
      return out;
    }
    case 'time': case 'microTime':
      return readTimestamp(r, schema.type === 'microTime', path, name);
    case 'any':
      return readRaw(r, path, name);
    case 'list': {
      // a nested list: a message whose field 1 holds the items
      const nested = join(path, name);
      const saved = r.len;
      r.len = length(r, nested);
      const items: unknown[] = [];
      while (r.pos < r.len) {
        const key = tag(r);
        if (key >>> 3 !== 1) { skip(r, key & 7, key >>> 3); continue; }
        const item = readValue(r, schema.items, key & 7, nested, 'items');
        if (item !== undefined) items.push(item);
      }
      r.len = saved;
      return items;
    }
    case 'map':
      throw new ProtobufError(`protobuf field ${join(path, name)}: nested maps are not supported`);
  }
}

/** metav1.Time / MicroTime; an empty message is Go's zero time, which JSON writes as null. */
function readTimestamp(r: Reader, micro: boolean, path: string, name: string): string | undefined {
  const saved = r.len;
  r.len = length(r, path, name);
  const empty = r.pos === r.len;
  let seconds = 0;
  let nanos = 0;
  while (r.pos < r.len) {
    const key = tag(r);
    const number = key >>> 3;
    if (number > 2) {
      skip(r, key & 7, number);
      continue;
    }
    if ((key & 7) !== VARINT) throw wrongWireType(join(join(path, name), number === 1 ? 'seconds' : 'nanos'), key & 7, VARINT);
    if (number === 1) seconds = int64(r);
    else nanos = r.int32();
  }
  r.len = saved;
  if (empty || (seconds === goZeroTimeSeconds && nanos === 0)) return undefined;
  if (seconds < goZeroTimeSeconds || seconds > maxTimeSeconds || nanos < 0 || nanos > 999_999_999) {
    throw new ProtobufError(`protobuf field ${join(path, name)} holds a time outside years 0001-9999 (seconds ${seconds}, nanos ${nanos})`);
  }
  // Time keeps whole seconds, as Kubernetes decodes it; MicroTime truncates to microseconds
  return micro ? `${civilTime(seconds)}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z` : `${civilTime(seconds)}Z`;
}

/** FieldsV1 / RawExtension: {bytes raw = 1} holding JSON; `undefined` when raw is unset or empty. */
function readRaw(r: Reader, path: string, name: string): unknown {
  const saved = r.len;
  r.len = length(r, path, name);
  let start = 0;
  let end = 0;
  while (r.pos < r.len) {
    const key = tag(r);
    if (key >>> 3 !== 1) {
      skip(r, key & 7, key >>> 3);
      continue;
    }
    if ((key & 7) !== LEN) throw wrongWireType(join(join(path, name), 'raw'), key & 7, LEN);
    end = length(r, path, name);
    start = r.pos;
    r.pos = end;
  }
  r.len = saved;
  if (start === end) return undefined;
  try {
    return parseJson((r.buf as Buffer).toString('utf8', start, end));
  } catch (err) {
    throw new ProtobufError(`protobuf field ${join(path, name)} does not hold JSON: ${(err as Error).message}`);
  }
}

function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Runs a read, turning protobufjs' errors into this codec's. */
function reading<T>(r: Reader, read: () => T): T {
  try {
    return read();
  } catch (err) {
    throw readerError(r, err);
  }
}

/** Decodes a message (without the envelope) into its JSON shape. */
export function decodeMessage(bytes: Uint8Array, schema: StructSchema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const r = protobufjs().Reader.create(toBuffer(bytes));
  reading(r, () => readFields(r, schema, '', out));
  return out;
}

const unknownFieldNames = ['', 'typeMeta', 'raw', 'contentEncoding'];
const typeMetaSchema = internalStructOf(s.struct('TypeMeta', { apiVersion: s.string(), kind: s.string() }, undefined, { proto: { apiVersion: 1, kind: 2 } }));

/**
 * Decodes a Kubernetes protobuf body: the magic, then runtime.Unknown whose `raw` is decoded
 * against `schema`. apiVersion/kind come from the envelope's typeMeta ('' when absent, for the
 * caller to default from the request's kind, as Kubernetes does).
 */
export function decodeEnvelope(body: Uint8Array, schema: StructSchema): { apiVersion: string; kind: string; object: Record<string, unknown> } {
  const buf = toBuffer(body);
  // kube-apiserver's wording
  if (buf.length === 0) throw new ProtobufError('empty data');
  if (buf.length < protobufMagic.length || protobufMagic.compare(buf, 0, protobufMagic.length) !== 0) {
    throw new ProtobufError('provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]');
  }
  if (buf.length === protobufMagic.length) throw new ProtobufError('empty body');
  const r = protobufjs().Reader.create(buf);
  r.pos = protobufMagic.length;
  return reading(r, () => {
    let typeMeta: { apiVersion?: string; kind?: string } = {};
    let contentEncoding = '';
    let rawStart = 0;
    let rawEnd = 0;
    while (r.pos < r.len) {
      const key = tag(r);
      const number = key >>> 3;
      // contentType (4) is not consulted, as in Kubernetes: raw is the message itself
      if (number > 3) {
        skip(r, key & 7, number);
        continue;
      }
      if ((key & 7) !== LEN) throw wrongWireType(unknownFieldNames[number], key & 7, LEN);
      if (number === 1) {
        typeMeta = readValue(r, typeMetaSchema, LEN, '', 'typeMeta') as typeof typeMeta;
      } else if (number === 2) {
        rawEnd = length(r, 'raw');
        rawStart = r.pos;
        r.pos = rawEnd;
      } else {
        contentEncoding = readValue(r, stringSchema, LEN, '', 'contentEncoding') as string;
      }
    }
    if (contentEncoding !== '') throw new ProtobufError(`unsupported protobuf contentEncoding ${JSON.stringify(contentEncoding)}`);
    const { apiVersion = '', kind = '' } = typeMeta;
    const object: Record<string, unknown> = {};
    if (apiVersion) object.apiVersion = apiVersion;
    if (kind) object.kind = kind;
    r.pos = rawStart;
    r.len = rawEnd;
    readFields(r, schema, '', object);
    return { apiVersion, kind, object };
  });
}
