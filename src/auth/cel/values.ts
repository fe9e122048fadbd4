/**
 * Values in and out of CEL without loading the CEL library: JSON as CEL input, and results as
 * Kubernetes converts them.
 */

export class CelEvalError extends Error {}

/** JSON (a token's claims, a user) as CEL input: objects as Maps, so no prototype member is ever a field. */
export function celInput(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(celInput);
  if (value !== null && typeof value === 'object') {
    return new Map(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, celInput(v)]));
  }
  return value;
}

/** Kubernetes' convertCELValueToStringList: a string (empty: none), a list of strings, or null. */
export function toStringList(value: unknown): string[] {
  if (typeof value === 'string') return value === '' ? [] : [value];
  if (value === null) return [];
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value as string[];
  throw new CelEvalError('expression must return a string or a list of strings');
}
