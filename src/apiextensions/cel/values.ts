/**
 * Values in and out of CEL for validation rules: JSON typed by the structural schema (integers as
 * CEL int, which @bufbuild/cel represents as bigint; numbers as double; objects as Maps so that no
 * prototype member is ever a field), and an optional old value (`optionalOldSelf`).
 */
import { cel } from '../../cel/engine.js';
import type { Structural } from '../../api/schema/structural.js';

/** The key that marks a map as an optional value (oldSelf under optionalOldSelf). */
export const optionalKey = '\u0000orch.optional';

export function celValueOf(value: unknown, s: Structural | undefined): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') {
    if (s?.type === 'number') return value;
    return Number.isInteger(value) ? BigInt(value) : value;
  }
  if (Array.isArray(value)) return value.map((v) => celValueOf(v, s?.items));
  if (typeof value === 'object') {
    const out = new Map<string, unknown>();
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const prop = s?.properties && Object.hasOwn(s.properties, k) ? s.properties[k] : typeof s?.additionalProperties === 'object' ? s.additionalProperties : undefined;
      out.set(k, celValueOf(v, prop));
    }
    return out;
  }
  return value;
}

/** An optional: `optional.of(value)` when present, `optional.none()` when not. */
export function optionalOf(value: unknown): Map<string, unknown> {
  return value === undefined ? new Map([[optionalKey, false]]) : new Map<string, unknown>([[optionalKey, true], ['value', value]]);
}

/** A CEL result as plain JavaScript (lists as arrays, maps as Maps). */
export function plainOf(value: unknown): unknown {
  if (cel().isCelList(value)) return [...(value as Iterable<unknown>)].map(plainOf);
  if (cel().isCelMap(value)) {
    const out = new Map<unknown, unknown>();
    for (const [k, v] of value as Iterable<[unknown, unknown]>) out.set(plainOf(k), plainOf(v));
    return out;
  }
  return value;
}
