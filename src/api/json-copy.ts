/**
 * Copies of the JSON values objects are made of (plain objects, arrays, strings, numbers,
 * booleans, null), for the write path's copies of stored and submitted objects.
 *
 * structuredClone goes through V8's serializer: 9.6 µs for a ServiceAccount with managedFields
 * on the 2-core machine, where this walk takes 1.7 µs (a microbenchmark of both). Keys are copied
 * as own data properties, `__proto__` included.
 */
import { setOwn } from './own-member.js';

/** A deep copy of a JSON value; anything that is not a plain object or array is handed to structuredClone. */
export function copyJson<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = copyJson(value[i]);
    return out as T;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    setOwn(out, key, copyJson((value as Record<string, unknown>)[key]));
  }
  return out as T;
}

/** The object as it was at another revision: only metadata.resourceVersion differs, the rest is shared. */
export function atResourceVersion<T extends { metadata: object }>(obj: T, resourceVersion: string): T {
  return { ...obj, metadata: { ...obj.metadata, resourceVersion } };
}
