/**
 * Go's view of a strategic merge patch's values and the errors strategicpatch words with it: the
 * Go kind a decoded JSON value has, and values printed as fmt's %v and %s print them.
 */
import type { Schema } from '../api/schema.js';
import { errors, type StatusError } from '../status/status-error.js';
import { isMap, unprocessablePatch, type Json, type JsonMap } from './json-patch.js';

export type GoKind = 'map' | 'slice' | 'string' | 'bool' | 'int64' | 'float64' | 'nil';

/** The Go type a decoded JSON value has (kube-apiserver decodes integers as int64). */
export function goKind(v: Json): GoKind {
  if (v === null) return 'nil';
  if (Array.isArray(v)) return 'slice';
  if (typeof v === 'object') return 'map';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  return typeof v === 'boolean' ? 'bool' : 'string';
}

/** sliceElementType: the one element kind of the lists, which may not be a list. */
export function elementKind(...lists: Json[][]): GoKind {
  let kind: GoKind | undefined;
  for (const v of lists.flat()) {
    const k = goKind(v);
    if (kind === undefined) {
      if (k === 'slice') throw unprocessablePatch();
      kind = k;
    } else if (k !== kind) {
      throw untyped(`list element types are not identical: ${goFormat(lists)}`);
    }
  }
  if (kind === undefined) throw untyped('no elements in any of the given slices');
  return kind;
}

/** The reflect.Kind of the Go type a list's elements have, as PatchMetaFromStruct.Name() gives it. */
export function goKindOfSchema(schema: Schema | undefined): string {
  return schema?.type === 'struct' || schema?.type === 'map' ? schema.type : 'interface';
}

/** An error kube-apiserver does not type: 500 with the error's text and no reason. */
export function untyped(message: string): StatusError {
  return errors.unknown(message);
}

export function badPatchType(directive: Json, m: JsonMap): StatusError {
  return untyped(`unknown patch type: ${goFormat(directive, 's')} in map: ${goFormat(m)}`);
}

export function noMergeKey(m: JsonMap, mergeKey: string): StatusError {
  return untyped(`map: ${goFormat(m)} does not contain declared merge key: ${mergeKey}`);
}

export function badArgType(expected: string, actual: Json): StatusError {
  const goTypes: Record<GoKind, string> = {
    map: 'map[string]interface {}', slice: '[]interface {}', string: 'string', bool: 'bool', int64: 'int64', float64: 'float64', nil: '%!s(<nil>)',
  };
  return untyped(`expected a ${expected}, but received a ${goTypes[goKind(actual)]}`);
}

/** A value as Go's fmt prints it with %v (or %s): maps with sorted keys, lists space-separated. */
export function goFormat(v: Json | Json[][], verb: 'v' | 's' = 'v'): string {
  if (Array.isArray(v)) return `[${(v as Json[]).map((x) => goFormat(x, verb)).join(' ')}]`;
  if (isMap(v)) return `map[${Object.keys(v).sort().map((k) => `${k}:${goFormat(v[k], verb)}`).join(' ')}]`;
  if (typeof v === 'string') return v;
  const text = v === null ? '<nil>' : typeof v === 'number' ? goNumber(v) : String(v);
  if (verb === 'v') return text;
  return v === null ? '%!s(<nil>)' : `%!s(${goKind(v)}=${text})`;
}

/** int64 in decimal; float64 as %v prints it: shortest digits, exponent below 1e-4 or from 1e+06. */
function goNumber(n: number): string {
  if (Number.isInteger(n)) return String(n);
  const [mantissa, exponent] = n.toExponential().split('e');
  const exp = Number(exponent);
  if (exp >= -4 && exp < 6) return String(n);
  return `${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
}
