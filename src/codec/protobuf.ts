/**
 * Kubernetes' protobuf wire format (`application/vnd.kubernetes.protobuf`), driven by the kinds'
 * schemas: each StructSchema's `proto` map gives the field numbers of Kubernetes' generated.proto.
 *
 * A body is the magic "k8s\0" followed by a runtime.Unknown {typeMeta = 1 {apiVersion = 1,
 * kind = 2}, raw = 2, contentEncoding = 3, contentType = 4} whose `raw` holds the object's message.
 * Values are converted to and from the JSON shape objects are stored in:
 *   - metav1.Time / MicroTime are messages {int64 seconds = 1; int32 nanos = 2} ↔ RFC 3339 UTC text;
 *   - map<string, V> is a repeated entry message {key = 1; value = 2}, written sorted by key;
 *   - `bytes` ↔ base64 text; `any` (FieldsV1, RawExtension) is a message {bytes raw = 1} holding JSON.
 *
 * Encoding follows the gogo marshaller Kubernetes generates: strings are always written (unless
 * the schema marks them a pointer, as Lease's holderIdentity), everything else only when present — which is how
 * pointer fields (deletionTimestamp, automountServiceAccountToken, ...) must be written; a non-pointer
 * int, Time or struct that is absent here decodes to the same zero value on the Go side.
 * Decoding leaves out what Go's JSON encoding leaves out (omitempty strings, numbers, lists, maps;
 * a zero Time is null) and keeps nested messages, `{}` when empty, as Go writes a struct — so a
 * client's protobuf body and its JSON body decode to the same object.
 */
import { parseJson } from './json.js';
import { setOwn } from '../api/own-member.js';
import type { Schema, StructSchema } from '../api/schema.js';

export class ProtobufError extends Error {}

/** "k8s\0", the prefix of every Kubernetes protobuf body. */
export const protobufMagic: Buffer = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

const VARINT = 0;
const FIXED64 = 1;
const LEN = 2;
const FIXED32 = 5;
const wireTypeNames = ['varint', 'fixed64', 'length-delimited', 'group start', 'group end', 'fixed32'];
const twoTo32 = 4294967296;
/** Go's zero time.Time (0001-01-01T00:00:00Z), which Kubernetes serializes as null */
const goZeroTimeSeconds = -62135596800;

// ---- schema plans -------------------------------------------------------------------------------

interface FieldPlan { name: string; number: number; schema: Schema }
interface MessagePlan { fields: FieldPlan[]; byNumber: (FieldPlan | undefined)[] }

const plans = new WeakMap<StructSchema, MessagePlan>();

const stringSchema: Schema = { type: 'string' };
/** runtime.TypeMeta of the envelope (its numbers differ from metav1.TypeMeta's) */
const typeMetaSchema: StructSchema = {
  type: 'struct', goName: 'TypeMeta', fields: { apiVersion: stringSchema, kind: stringSchema }, proto: { apiVersion: 1, kind: 2 },
};

/** Fields in field-number order (the order gogo writes them) and a lookup by number, built once per schema. */
function planOf(schema: StructSchema): MessagePlan {
  let plan = plans.get(schema);
  if (plan) return plan;
  if (!schema.proto) throw new ProtobufError(`${schema.goName} has no protobuf field numbers`);
  const fields: FieldPlan[] = [];
  const byNumber: (FieldPlan | undefined)[] = [];
  for (const [name, number] of Object.entries(schema.proto)) {
    const fieldSchema = schema.fields[name];
    if (fieldSchema === undefined || !Number.isInteger(number) || number < 1 || byNumber[number]) {
      throw new ProtobufError(`${schema.goName}: invalid protobuf field number ${number} for ${name}`);
    }
    const field = { name, number, schema: fieldSchema };
    fields.push(field);
    byNumber[number] = field;
  }
  fields.sort((a, b) => a.number - b.number);
  plan = { fields, byNumber };
  plans.set(schema, plan);
  return plan;
}

function wireTypeOf(schema: Schema): number {
  return schema.type === 'integer' || schema.type === 'boolean' ? VARINT : LEN;
}

// ---- writing ------------------------------------------------------------------------------------

/**
 * An append-only buffer. A length-delimited value reserves one byte for its length and moves its
 * content right in the rare case the length needs more, so nothing is measured or copied twice.
 */
class Writer {
  buf = Buffer.allocUnsafe(4096);
  pos = 0;

  reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  byte(b: number): void {
    this.reserve(1);
    this.buf[this.pos++] = b;
  }

  /** Two's complement varint of an integer: negative int32 and int64 values take 10 bytes. */
  varint(v: number): void {
    this.reserve(10);
    const buf = this.buf;
    let pos = this.pos;
    if (v >= 0 && v < twoTo32) {
      while (v > 127) { buf[pos++] = (v & 0x7f) | 0x80; v >>>= 7; }
      buf[pos++] = v;
    } else {
      let lo = v >>> 0;
      let hi = Math.floor(v / twoTo32) >>> 0;
      while (hi !== 0 || lo > 127) {
        buf[pos++] = (lo & 0x7f) | 0x80;
        lo = ((lo >>> 7) | (hi << 25)) >>> 0;
        hi >>>= 7;
      }
      buf[pos++] = lo;
    }
    this.pos = pos;
  }

  key(number: number, wireType: number): void {
    this.varint(number * 8 + wireType);
  }

  /** Starts a length-delimited value; returns the position `end` needs. */
  begin(): number {
    this.reserve(1);
    return this.pos++;
  }

  end(start: number): void {
    const length = this.pos - start - 1;
    if (length < 128) {
      this.buf[start] = length;
      return;
    }
    let extra = 0;
    for (let l = length >>> 7; l > 0; l >>>= 7) extra++;
    this.reserve(extra);
    this.buf.copyWithin(start + 1 + extra, start + 1, this.pos);
    this.pos += extra;
    const end = this.pos;
    this.pos = start;
    this.varint(length);
    this.pos = end;
  }

  string(s: string): void {
    const start = this.begin();
    this.reserve(s.length * 3);
    this.pos += this.buf.write(s, this.pos, 'utf8');
    this.end(start);
  }

  base64(s: string): void {
    const start = this.begin();
    this.reserve(s.length);
    this.pos += this.buf.write(s, this.pos, 'base64');
    this.end(start);
  }

  /** A copy of what was written; the scratch buffer is reused by the next encode. */
  finish(): Buffer {
    const out = Buffer.allocUnsafe(this.pos);
    this.buf.copy(out, 0, 0, this.pos);
    // a rare huge object must not pin its buffer for the life of the process
    if (this.buf.length > 1 << 20) this.buf = Buffer.allocUnsafe(4096);
    this.pos = 0;
    return out;
  }
}

const writer = new Writer();

function encodeError(schema: StructSchema, field: string, expected: string, value: unknown): ProtobufError {
  return new ProtobufError(`cannot encode ${schema.goName}.${field}: expected ${expected}, got ${JSON.stringify(value)}`);
}

function writeMessage(w: Writer, value: Record<string, unknown>, schema: StructSchema): void {
  for (const field of planOf(schema).fields) {
    const v = value[field.name];
    if (v !== undefined && v !== null) {
      writeField(w, field.number, field.schema, v, schema, field.name);
    } else if (field.schema.type === 'string' && !field.schema.pointer) {
      // gogo writes non-pointer strings even when empty
      w.key(field.number, LEN);
      w.byte(0);
    }
  }
}

function writeField(w: Writer, number: number, schema: Schema, v: unknown, owner: StructSchema, name: string): void {
  if (schema.type === 'list') {
    if (!Array.isArray(v)) throw encodeError(owner, name, 'a list', v);
    for (const item of v) writeValue(w, number, schema.items, item, owner, name);
  } else if (schema.type === 'map') {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw encodeError(owner, name, 'a map', v);
    const map = v as Record<string, unknown>;
    for (const k of Object.keys(map).sort()) {
      w.key(number, LEN);
      const start = w.begin();
      w.key(1, LEN);
      w.string(k);
      writeValue(w, 2, schema.values, map[k], owner, name);
      w.end(start);
    }
  } else {
    writeValue(w, number, schema, v, owner, name);
  }
}

