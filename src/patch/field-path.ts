/**
 * Paths of structured-merge-diff/v4's field sets: path elements in FieldsV1 notation (`f:` field or
 * map key, `k:` map-list key, `v:` set value, `i:` index), their order (PathElement.Compare) and
 * reading (Path.String), and Go's spelling of the values inside them.
 */
import { goQuote } from '../api/go-quote.js';

/** One serialized path element: `f:name`, `k:{"name":"a"}`, `v:"x"`, `i:0`. */
export type PathElement = string;
/** A path is the JSON of its element array; sets are keyed by it. */
export type PathKey = string;
export const pathKey = (elements: readonly PathElement[]): PathKey => JSON.stringify(elements);
export const pathElements = (key: PathKey): PathElement[] => JSON.parse(key) as PathElement[];

// ---------------------------------------------------------------------------------------------
// Go's spelling of values: sorted map keys and HTML-escaped strings (encoding/json, jsoniter's
// standard-library mode), `%q` quoting in path strings.

/** Go compares strings by UTF-8 bytes, which is code point order. */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.codePointAt(i) as number;
    const cb = b.codePointAt(i) as number;
    if (ca !== cb) return ca < cb ? -1 : 1;
    if (ca > 0xffff) i++;
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
}

function goString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** JSON as Go's encoding/json writes it: object keys sorted, `<`, `>`, `&` escaped. */
export function goJSON(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(goJSON).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).filter((k) => o[k] !== undefined).sort(compareStrings).map((k) => `${goString(k)}:${goJSON(o[k])}`).join(',')}}`;
  }
  if (typeof v === 'string') return goString(v);
  return JSON.stringify(v ?? null);
}

/** value.ToString: how a key or set value reads inside a path string. */
function valueString(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return goQuote(v);
  if (Array.isArray(v)) return `[${v.map(valueString).join(',')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return Object.keys(o).sort(compareStrings).map((k) => `${k}=${valueString(o[k])}`).join('');
  }
  return String(v);
}

const valueRank = (v: unknown): number =>
  typeof v === 'number' ? 0 : typeof v === 'string' ? 1 : typeof v === 'boolean' ? 2 : Array.isArray(v) ? 3 : v !== null && typeof v === 'object' ? 4 : 5;

/** value.Compare: numbers, then strings, booleans, lists, maps, null. */
function compareValues(a: unknown, b: unknown): number {
  const ra = valueRank(a);
  const rb = valueRank(b);
  if (ra !== rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 0: return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
    case 1: return compareStrings(a as string, b as string);
    case 2: return a === b ? 0 : a ? 1 : -1;
    case 3: {
      const la = a as unknown[];
      const lb = b as unknown[];
      for (let i = 0; i < Math.min(la.length, lb.length); i++) {
        const c = compareValues(la[i], lb[i]);
        if (c !== 0) return c;
      }
      return la.length - lb.length < 0 ? -1 : la.length > lb.length ? 1 : 0;
    }
    case 4: return compareFieldLists(a as Record<string, unknown>, b as Record<string, unknown>);
    default: return 0;
  }
}

/** value.FieldList.Compare over name-sorted fields: name, then value, then length. */
function compareFieldLists(a: Record<string, unknown>, b: Record<string, unknown>): number {
  const ka = Object.keys(a).sort(compareStrings);
  const kb = Object.keys(b).sort(compareStrings);
  for (let i = 0; i < Math.min(ka.length, kb.length); i++) {
    const c = compareStrings(ka[i], kb[i]) || compareValues(a[ka[i]], b[kb[i]]);
    if (c !== 0) return c;
  }
  return ka.length < kb.length ? -1 : ka.length > kb.length ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// Path elements: their order (PathElement.Compare) and their reading (Path.String).

export const elementRank: Record<string, number> = { f: 0, k: 1, v: 2, i: 3 };

/** Field names, then keys, then values, then indexes; each by its own ordering. */
export function compareElements(a: PathElement, b: PathElement): number {
  if (a === b) return 0;
  const ra = elementRank[a[0]];
  const rb = elementRank[b[0]];
  if (ra !== rb) return ra < rb ? -1 : 1;
  const ta = a.slice(2);
  const tb = b.slice(2);
  switch (a[0]) {
    case 'f': return compareStrings(ta, tb);
    case 'k': return compareFieldLists(JSON.parse(ta) as Record<string, unknown>, JSON.parse(tb) as Record<string, unknown>);
    case 'v': return compareValues(JSON.parse(ta), JSON.parse(tb));
    default: return Number(ta) < Number(tb) ? -1 : 1;
  }
}

export function elementString(e: PathElement): string {
  const body = e.slice(2);
  switch (e[0]) {
    case 'f': return `.${body}`;
    case 'k': {
      const key = JSON.parse(body) as Record<string, unknown>;
      return `[${Object.keys(key).sort(compareStrings).map((k) => `${k}=${valueString(key[k])}`).join(',')}]`;
    }
    case 'v': return `[=${valueString(JSON.parse(body))}]`;
    default: return `[${body}]`;
  }
}

/** How Kubernetes prints a path in conflicts and errors: `.metadata.labels.app`, `.secrets[name="a"]`. */
export function pathString(key: PathKey): string {
  return pathElements(key).map(elementString).join('');
}
