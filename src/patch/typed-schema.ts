/**
 * A kind's schema as structured-merge-diff reads it (list, map and struct kinds, the elements of
 * list items), and the validation of an applied object against it (typed/validate.go).
 *
 * Values are JSON; `undefined` is an absent field and `null` an explicit null, which SMD keeps apart.
 */
import type { ListSchema, Schema } from '../api/schema.js';
import { compareStrings, elementString, goJSON, type PathElement } from './field-path.js';

// ---------------------------------------------------------------------------------------------
// The schema as SMD reads it.

export type ListKind = { type: 'atomic' } | { type: 'set' } | { type: 'map'; keys: readonly string[] };

/**
 * The list's element relationship. A declaration without listType falls back to its patch
 * strategy, as kube-openapi's schemaconv does: merge with a merge key is a map keyed by it, merge
 * without one a set, anything else atomic.
 */
export function listKindOf(schema: ListSchema): ListKind {
  const declared: string | undefined = schema.listType;
  if (declared === 'atomic') return { type: 'atomic' };
  if (declared === 'set') return { type: 'set' };
  if (declared === 'map') return schema.listMapKeys?.length ? { type: 'map', keys: schema.listMapKeys } : { type: 'set' };
  if (schema.patchStrategy === 'merge' || schema.patchStrategy === 'merge,retainKeys') {
    return schema.patchMergeKey ? { type: 'map', keys: [schema.patchMergeKey] } : { type: 'set' };
  }
  return { type: 'atomic' };
}

/** Lists, maps and structs owned whole; scalars are always leaves. */
export function isAtomicContainer(schema: Schema): boolean {
  switch (schema.type) {
    case 'list': return listKindOf(schema).type === 'atomic';
    case 'map': return schema.mapType === 'atomic';
    case 'struct': return schema.structType === 'atomic';
    default: return false;
  }
}

export const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * An undeclared field a struct keeps (preserve-unknown-fields), or an object schema that keeps
 * every field it holds: SMD's deduced type. What it is depends on the value: an object is a
 * granular map of deduced entries, a list atomic, anything else a leaf. Walks take it through
 * `resolved`.
 */
const deduced: Schema = { type: 'any', deduced: true };
const deducedMap: Schema = { type: 'map', values: deduced, mapType: 'granular' };

const isDeduced = (schema: Schema): boolean => schema.type === 'any' && schema.deduced === true;

/** The schema a walk reads at these values: a deduced node holding objects (wherever present) is a map. */
export function resolved(schema: Schema, value: unknown, other?: unknown): Schema {
  if (!isDeduced(schema) || (value === undefined && other === undefined)) return schema;
  return (value === undefined || isObject(value)) && (other === undefined || isObject(other)) ? deducedMap : schema;
}

/** The schema below a map key or struct field; undefined for a field the struct does not declare. */
export function childSchema(schema: Schema, key: string): Schema | undefined {
  if (schema.type === 'struct') {
    if (Object.hasOwn(schema.fields, key)) return schema.fields[key];
    return schema.preservesUnknownFields ? deduced : undefined;
  }
  if (schema.type === 'map') return schema.values;
  // a path into a deduced value (reconciling a set) can only have gone through its maps
  return isDeduced(schema) ? deduced : undefined;
}

/** A struct field the typed object always carries, even empty (StructSchema.heldByValue). */
export function alwaysPresent(parent: Schema, field: string): boolean {
  return parent.type === 'struct' && parent.heldByValue?.has(field) === true;
}

