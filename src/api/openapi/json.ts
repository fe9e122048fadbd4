/** JSON helpers of the OpenAPI documents: vendor extensions under both prefixes, and key order. */

export type Json = Record<string, unknown>;

/**
 * Every extension is written under our prefix and under Kubernetes': kubectl and client-go look up
 * only `x-kubernetes-*` (explain, client-side apply's patch metadata, the fieldValidation probe),
 * just as discovery answers under both group names.
 */
const extensionPrefixes = ['x-orch-', 'x-kubernetes-'];

export function extensions(values: Readonly<Record<string, unknown>>): Json {
  const out: Json = {};
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined) continue;
    for (const prefix of extensionPrefixes) out[prefix + name] = value;
  }
  return out;
}

/** Object keys in byte order at every level, as Kubernetes' published documents have them. */
export function sortKeys(value: unknown): Json {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (!v || typeof v !== 'object') return v;
    return Object.fromEntries(sortBy(Object.entries(v), ([k]) => k).map(([k, item]) => [k, sort(item)]));
  };
  return sort(value) as Json;
}

export function sortBy<T>(items: readonly T[], key: (item: T) => string): T[] {
  return [...items].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

