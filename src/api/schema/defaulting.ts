/**
 * Structural defaulting (apiextensions' defaulting algorithm): a property absent from an object
 * takes a copy of its schema's `default`, top-down, so defaults inside a default apply too; a null
 * in a non-nullable field with a default is defaulted, one without a default is dropped
 * (PruneNonNullableNullsWithoutDefaults). Applied on create, update and apply, and when reading
 * objects stored before a default existed.
 */
import type { Structural } from './structural.js';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Whether any node of the schema declares a default (a schema without one never changes a value). */
export function hasDefaults(s: Structural | undefined): boolean {
  if (!s) return false;
  if (s.default !== undefined) return true;
  if (s.items && hasDefaults(s.items)) return true;
  if (typeof s.additionalProperties === 'object' && hasDefaults(s.additionalProperties)) return true;
  return Object.values(s.properties ?? {}).some(hasDefaults);
}

/** Defaults `value` in place; true when anything changed. */
export function applyDefaults(value: unknown, s: Structural): boolean {
  if (Array.isArray(value)) {
    let changed = false;
    if (s.items) for (let i = 0; i < value.length; i++) {
      if (value[i] === null && !s.items.nullable && s.items.default !== undefined) { value[i] = structuredClone(s.items.default); changed = true; }
      changed = applyDefaults(value[i], s.items) || changed;
    }
    return changed;
  }
  if (!isObject(value)) return false;
  let changed = false;
  for (const [k, prop] of Object.entries(s.properties ?? {})) {
    const present = Object.hasOwn(value, k);
    if (prop.default !== undefined && (!present || (value[k] === null && !prop.nullable))) {
      value[k] = structuredClone(prop.default);
      changed = true;
    } else if (present && value[k] === null && !prop.nullable) {
      delete value[k];
      changed = true;
    }
  }
  for (const [k, v] of Object.entries(value)) {
    const prop = s.properties && Object.hasOwn(s.properties, k) ? s.properties[k] : undefined;
    const sub = prop ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
    if (sub) changed = applyDefaults(v, sub) || changed;
  }
  return changed;
}