function writeValue(w: Writer, number: number, schema: Schema, v: unknown, owner: StructSchema, name: string): void {
  switch (schema.type) {
    case 'string':
      if (typeof v !== 'string') throw encodeError(owner, name, 'a string', v);
      w.key(number, LEN);
      w.string(v);
      return;
    case 'integer':
      if (typeof v !== 'number' || !Number.isInteger(v)) throw encodeError(owner, name, 'an integer', v);
      w.key(number, VARINT);
      w.varint(v);
      return;
    case 'boolean':
      if (typeof v !== 'boolean') throw encodeError(owner, name, 'a boolean', v);
      w.key(number, VARINT);
      w.byte(v ? 1 : 0);
      return;
    case 'time': case 'microTime': {
      const seconds = typeof v === 'string' ? timeSeconds(v) : NaN;
      if (Number.isNaN(seconds)) throw encodeError(owner, name, 'an RFC 3339 time', v);
      w.key(number, LEN);
      const start = w.begin();
      w.key(1, VARINT);
      w.varint(seconds);
      w.key(2, VARINT);
      // Time carries whole seconds (Kubernetes drops nanos); MicroTime keeps microseconds
      w.varint(schema.type === 'microTime' ? microsOf(v as string) * 1000 : 0);
      w.end(start);
      return;
    }
    case 'bytes':
      if (typeof v !== 'string') throw encodeError(owner, name, 'base64 text', v);
      w.key(number, LEN);
      w.base64(v);
      return;
    case 'any': {
      w.key(number, LEN);
      const start = w.begin();
      w.key(1, LEN);
      w.string(JSON.stringify(v));
      w.end(start);
      return;
    }
    case 'struct': {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) throw encodeError(owner, name, 'an object', v);
      w.key(number, LEN);
      const start = w.begin();
      writeMessage(w, v as Record<string, unknown>, schema);
      w.end(start);
      return;
    }
    case 'list': {
      // a list inside a map or list travels as a message of its items (field 1), as Kubernetes'
      // named slice types do (authentication's ExtraValue)
      w.key(number, LEN);
      const start = w.begin();
      writeField(w, 1, schema, v, owner, name);
      w.end(start);
      return;
    }
    case 'map':
      throw new ProtobufError(`cannot encode ${owner.goName}.${name}: protobuf has no nested maps`);
  }
}

/** The value of `count` decimal digits at `at`, NaN if any is not a digit. */
function digitsAt(text: string, at: number, count: number): number {
  let v = 0;
  for (let i = at; i < at + count; i++) {
    const d = text.charCodeAt(i) - 48;
    if (!(d >= 0 && d <= 9)) return NaN;
    v = v * 10 + d;
  }
  return v;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  return era * 146097 + yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear - 719468;
}

/**
 * Unix seconds of an RFC 3339 time, NaN if it is none. The UTC form stored objects hold
 * ("2006-01-02T15:04:05Z", with a fraction for MicroTime) is read by hand; others go to Date.parse.
 */
function timeSeconds(text: string): number {
  if (text.charCodeAt(text.length - 1) === 90 /* Z */ && text[10] === 'T' && text[4] === '-' && text[7] === '-' && text[13] === ':' && text[16] === ':') {
    const month = digitsAt(text, 5, 2);
    const day = digitsAt(text, 8, 2);
    const hour = digitsAt(text, 11, 2);
    const minute = digitsAt(text, 14, 2);
    const second = digitsAt(text, 17, 2);
    if (month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour < 24 && minute < 60 && second < 60) {
      const days = daysFromCivil(digitsAt(text, 0, 4), month, day);
      if (!Number.isNaN(days)) return days * 86400 + hour * 3600 + minute * 60 + second;
    }
  }
  return Math.floor(Date.parse(text) / 1000);
}

/** Microseconds of an RFC 3339 time's fraction, which always starts at index 19 (further digits truncated). */
function microsOf(text: string): number {
  if (text[19] !== '.') return 0;
  let micros = 0;
  let i = 20;
  for (; i < 26; i++) {
    const d = text.charCodeAt(i) - 48;
    if (!(d >= 0 && d <= 9)) break;
    micros = micros * 10 + d;
  }
  for (; i < 26; i++) micros *= 10; // ".5" is 500000µs
  return micros;
}

/** Encodes a message (the JSON shape, as stored) without the envelope. */
export function encodeMessage(value: Record<string, unknown>, schema: StructSchema): Buffer {
  writer.pos = 0;
  writeMessage(writer, value, schema);
  return writer.finish();
}

