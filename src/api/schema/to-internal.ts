/**
 * A structural schema as the internal Schema (../schema.ts) the generic machinery reads: the
 * decoder, the protobuf codec, managed fields and server-side apply (list/map markers), strategic
 * merge, OpenAPI, field selection, Table cells.
 *
 * Custom resources are unstructured: every list is atomic unless the schema says
 * `x-orch-list-type`, maps and structs are granular unless `x-orch-map-type: atomic`. Scalars whose
 * JSON type the internal form does not distinguish (number, int-or-string, preserved unknowns)
 * become `any` leaves. Built-in kinds' nodes carry Go facts besides (./builtin-structural.ts):
 * struct names and field numbers, pointers, times and bytes, patch markers; they map back here.
 */
import { setOwn } from '../own-member.js';
import type { ListSchema, ListType, MapType, Schema, StructSchema } from '../schema.js';
import type { BuiltinStructural } from './builtin-structural.js';

function mapTypeOf(s: BuiltinStructural): MapType {
  return s.mapType === 'atomic' ? 'atomic' : 'granular';
}

function listTypeOf(s: BuiltinStructural): ListType {
  return s.listType === 'set' || s.listType === 'map' ? s.listType : 'atomic';
}

type Derive = (s: BuiltinStructural, goName: string) => Schema;

function stringSchema(s: BuiltinStructural): Schema {
  const description = s.description;
  switch (s.goType) {
    case 'Time': return { type: 'time', description };
    case 'MicroTime': return { type: 'microTime', description };
    case '[]byte': return { type: 'bytes', description };
    default: return s.pointer ? { type: 'string', description, pointer: true } : { type: 'string', description };
  }
}

function listSchema(s: BuiltinStructural, goName: string, derive: Derive): ListSchema {
  const items = s.items ? derive(s.items, goName) : { type: 'any' as const };
  const listType = listTypeOf(s);
  const out: ListSchema = listType === 'map'
    ? { type: 'list', items, listType, listMapKeys: s.listMapKeys ?? [], description: s.description }
    : { type: 'list', items, listType, description: s.description };
  if (s.patchStrategy !== undefined) out.patchStrategy = s.patchStrategy;
  if (s.patchMergeKey !== undefined) out.patchMergeKey = s.patchMergeKey;
  return out;
}

/** A node declared with `s.struct`: a Go struct (custom resources' objects never name a Go type). */
function isGoStruct(s: BuiltinStructural): boolean {
  return s.type === 'object' && s.goName !== undefined;
}

/** metav1.Time or MicroTime: a Go struct, written `null` when zero */
function isGoTime(s: BuiltinStructural): boolean {
  return s.goType === 'Time' || s.goType === 'MicroTime';
}

function structSchema(s: BuiltinStructural, goName: string, derive: Derive): StructSchema {
  const fields: Record<string, Schema> = {};
  // a Go struct's struct fields are held by value unless declared pointers; custom resources' never are
  const byValue: string[] = [];
  const writesZero: string[] = [];
  for (const [k, v] of Object.entries(s.properties ?? {})) {
    setOwn(fields, k, derive(v, goName));
    if (s.goName === undefined) continue;
    const pointer = s.pointers?.includes(k) === true;
    if (isGoStruct(v) && !pointer) byValue.push(k);
    // what Go's encoder writes unset: a struct or a time held by value, a field without omitempty
    if ((!pointer && (isGoStruct(v) || isGoTime(v))) || s.required?.includes(k) || s.withoutOmitEmpty?.includes(k)) writesZero.push(k);
  }
  const out: StructSchema = { type: 'struct', goName: s.goName ?? goName, fields, description: s.description };
  if (s.mapType === 'atomic') out.structType = 'atomic';
  if (s.required?.length) out.required = s.required;
  if (s.keepsEmpty?.length) out.keepsEmpty = s.keepsEmpty;
  if (byValue.length) out.heldByValue = new Set(byValue);
  if (writesZero.length) out.writesZero = writesZero;
  if (s.preserveUnknownFields) out.preservesUnknownFields = true;
  if (s.proto) out.proto = s.proto;
  return out;
}

function derived(s: BuiltinStructural, goName: string, derive: Derive): Schema {
  const description = s.description;
  if (s.intOrString) return { type: 'any', description };
  switch (s.type) {
    case 'string': return stringSchema(s);
    case 'boolean': return { type: 'boolean', description };
    case 'integer': {
      const format = s.format === 'int32' ? 'int32' : 'int64';
      return s.pointer ? { type: 'integer', format, description, pointer: true } : { type: 'integer', format, description };
    }
    case 'array': return listSchema(s, goName, derive);
    case 'object': {
      // a Go struct is a struct even without fields (RawExtension, Patch)
      if (s.goName !== undefined || (s.properties && Object.keys(s.properties).length > 0)) return structSchema(s, goName, derive);
      if (typeof s.additionalProperties === 'object') {
        return { type: 'map', values: derive(s.additionalProperties, goName), mapType: mapTypeOf(s), description };
      }
      return s.preserveUnknownFields ? { type: 'any', deduced: true, description } : { type: 'any', description };
    }
    default: return { type: 'any', description };
  }
}

/** A custom resource's schema: nested structs are named by `goName` (the field path) in decode errors. */
export function toInternal(s: BuiltinStructural, goName: string): Schema {
  return derived(s, goName, toInternal);
}

/**
 * Each built-in node derives once: a type shared by kinds (ObjectMeta, ObjectReference) is one
 * internal object, which OpenAPI names once and the codecs' per-schema caches key on.
 */
const builtinDerivations = new WeakMap<BuiltinStructural, Schema>();

export function internalOf(s: BuiltinStructural): Schema {
  let schema = builtinDerivations.get(s);
  if (!schema) {
    schema = derived(s, '', internalOf);
    builtinDerivations.set(s, schema);
  }
  return schema;
}

/** The internal form of a built-in struct declaration (`s.struct(...)`). */
export function internalStructOf(s: BuiltinStructural): StructSchema {
  const schema = internalOf(s);
  if (schema.type !== 'struct') throw new Error(`schema of type ${s.type} is not a struct`);
  return schema;
}
