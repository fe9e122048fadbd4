/**
 * The internal form of a kind's schema, derived once from the structural schema it declares
 * (./schema/to-internal.ts). Every generic layer reads it: the decoder below (types, unknown
 * fields), managed fields and apply (list/map types), OpenAPI, the binary codecs.
 */
import { setOwn } from './own-member.js';
import type { PatchStrategy } from './schema/builtin-structural.js';

export type ListType = 'atomic' | 'set' | 'map';
export type MapType = 'atomic' | 'granular';

interface Described { description?: string }

/**
 * A Go pointer field (`*string`, `*int32`): the protobuf codec writes it only when set and keeps a
 * set zero value (`leaseTransitions: 0`), where a plain field's zero value is omitted as Go's
 * `omitempty` omits it.
 */
interface Pointer { pointer?: true }

export type Schema =
  | StringSchema
  | ({ type: 'boolean' } & Described)
  | ({ type: 'integer'; format: 'int32' | 'int64' } & Described & Pointer)
  | ({ type: 'time' } & Described)
  | ({ type: 'microTime' } & Described)
  | ({ type: 'bytes' } & Described)
  | MapSchema
  | ListSchema
  | StructSchema
  | AnySchema;

/**
 * Any JSON value. `deduced`: an object whose fields a custom resource's schema keeps without
 * declaring them (`x-orch-preserve-unknown-fields`): apply and managed fields deduce its shape
 * from the value, as structured-merge-diff does (objects are granular maps, lists atomic).
 */
export interface AnySchema extends Described { type: 'any'; deduced?: true }

export interface StringSchema extends Described, Pointer { type: 'string' }
export interface MapSchema extends Described { type: 'map'; values: Schema; mapType: MapType }
export interface ListSchema extends Described {
  type: 'list';
  items: Schema;
  listType: ListType;
  listMapKeys?: readonly string[];
  /** strategic-merge-patch markers, as Kubernetes' `patchStrategy` / `patchMergeKey` tags */
  patchStrategy?: PatchStrategy;
  patchMergeKey?: string;
}
export interface StructSchema extends Described {
  type: 'struct';
  /** Go type name, used in decode error messages as Kubernetes prints them */
  goName: string;
  fields: Readonly<Record<string, Schema>>;
  structType?: MapType;
  /** fields Kubernetes' OpenAPI lists as required (those its Go type serializes without omitempty) */
  required?: readonly string[];
  /**
   * optional fields with omitempty whose empty list or map the decoder keeps all the same, where it
   * drops other such fields' as `omitempty` does: a later step reads it (`managedFields: []` asks
   * the field manager to reset them). Fields without omitempty keep theirs (`writesZero`).
   */
  keepsEmpty?: readonly string[];
  /**
   * struct fields a typed Go object holds by value: always there, even empty, so no write adds
   * them (managed fields never list one as a member of its own). Struct fields held by pointer,
   * and every field of a custom resource (unstructured), are absent until set.
   */
  heldByValue?: ReadonlySet<string>;
  /**
   * fields Go's encoder writes even when unset, so that a typed object always has them: those
   * without omitempty (zero value `""`, `0`, `false` or `null`), structs held by value (`{}`
   * filled alike) and metav1.Time held by value (`null`). See ./schema/go-zero-values.ts.
   */
  writesZero?: readonly string[];
  /**
   * `x-kubernetes-preserve-unknown-fields` on a custom resource's object with properties: fields it
   * does not declare are kept, and apply and managed fields take them as untyped values
   */
  preservesUnknownFields?: true;
  /** protobuf field numbers, as in Kubernetes' generated.proto for this message */
  proto?: Readonly<Record<string, number>>;
}

/** The Go type name of a schema node, as `json: cannot unmarshal ... of type X` prints it. */
export function goTypeName(schema: Schema): string {
  switch (schema.type) {
    case 'string': return 'string';
    case 'boolean': return 'bool';
    case 'integer': return schema.format;
    case 'time': return 'v1.Time';
    case 'microTime': return 'v1.MicroTime';
    case 'bytes': return '[]uint8';
    case 'map': return `map[string]${goTypeName(schema.values)}`;
    case 'list': return `[]${goTypeName(schema.items)}`;
    case 'struct': return `v1.${schema.goName}`;
    case 'any': return 'interface {}';
  }
}

export class DecodeError extends Error {}

export interface DecodeOutcome {
  /** paths of fields the schema does not know, in Kubernetes' notation (`spec.foo`, `secrets[0].x`) */
  unknownFields: string[];
}

function jsonTypeName(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  if (typeof v === 'object') return 'object';
  if (typeof v === 'boolean') return 'bool';
  return typeof v;
}

const base64Pattern = /^[A-Za-z0-9+/]*={0,2}$/;
const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** The last second formatted: a write stamps several times of one second (creation, managed fields). */
const lastFormatted = { second: Number.NaN, text: '' };

