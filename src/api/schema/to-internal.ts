/**
 * A structural schema as the internal Schema (../schema.ts) the generic machinery reads: managed
 * fields and server-side apply (list/map markers), field selection, Table cells. Custom resources
 * are unstructured: every list is atomic unless the schema says `x-orch-list-type`, maps and
 * structs are granular unless `x-orch-map-type: atomic`. Scalars whose JSON type the internal
 * form does not distinguish (number, int-or-string, preserved unknowns) become `any` leaves.
 */
import { setOwn } from '../own-member.js';
import type { ListType, MapType, Schema, StructSchema } from '../schema.js';
import type { Structural } from './structural.js';

function mapTypeOf(s: Structural): MapType {
  return s.mapType === 'atomic' ? 'atomic' : 'granular';
}

function listTypeOf(s: Structural): ListType {
  return s.listType === 'set' || s.listType === 'map' ? s.listType : 'atomic';
}

export function toInternal(s: Structural, goName: string): Schema {
  const description = s.description;
  if (s.intOrString) return { type: 'any', description };
  switch (s.type) {
    case 'string': return { type: 'string', description };
    case 'boolean': return { type: 'boolean', description };
    case 'integer': return { type: 'integer', format: s.format === 'int32' ? 'int32' : 'int64', description };
    case 'array': {
      const items = s.items ? toInternal(s.items, goName) : { type: 'any' as const };
      const listType = listTypeOf(s);
      return listType === 'map'
        ? { type: 'list', items, listType, listMapKeys: s.listMapKeys ?? [], description }
        : { type: 'list', items, listType, description };
    }
    case 'object': {
      if (s.properties && Object.keys(s.properties).length > 0) return toInternalStruct(s, goName);
      if (typeof s.additionalProperties === 'object') {
        return { type: 'map', values: toInternal(s.additionalProperties, goName), mapType: mapTypeOf(s), description };
      }
      return { type: 'any', description };
    }
    default: return { type: 'any', description };
  }
}

export function toInternalStruct(s: Structural, goName: string): StructSchema {
  const fields: Record<string, Schema> = {};
  for (const [k, v] of Object.entries(s.properties ?? {})) setOwn(fields, k, toInternal(v, goName));
  const out: StructSchema = { type: 'struct', goName, fields, description: s.description };
  if (s.mapType === 'atomic') out.structType = 'atomic';
  if (s.required?.length) out.required = s.required;
  return out;
}