/** The path element of a list item, or the reason it has none (typed/helpers.go wording). */
export function itemElement(kind: ListKind, item: unknown, index: number): { element: PathElement } | { error: string } {
  if (kind.type === 'atomic') return { element: `i:${index}` };
  if (kind.type === 'set') {
    if (isObject(item)) return { error: 'associative list without keys has an element that\'s a map type' };
    if (Array.isArray(item)) return { error: 'not supported: associative list with lists as elements' };
    if (item === null || item === undefined) return { error: 'associative list without keys has an element that\'s an explicit null' };
    return { element: `v:${goJSON(item)}` };
  }
  if (item === null || item === undefined) return { error: 'associative list with keys may not have a null element' };
  if (!isObject(item)) return { error: 'associative list with keys may not have non-map elements' };
  const key: Record<string, unknown> = {};
  for (const name of kind.keys) {
    if (!Object.hasOwn(item, name) || item[name] === undefined) {
      return { error: `associative list with keys has an element that omits key field ${JSON.stringify(name)} (and doesn't have default value)` };
    }
    key[name] = item[name];
  }
  return { element: `k:${goJSON(key)}` };
}

// ---------------------------------------------------------------------------------------------
// Validation of an applied object (typed/validate.go): what makes Kubernetes refuse to type it.

/** Go's %v of an unstructured value, as SMD's value wrapper prints inside `&{...}`. */
function goValue(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(goValue).join(' ')}]`;
  if (isObject(v)) return `map[${Object.keys(v).sort(compareStrings).map((k) => `${k}:${goValue(v[k])}`).join(' ')}]`;
  return v === null ? '<nil>' : String(v);
}

/** Go's %T of an unstructured value. */
function goType(v: unknown): string {
  if (Array.isArray(v)) return '[]interface {}';
  if (isObject(v)) return 'map[string]interface {}';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  return typeof v === 'boolean' ? 'bool' : 'string';
}

/** The kind check SMD makes before walking a value (mapValue, listValue, validateScalar). */
function typeMismatch(s: Schema, v: unknown): string | undefined {
  switch (s.type) {
    case 'struct': case 'map': return isObject(v) ? undefined : `expected map, got &{${goValue(v)}}`;
    case 'list': return Array.isArray(v) ? undefined : `expected list, got &{${goValue(v)}}`;
    case 'integer': return typeof v === 'number' ? undefined : `expected numeric (int or float), got ${goType(v)}`;
    case 'boolean': return typeof v === 'boolean' ? undefined : `expected boolean, got &{${goValue(v)}}`;
    case 'any': return undefined;
    default:
      return typeof v === 'string' ? undefined
        : `expected string, got &value.valueUnstructured{Value:${typeof v === 'object' ? goValue(v) : String(v)}}`;
  }
}

/** Errors as `path: message`, in SMD's wording; empty when the value is a valid typed value. */
export function validateTyped(schema: Schema, value: unknown): string[] {
  const errs: string[] = [];
  const at = (path: PathElement[], message: string): void => {
    errs.push(path.length ? `${path.map(elementString).join('')}: ${message}` : message);
  };
  const walk = (s: Schema, v: unknown, path: PathElement[]): void => {
    if (v === null || v === undefined) return;
    const mismatch = typeMismatch(s, v);
    if (mismatch) { at(path, mismatch); return; }
    if (s.type === 'list' && Array.isArray(v)) {
      const kind = listKindOf(s);
      const seen = new Set<PathElement>();
      for (let i = 0; i < v.length; i++) {
        const pe = itemElement(kind, v[i], i);
        if ('error' in pe) { at(path, `element ${i}: ${pe.error}`); return; }
        if (kind.type !== 'atomic' && seen.has(pe.element)) at(path, `duplicate entries for key ${elementString(pe.element)}`);
        seen.add(pe.element);
        walk(s.items, v[i], [...path, pe.element]);
      }
    } else if ((s.type === 'struct' || s.type === 'map') && isObject(v)) {
      for (const [k, child] of Object.entries(v)) {
        const cs = childSchema(s, k);
        if (!cs) { at([...path, `f:${k}`], 'field not declared in schema'); return; }
        walk(cs, child, [...path, `f:${k}`]);
      }
    }
  };
  walk(schema, value, []);
  return errs;
}