/** Kubernetes serializes Time in UTC with second precision, MicroTime with six fractional digits. */
export function formatTime(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== lastFormatted.second) {
    lastFormatted.text = new Date(second * 1000).toISOString().replace('.000Z', 'Z');
    lastFormatted.second = second;
  }
  return lastFormatted.text;
}

export function formatMicroTime(ms: number, micros = 0): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 19)}.${String(ms % 1000).padStart(3, '0')}${String(micros).padStart(3, '0')}Z`;
}

function normalizeTime(text: string, micro: boolean): string | undefined {
  const m = rfc3339.exec(text);
  if (!m) return undefined;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) return undefined;
  if (!micro) return formatTime(ms);
  const frac = (m[7] ?? '.').slice(1).padEnd(6, '0').slice(0, 6);
  return `${new Date(ms).toISOString().slice(0, 19)}.${frac}Z`;
}

function invalidBase64Offset(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const ok = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47 || c === 61;
    if (!ok) return i;
  }
  return text.length - (text.length % 4);
}

function isEmptyCollection(schema: Schema, value: unknown): boolean {
  if (schema.type === 'list') return (value as unknown[]).length === 0;
  if (schema.type !== 'map') return false;
  for (const _ in value as Record<string, unknown>) return false;
  return true;
}

/**
 * Checks `value` against `schema` and returns a normalized copy: nulls dropped (as Go's decoder
 * leaves zero values), optional fields' empty maps and lists dropped (as `omitempty` does), times
 * canonical, unknown fields removed and reported. Throws DecodeError
 * with the text Go's decoder would produce for a type mismatch.
 */
export function decodeValue(schema: Schema, value: unknown, path: string, owner: string, outcome: DecodeOutcome): unknown {
  const mismatch = (): DecodeError => new DecodeError(
    `json: cannot unmarshal ${jsonTypeName(value)} into Go struct field ${owner}.${path} of type ${goTypeName(schema)}`);
  switch (schema.type) {
    case 'string':
      if (typeof value !== 'string') throw mismatch();
      return value;
    case 'boolean':
      if (typeof value !== 'boolean') throw mismatch();
      return value;
    case 'integer': {
      if (typeof value !== 'number') throw mismatch();
      const limit = schema.format === 'int32' ? 2 ** 31 : 2 ** 63;
      if (!Number.isInteger(value) || value >= limit || value < -limit) {
        throw new DecodeError(`json: cannot unmarshal number ${value} into Go struct field ${owner}.${path} of type ${schema.format}`);
      }
      return value;
    }
    case 'time': case 'microTime': {
      if (typeof value !== 'string') throw mismatch();
      const normalized = normalizeTime(value, schema.type === 'microTime');
      if (normalized === undefined) {
        throw new DecodeError(`parsing time ${JSON.stringify(value)} as "2006-01-02T15:04:05Z07:00": cannot parse ${JSON.stringify(value)} as "2006"`);
      }
      return normalized;
    }
    case 'bytes':
      if (typeof value !== 'string') throw mismatch();
      if (value.length % 4 !== 0 || !base64Pattern.test(value)) {
        throw new DecodeError(`illegal base64 data at input byte ${invalidBase64Offset(value)}`);
      }
      return value;
    case 'any':
      return value;
    case 'map': {
      if (typeof value !== 'object' || Array.isArray(value)) throw mismatch();
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        if (v === null) continue;
        setOwn(out, k, decodeValue(schema.values, v, `${path}.${k}`, owner, outcome));
      }
      return out;
    }
    case 'list': {
      if (!Array.isArray(value)) throw mismatch();
      const out = new Array<unknown>(value.length);
      for (let i = 0; i < value.length; i++) {
        // a null element of a struct list decodes to a zero struct in Go
        const item = value[i] === null && schema.items.type === 'struct' ? {} : value[i];
        out[i] = decodeValue(schema.items, item, `${path}[${i}]`, owner, outcome);
      }
      return out;
    }
    case 'struct': {
      if (typeof value !== 'object' || Array.isArray(value)) throw mismatch();
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        // own fields only: `constructor` or `__proto__` in a body is an unknown field
        const fieldSchema = Object.hasOwn(schema.fields, k) ? schema.fields[k] : undefined;
        const fieldPath = path ? `${path}.${k}` : k;
        if (fieldSchema === undefined) {
          outcome.unknownFields.push(fieldPath);
          continue;
        }
        if (v === null) continue;
        const decoded = decodeValue(fieldSchema, v, fieldPath, schema.goName, outcome);
        // Go's `omitempty`: an optional field's empty map or list is not serialized, so the object
        // Kubernetes stores and answers with has no such field (`annotations: {}` is gone)
        // (a field without omitempty, required ones included, keeps it: writesZero)
        if (isEmptyCollection(fieldSchema, decoded) && !schema.writesZero?.includes(k) && !schema.keepsEmpty?.includes(k)) continue;
        out[k] = decoded;
      }
      return out;
    }
  }
}