/** Encodes an object (JSON shape, as stored) into the envelope, as kube-apiserver writes it. */
export function encodeEnvelope(object: Record<string, unknown>, schema: StructSchema, typeMeta: { apiVersion: string; kind: string }): Buffer {
  const w = writer;
  w.pos = 0;
  w.reserve(protobufMagic.length);
  w.pos += protobufMagic.copy(w.buf, 0);
  w.key(1, LEN);
  const meta = w.begin();
  writeMessage(w, typeMeta, typeMetaSchema);
  w.end(meta);
  w.key(2, LEN);
  const raw = w.begin();
  writeMessage(w, object, schema);
  w.end(raw);
  // contentEncoding and contentType: non-pointer strings, written empty
  w.key(3, LEN);
  w.byte(0);
  w.key(4, LEN);
  w.byte(0);
  return w.finish();
}

// ---- reading ------------------------------------------------------------------------------------

class Reader {
  pos = 0;
  /** end of the message being read; nested messages narrow it */
  limit: number;
  /** high 32 bits of the last varint */
  hi = 0;

  constructor(readonly buf: Buffer) {
    this.limit = buf.length;
  }

  truncated(what: string): ProtobufError {
    return new ProtobufError(`protobuf data truncated: ${what} at byte ${this.pos} runs past the end of its message (byte ${this.limit})`);
  }

  /** Reads a varint; returns its low 32 bits (unsigned) and leaves the high ones in `hi`. */
  varint(): number {
    const buf = this.buf;
    const limit = this.limit;
    let pos = this.pos;
    let lo = 0;
    let b: number;
    for (let shift = 0; shift < 28; shift += 7) {
      if (pos >= limit) throw this.truncated('varint');
      b = buf[pos++];
      lo |= (b & 0x7f) << shift;
      if (b < 0x80) { this.pos = pos; this.hi = 0; return lo >>> 0; }
    }
    if (pos >= limit) throw this.truncated('varint');
    b = buf[pos++];
    lo |= (b & 0x0f) << 28;
    let hi = (b & 0x7f) >> 4;
    if (b < 0x80) { this.pos = pos; this.hi = hi; return lo >>> 0; }
    for (let shift = 3; shift < 32; shift += 7) {
      if (pos >= limit) throw this.truncated('varint');
      b = buf[pos++];
      hi |= (b & 0x7f) << shift;
      if (b < 0x80) { this.pos = pos; this.hi = hi >>> 0; return lo >>> 0; }
    }
    throw new ProtobufError(`protobuf varint at byte ${this.pos} is longer than 10 bytes`);
  }

  /** A field key; returns it with the field number in its upper bits. */
  tag(): number {
    const key = this.varint();
    if (this.hi !== 0 || key < 8) throw new ProtobufError(`protobuf data holds an invalid field key at byte ${this.pos}`);
    return key;
  }

  int64(): number {
    const lo = this.varint();
    return (this.hi | 0) * twoTo32 + lo;
  }

  /** A length prefix; returns where the value ends. `path`/`name` name the field in errors. */
  length(path: string, name = ''): number {
    const start = this.pos;
    const n = this.varint();
    if (this.hi !== 0 || n > this.limit - this.pos) {
      this.pos = start;
      throw this.truncated(join(path, name));
    }
    return this.pos + n;
  }

  skip(wireType: number, number: number): void {
    switch (wireType) {
      case VARINT: this.varint(); return;
      case LEN: this.pos = this.length(`field ${number}`); return;
      case FIXED64: case FIXED32: {
        const end = this.pos + (wireType === FIXED64 ? 8 : 4);
        if (end > this.limit) throw this.truncated(`field ${number}`);
        this.pos = end;
        return;
      }
      default:
        throw new ProtobufError(`protobuf field ${number} at byte ${this.pos} has unsupported wire type ${wireType}`);
    }
  }
}

function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function wrongWireType(path: string, actual: number, expected: number): ProtobufError {
  return new ProtobufError(`protobuf field ${path} has wire type ${actual} (${wireTypeNames[actual] ?? 'invalid'}), expected ${expected} (${wireTypeNames[expected]})`);
}

function join(path: string, name: string): string {
  return path && name ? `${path}.${name}` : path || name;
}

