/**
 * Writing Kubernetes' protobuf wire format (`application/vnd.kubernetes.protobuf`) with protobufjs.
 * An object in the JSON shape it is stored in becomes the input of its message type (message-types.ts):
 *   - metav1.Time / MicroTime → {seconds, nanos} (Time whole seconds, MicroTime microseconds);
 *   - map<string, V> → entries sorted by key; `bytes` ← base64 text; `any` → {raw: its JSON};
 *   - non-pointer strings are always written, empty when absent, as gogo writes them; everything
 *     else only when present (pointer fields, and zero values Go's omitempty would drop alike).
 * protobufjs then writes the fields in field-number order, as gogo does: the bytes are
 * kube-apiserver's.
 */
import type { Schema, StructSchema } from '../../api/schema.js';
import { protobufjs } from '../libraries.js';
import { ProtobufError } from './errors.js';
import { planOf, runtimeTypes, type MessagePlan } from './message-types.js';
import { microsOf, timeSeconds } from './time.js';

/** "k8s\0", the prefix of every Kubernetes protobuf body. */
export const protobufMagic: Buffer = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
/** the magic read as a little-endian fixed32, so a protobufjs Writer can start a body with it */
const magicFixed32 = protobufMagic.readUInt32LE(0);

type Message = Record<string, unknown>;

function encodeError(schema: StructSchema, field: string, expected: string, value: unknown): ProtobufError {
  return new ProtobufError(`cannot encode ${schema.goName}.${field}: expected ${expected}, got ${JSON.stringify(value)}`);
}

function toMessage(value: Record<string, unknown>, plan: MessagePlan): Message {
  const out: Message = {};
  for (const field of plan.fields) {
    const v = value[field.name];
    if (v !== undefined && v !== null) out[field.name] = toField(v, field.schema, plan.schema, field.name);
    else if (field.schema.type === 'string' && !field.schema.pointer) out[field.name] = '';
  }
  return out;
}

function toField(v: unknown, schema: Schema, owner: StructSchema, name: string): unknown {
  if (schema.type === 'list') {
    if (!Array.isArray(v)) throw encodeError(owner, name, 'a list', v);
    return v.map((item) => toValue(item, schema.items, owner, name));
  }
  if (schema.type === 'map') {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw encodeError(owner, name, 'a map', v);
    const map = v as Record<string, unknown>;
    return Object.keys(map).sort().map((key) => ({ key, value: toValue(map[key], schema.values, owner, name) }));
  }
  return toValue(v, schema, owner, name);
}

function toValue(v: unknown, schema: Schema, owner: StructSchema, name: string): unknown {
  switch (schema.type) {
    case 'string':
      if (typeof v !== 'string') throw encodeError(owner, name, 'a string', v);
      return v;
    case 'integer':
      if (typeof v !== 'number' || !Number.isInteger(v)) throw encodeError(owner, name, 'an integer', v);
      return v;
    case 'boolean':
      if (typeof v !== 'boolean') throw encodeError(owner, name, 'a boolean', v);
      return v;
    case 'time': case 'microTime': {
      const seconds = typeof v === 'string' ? timeSeconds(v) : NaN;
      if (Number.isNaN(seconds)) throw encodeError(owner, name, 'an RFC 3339 time', v);
      // Time carries whole seconds (Kubernetes drops nanos); MicroTime keeps microseconds
      return { seconds, nanos: schema.type === 'microTime' ? microsOf(v as string) * 1000 : 0 };
    }
    case 'bytes':
      if (typeof v !== 'string') throw encodeError(owner, name, 'base64 text', v);
      return Buffer.from(v, 'base64');
    case 'any':
      return { raw: Buffer.from(JSON.stringify(v), 'utf8') };
    case 'struct':
      if (typeof v !== 'object' || v === null || Array.isArray(v)) throw encodeError(owner, name, 'an object', v);
      return toMessage(v as Record<string, unknown>, planOf(schema));
    case 'list':
      return { items: toField(v, schema, owner, name) };
    case 'map':
      throw new ProtobufError(`cannot encode ${owner.goName}.${name}: protobuf has no nested maps`);
  }
}

/** Encodes a message (the JSON shape, as stored) without the envelope. */
export function encodeMessage(value: Record<string, unknown>, schema: StructSchema): Buffer {
  const plan = planOf(schema);
  return plan.type.encode(toMessage(value, plan)).finish() as Buffer;
}

/** Encodes an object (JSON shape, as stored) into the runtime.Unknown envelope, as kube-apiserver writes it. */
export function encodeEnvelope(object: Record<string, unknown>, schema: StructSchema, typeMeta: { apiVersion: string; kind: string }): Buffer {
  const plan = planOf(schema);
  const message = toMessage(object, plan);
  const w = protobufjs().Writer.create().fixed32(magicFixed32);
  runtimeTypes().TypeMeta.encode({ apiVersion: typeMeta.apiVersion, kind: typeMeta.kind }, w.uint32(0x0a).fork()).ldelim();
  plan.type.encode(message, w.uint32(0x12).fork()).ldelim();
  // contentEncoding and contentType: non-pointer strings, written empty
  return w.uint32(0x1a).uint32(0).uint32(0x22).uint32(0).finish() as Buffer;
}

/**
 * One event of a protobuf watch stream, as kube-apiserver frames it: a 4-byte big-endian length,
 * then a raw (unenveloped) metav1.WatchEvent {type = 1, object = 2 RawExtension {raw = 1}} whose
 * raw object is the enveloped object, encoded once per event and shared by every frame of it.
 */
export function encodeWatchFrame(type: string, objectEnvelope: Uint8Array): Buffer {
  const event = runtimeTypes().WatchEvent.encode({ type, object: { raw: objectEnvelope } }).finish();
  const frame = Buffer.allocUnsafe(4 + event.length);
  frame.writeUInt32BE(event.length, 0);
  frame.set(event, 4);
  return frame;
}