/** Reads fields into `out` up to `r.limit`, in any order; unknown field numbers are skipped. */
function readFields(r: Reader, schema: StructSchema, path: string, out: Record<string, unknown>): void {
  const plan = planOf(schema);
  while (r.pos < r.limit) {
    const key = r.tag();
    const wireType = key & 7;
    const field = plan.byNumber[key >>> 3];
    if (field === undefined) {
      r.skip(wireType, key >>> 3);
      continue;
    }
    const { name, schema: fieldSchema } = field;
    if (fieldSchema.type === 'list') {
      const items = fieldSchema.items;
      if (wireType === LEN && wireTypeOf(items) === VARINT) {
        // a packed run of scalars, which parsers must accept although Kubernetes does not pack
        const saved = r.limit;
        r.limit = r.length(path, name);
        while (r.pos < r.limit) append(out, name, readValue(r, items, VARINT, path, name));
        r.limit = saved;
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

/** One map entry {key = 1; value = 2}; a missing key or value is the zero value, as in Go. */
function readMapEntry(r: Reader, values: Schema, wireType: number, path: string, name: string, map: Record<string, unknown>): void {
  if (wireType !== LEN) throw wrongWireType(join(path, name), wireType, LEN);
  const saved = r.limit;
  r.limit = r.length(path, name);
  let k = '';
  let v: unknown;
  while (r.pos < r.limit) {
    const key = r.tag();
    if (key >>> 3 === 1) k = readValue(r, stringSchema, key & 7, path, name) as string;
    else if (key >>> 3 === 2) v = readValue(r, values, key & 7, path, name);
    else r.skip(key & 7, key >>> 3);
  }
  r.limit = saved;
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
      return schema.format === 'int32' ? r.varint() | 0 : r.int64();
    case 'boolean':
      return (r.varint() | r.hi) !== 0;
    case 'string': {
      const end = r.length(path, name);
      const s = r.buf.toString('utf8', r.pos, end);
      r.pos = end;
      return s;
    }
    case 'bytes': {
      const end = r.length(path, name);
      const s = r.buf.toString('base64', r.pos, end);
      r.pos = end;
      return s;
    }
    case 'struct': {
      const nested = join(path, name);
      const saved = r.limit;
      r.limit = r.length(nested);
      const out: Record<string, unknown> = {};
      readFields(r, schema, nested, out);
      r.limit = saved;
      return out;
    }
    case 'time': case 'microTime':
      return readTimestamp(r, schema.type === 'microTime', path, name);
    case 'any':
      return readRaw(r, path, name);
    case 'list': {
      // a nested list: a message whose field 1 holds the items
      const nested = join(path, name);
      const saved = r.limit;
      r.limit = r.length(nested);
      const items: unknown[] = [];
      while (r.pos < r.limit) {
        const key = r.tag();
        if (key >>> 3 !== 1) { r.skip(key & 7, key >>> 3); continue; }
        const item = readValue(r, schema.items, key & 7, nested, 'items');
        if (item !== undefined) items.push(item);
      }
      r.limit = saved;
      return items;
    }
    case 'map':
      throw new ProtobufError(`protobuf field ${join(path, name)}: nested maps are not supported`);
  }
}

/** metav1.Time / MicroTime; an empty message is Go's zero time, which JSON writes as null. */
function readTimestamp(r: Reader, micro: boolean, path: string, name: string): string | undefined {
  const saved = r.limit;
  r.limit = r.length(path, name);
  const empty = r.pos === r.limit;
  let seconds = 0;
  let nanos = 0;
  while (r.pos < r.limit) {
    const key = r.tag();
    const number = key >>> 3;
    if (number > 2) {
      r.skip(key & 7, number);
      continue;
    }
    if ((key & 7) !== VARINT) throw wrongWireType(join(join(path, name), number === 1 ? 'seconds' : 'nanos'), key & 7, VARINT);
    if (number === 1) seconds = r.int64();
    else nanos = r.varint() | 0;
  }
  r.limit = saved;
  if (empty || (seconds === goZeroTimeSeconds && nanos === 0)) return undefined;
  if (seconds < goZeroTimeSeconds || seconds > maxTimeSeconds || nanos < 0 || nanos > 999_999_999) {
    throw new ProtobufError(`protobuf field ${join(path, name)} holds a time outside years 0001-9999 (seconds ${seconds}, nanos ${nanos})`);
  }
  // Time keeps whole seconds, as Kubernetes decodes it; MicroTime truncates to microseconds
  return micro ? `${civilTime(seconds)}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z` : `${civilTime(seconds)}Z`;
}

/** 9999-12-31T23:59:59Z, the last time Go's JSON encoding can write */
const maxTimeSeconds = 253402300799;
const pad2 = (n: number): string => (n < 10 ? `0${n}` : `${n}`);

/**
 * "YYYY-MM-DDTHH:MM:SS" (UTC) of Unix seconds by integer arithmetic (Hinnant's civil_from_days),
 * a fraction of the cost of Date#toISOString.
 */
function civilTime(seconds: number): string {
  const days = Math.floor(seconds / 86400);
  const secondOfDay = seconds - days * 86400;
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const dayOfEra = z - era * 146097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36524) - Math.floor(dayOfEra / 146096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const mp = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const hour = Math.floor(secondOfDay / 3600);
  const minute = Math.floor((secondOfDay - hour * 3600) / 60);
  return `${String(year).padStart(4, '0')}-${pad2(month)}-${pad2(day)}T${pad2(hour)}:${pad2(minute)}:${pad2(secondOfDay % 60)}`;
}

/** FieldsV1 / RawExtension: {bytes raw = 1} holding JSON; `undefined` when raw is unset or empty. */
function readRaw(r: Reader, path: string, name: string): unknown {
  const saved = r.limit;
  r.limit = r.length(path, name);
  let start = 0;
  let end = 0;
  while (r.pos < r.limit) {
    const key = r.tag();
    if (key >>> 3 !== 1) {
      r.skip(key & 7, key >>> 3);
      continue;
    }
    if ((key & 7) !== LEN) throw wrongWireType(join(join(path, name), 'raw'), key & 7, LEN);
    end = r.length(path, name);
    start = r.pos;
    r.pos = end;
  }
  r.limit = saved;
  if (start === end) return undefined;
  try {
    return parseJson(r.buf.toString('utf8', start, end));
  } catch (err) {
    throw new ProtobufError(`protobuf field ${join(path, name)} does not hold JSON: ${(err as Error).message}`);
  }
}

/** Decodes a message (without the envelope) into its JSON shape. */
export function decodeMessage(bytes: Uint8Array, schema: StructSchema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  readFields(new Reader(toBuffer(bytes)), schema, '', out);
  return out;
}

const unknownFieldNames = ['', 'typeMeta', 'raw', 'contentEncoding'];

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
  const r = new Reader(buf);
  r.pos = protobufMagic.length;
  let typeMeta: { apiVersion?: string; kind?: string } = {};
  let contentEncoding = '';
  let rawStart = 0;
  let rawEnd = 0;
  while (r.pos < r.limit) {
    const key = r.tag();
    const number = key >>> 3;
    // contentType (4) is not consulted, as in Kubernetes: raw is the message itself
    if (number > 3) {
      r.skip(key & 7, number);
      continue;
    }
    if ((key & 7) !== LEN) throw wrongWireType(unknownFieldNames[number], key & 7, LEN);
    if (number === 1) {
      typeMeta = readValue(r, typeMetaSchema, LEN, '', 'typeMeta') as typeof typeMeta;
    } else if (number === 2) {
      rawEnd = r.length('raw');
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
  r.limit = rawEnd;
  readFields(r, schema, '', object);
  return { apiVersion, kind, object };
}

function varintBytes(n: number): number[] {
  const out: number[] = [];
  while (n > 127) { out.push((n & 0x7f) | 0x80); n >>>= 7; }
  out.push(n);
  return out;
}

/**
 * One event of a protobuf watch stream, as kube-apiserver frames it: a 4-byte big-endian length,
 * then a raw (unenveloped) metav1.WatchEvent {type = 1, object = 2 RawExtension {raw = 1}} whose raw
 * object is the enveloped object. The enveloped object is encoded once per event; this wrapper is
 * a few bytes around it.
 */
export function encodeWatchFrame(type: string, objectEnvelope: Uint8Array): Buffer {
  const typeBytes = Buffer.from(type, 'latin1');
  const rawField = [0x0a, ...varintBytes(objectEnvelope.length)];
  const extensionLength = rawField.length + objectEnvelope.length;
  const head = Buffer.from([
    0x0a, ...varintBytes(typeBytes.length), ...typeBytes,
    0x12, ...varintBytes(extensionLength), ...rawField,
  ]);
  const eventLength = head.length + objectEnvelope.length;
  const frame = Buffer.allocUnsafe(4 + eventLength);
  frame.writeUInt32BE(eventLength, 0);
  head.copy(frame, 4);
  frame.set(objectEnvelope, 4 + head.length);
  return frame;
}
