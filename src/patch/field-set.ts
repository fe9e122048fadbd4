/**
 * Field sets as sigs.k8s.io/structured-merge-diff/v4 keeps them, driven by a kind's schema: path
 * elements in FieldsV1 notation (`f:` field or map key, `k:` map-list key, `v:` set value, `i:`
 * index), set algebra, the FieldsV1 codec (fieldpath/serialize.go), and the typed walks that
 * managed fields and apply are built from: ToFieldSet, Compare, Merge, RemoveItems (typed/*.go).
 *
 * Values are JSON; `undefined` is an absent field and `null` an explicit null, which SMD keeps apart.
 */
import { goQuote } from '../api/go-quote.js';
import { ownValue, setOwn } from '../api/own-member.js';
import type { ListSchema, Schema } from '../api/schema.js';

/** One serialized path element: `f:name`, `k:{"name":"a"}`, `v:"x"`, `i:0`. */
export type PathElement = string;
/** A path is the JSON of its element array; sets are keyed by it. */
export type PathKey = string;
/** A set of paths, each naming an owned field. Parents are not implied members. */
export type FieldSet = Set<PathKey>;

export const pathKey = (elements: readonly PathElement[]): PathKey => JSON.stringify(elements);
const pathElements = (key: PathKey): PathElement[] => JSON.parse(key) as PathElement[];

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

const elementRank: Record<string, number> = { f: 0, k: 1, v: 2, i: 3 };

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

function elementString(e: PathElement): string {
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

// ---------------------------------------------------------------------------------------------
// Set algebra (fieldpath.Set): membership is per path, parents are never implied.

export function union(a: ReadonlySet<PathKey>, b: ReadonlySet<PathKey>): FieldSet {
  const out = new Set(a);
  for (const p of b) out.add(p);
  return out;
}

export function difference(a: ReadonlySet<PathKey>, b: ReadonlySet<PathKey>): FieldSet {
  const out = new Set<PathKey>();
  for (const p of a) if (!b.has(p)) out.add(p);
  return out;
}

export function intersection(a: ReadonlySet<PathKey>, b: ReadonlySet<PathKey>): FieldSet {
  const out = new Set<PathKey>();
  for (const p of a) if (b.has(p)) out.add(p);
  return out;
}

/** Removes every path in `b` together with everything below it. */
export function recursiveDifference(a: ReadonlySet<PathKey>, b: ReadonlySet<PathKey>): FieldSet {
  if (b.size === 0) return new Set(a);
  const out = new Set<PathKey>();
  for (const p of a) {
    const elements = pathElements(p);
    let covered = false;
    for (let i = 1; i <= elements.length && !covered; i++) covered = b.has(pathKey(elements.slice(0, i)));
    if (!covered) out.add(p);
  }
  return out;
}

interface SetNode { member: boolean; children: Map<PathElement, SetNode> }

function treeOf(set: ReadonlySet<PathKey>): SetNode {
  const root: SetNode = { member: false, children: new Map() };
  for (const p of set) {
    let node = root;
    for (const e of pathElements(p)) {
      let next = node.children.get(e);
      if (!next) node.children.set(e, next = { member: false, children: new Map() });
      node = next;
    }
    node.member = true;
  }
  return root;
}

function sortedChildren(node: SetNode): Array<[PathElement, SetNode]> {
  return [...node.children].sort(([a], [b]) => compareElements(a, b));
}

/** The set's paths in fieldpath.Set.Iterate order: a level's members, then its children in order. */
export function orderedPaths(set: ReadonlySet<PathKey>): PathKey[] {
  const out: PathKey[] = [];
  const visit = (node: SetNode, prefix: PathElement[]): void => {
    const children = sortedChildren(node);
    for (const [e, child] of children) if (child.member) out.push(pathKey([...prefix, e]));
    for (const [e, child] of children) if (child.children.size > 0) visit(child, [...prefix, e]);
  };
  visit(treeOf(set), []);
  return out;
}

// ---------------------------------------------------------------------------------------------
// FieldsV1 (fieldpath/serialize.go): keys in path-element order; a node that is itself a member
// and has children carries `.` as its last key; a member without children is `{}`.

/**
 * Reads a FieldsV1 document into the set of paths it names (readIterV1): a key with no children is
 * a member, `.` makes its node one too. Unknown element types are dropped, as SMD does; a
 * malformed key throws.
 */
export function parseFieldsV1(fields: unknown): FieldSet {
  const out: FieldSet = new Set();
  /** Returns whether the node is a member of its parent. */
  const read = (node: unknown, prefix: PathElement[]): boolean => {
    let member = false;
    let children = false;
    if (node !== null && typeof node === 'object') {
      for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
        if (k === '.') { member = true; continue; }
        if (k.length < 2 || k[1] !== ':') throw new Error(`missing colon: ${k}`);
        if (!(k[0] in elementRank)) continue;
        if (k[0] === 'k' || k[0] === 'v') JSON.parse(k.slice(2));
        children = true;
        if (read(v, [...prefix, k])) out.add(pathKey([...prefix, k]));
      }
    }
    return member || !children;
  };
  read(fields, []);
  return out;
}

/**
 * Documents written lately, by the paths of their sets. Objects of one shape (every ServiceAccount a
 * controller creates) give one set, and building its document was a third of a create's
 * managed-fields work (profiled); the documents are frozen, shared by every object that carries
 * them. Bounded: sets beyond `maxCachedKey` characters of paths are written anew each time, and
 * the cache starts over when full.
 */
const writtenDocuments = new Map<string, Readonly<Record<string, unknown>>>();
const maxWrittenDocuments = 512;
const maxCachedKey = 8192;

function deepFreeze<T extends object>(doc: T): T {
  for (const v of Object.values(doc)) if (v !== null && typeof v === 'object') deepFreeze(v as object);
  return Object.freeze(doc);
}

/** Writes a set of paths as a FieldsV1 document, byte-for-byte in Kubernetes' key order (frozen: it may be shared). */
export function toFieldsV1(set: ReadonlySet<PathKey>): Readonly<Record<string, unknown>> {
  // a path's JSON never holds a raw newline; sets of equal paths added in another order only miss
  let key = '';
  for (const p of set) {
    key += p;
    key += '\n';
    if (key.length > maxCachedKey) return deepFreeze(documentOf(set));
  }
  let doc = writtenDocuments.get(key);
  if (doc === undefined) {
    doc = deepFreeze(documentOf(set));
    if (writtenDocuments.size >= maxWrittenDocuments) writtenDocuments.clear();
    writtenDocuments.set(key, doc);
  }
  return doc;
}

function documentOf(set: ReadonlySet<PathKey>): Record<string, unknown> {
  const emit = (node: SetNode): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const [e, child] of sortedChildren(node)) {
      const body = emit(child);
      if (child.member && child.children.size > 0) body['.'] = {};
      out[e] = body;
    }
    return out;
  };
  return emit(treeOf(set));
}

// ---------------------------------------------------------------------------------------------
// The schema as SMD reads it.

type ListKind = { type: 'atomic' } | { type: 'set' } | { type: 'map'; keys: readonly string[] };

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
function isAtomicContainer(schema: Schema): boolean {
  switch (schema.type) {
    case 'list': return listKindOf(schema).type === 'atomic';
    case 'map': return schema.mapType === 'atomic';
    case 'struct': return schema.structType === 'atomic';
    default: return false;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The schema below a map key or struct field; undefined for a field the struct does not declare. */
function childSchema(schema: Schema, key: string): Schema | undefined {
  if (schema.type === 'struct') return Object.hasOwn(schema.fields, key) ? schema.fields[key] : undefined;
  if (schema.type === 'map') return schema.values;
  return undefined;
}

/**
 * Struct fields Go holds by pointer: absent until set, so adding one adds the struct itself (its
 * `.` in an Update entry). Every other struct field is a Go value the typed object always carries,
 * even empty. The schema DSL has no pointer marker; these are the pointer structs of our kinds.
 */
const pointerStructFields = new Set(['Event.related', 'Event.series']);

function alwaysPresent(parent: Schema, field: string): boolean {
  return parent.type === 'struct' && parent.fields[field]?.type === 'struct' && !pointerStructFields.has(`${parent.goName}.${field}`);
}

/** The path element of a list item, or the reason it has none (typed/helpers.go wording). */
function itemElement(kind: ListKind, item: unknown, index: number): { element: PathElement } | { error: string } {
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

// ---------------------------------------------------------------------------------------------
// ToFieldSet (typed/tofieldset.go): every leaf, list item and map entry the value mentions.
// Struct fields and granular maps themselves are not members; atomic nodes are, whole.

export function toFieldSet(schema: Schema, value: unknown): FieldSet {
  const out: FieldSet = new Set();
  const insert = (path: PathElement[]): void => { if (path.length) out.add(pathKey(path)); };
  const walk = (s: Schema, v: unknown, path: PathElement[]): void => {
    if (s.type === 'list') {
      const kind = listKindOf(s);
      if (kind.type === 'atomic') { insert(path); return; }
      if (!Array.isArray(v)) return;
      v.forEach((item, i) => {
        const pe = itemElement(kind, item, i);
        if ('error' in pe) return;
        walk(s.items, item, [...path, pe.element]);
        insert([...path, pe.element]);
      });
    } else if (s.type === 'struct' || s.type === 'map') {
      if (isAtomicContainer(s)) { insert(path); return; }
      if (!isObject(v)) return;
      for (const [k, child] of Object.entries(v)) {
        const cs = childSchema(s, k);
        if (!cs || child === undefined) continue;
        walk(cs, child, [...path, `f:${k}`]);
        if (s.type === 'map') insert([...path, `f:${k}`]);
      }
    } else {
      insert(path);
    }
  };
  walk(schema, value, []);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Compare (typed/compare.go): leaves added, modified or removed, plus every non-leaf node that
// appeared or disappeared as a whole (which is why an added granular map is a member: its `.`).

export interface Comparison { added: FieldSet; modified: FieldSet; removed: FieldSet }

/** value.Equals: deep, with map key order ignored. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

const emptyList = (v: unknown): boolean => !Array.isArray(v) || v.length === 0;
const emptyMap = (v: unknown): boolean => !isObject(v) || Object.keys(v).length === 0;

function indexItems(kind: ListKind, list: unknown): Map<PathElement, unknown[]> {
  const out = new Map<PathElement, unknown[]>();
  if (!Array.isArray(list)) return out;
  list.forEach((item, i) => {
    const pe = itemElement(kind, item, i);
    if ('error' in pe) return;
    const seen = out.get(pe.element);
    if (seen) seen.push(item);
    else out.set(pe.element, [item]);
  });
  return out;
}

export function compareObjects(schema: Schema, lhs: unknown, rhs: unknown): Comparison {
  const c: Comparison = { added: new Set(), modified: new Set(), removed: new Set() };
  const insert = (set: FieldSet, path: PathElement[]): void => { if (path.length) set.add(pathKey(path)); };
  const leaf = (l: unknown, r: unknown, path: PathElement[]): void => {
    if (l === undefined) insert(c.added, path);
    else if (r === undefined) insert(c.removed, path);
    else if (!jsonEqual(l, r)) insert(c.modified, path);
  };
  const walk = (s: Schema, l: unknown, r: unknown, path: PathElement[]): void => {
    if (s.type === 'list') {
      const kind = listKindOf(s);
      if (kind.type === 'atomic' || (emptyList(l) && emptyList(r))) return leaf(l, r, path);
      const lItems = indexItems(kind, l);
      const rItems = indexItems(kind, r);
      for (const pe of new Set([...lItems.keys(), ...rItems.keys()])) {
        const ls = lItems.get(pe) ?? [];
        const rs = rItems.get(pe) ?? [];
        const item = [...path, pe];
        if (ls.length <= 1 && rs.length <= 1) walk(s.items, ls[0], rs[0], item);
        else if (ls.length >= 2 && rs.length >= 2) { if (!jsonEqual(ls, rs)) insert(c.modified, item); }
        else if (ls.length >= 2) { if (rs.length) walk(s.items, undefined, rs[0], item); insert(c.removed, item); }
        else { if (ls.length) walk(s.items, ls[0], undefined, item); insert(c.added, item); }
      }
    } else if (s.type === 'struct' || s.type === 'map') {
      if (isAtomicContainer(s) || (emptyMap(l) && emptyMap(r))) return leaf(l, r, path);
      const lm = isObject(l) ? l : undefined;
      const rm = isObject(r) ? r : undefined;
      // a create or a removal has one side: its keys, without merging two lists into a set
      const keys = lm === undefined ? Object.keys(rm ?? {}) : rm === undefined ? Object.keys(lm) : new Set([...Object.keys(lm), ...Object.keys(rm)]);
      for (const k of keys) {
        const cs = childSchema(s, k);
        if (!cs) continue;
        let lv = lm && ownValue(lm, k);
        let rv = rm && ownValue(rm, k);
        if (alwaysPresent(s, k)) { if (lm && lv === undefined) lv = {}; if (rm && rv === undefined) rv = {}; }
        if (lv !== undefined || rv !== undefined) walk(cs, lv, rv, [...path, `f:${k}`]);
      }
    } else {
      return leaf(l, r, path);
    }
    if (l === undefined) insert(c.added, path);
    else if (r === undefined) insert(c.removed, path);
  };
  walk(schema, lhs, rhs, []);
  return c;
}

// ---------------------------------------------------------------------------------------------
// Merge (typed/merge.go): the applied value wins on every leaf it names; granular lists keep the
// live order except where the applied order of shared items says otherwise.

export function mergeObjects(schema: Schema, lhs: unknown, rhs: unknown): unknown {
  const leaf = (l: unknown, r: unknown): unknown => (r !== undefined ? r : l);
  const walk = (s: Schema, l: unknown, r: unknown): unknown => {
    if (s.type === 'list') {
      const kind = listKindOf(s);
      if (kind.type === 'atomic' || (emptyList(l) && emptyList(r))) return leaf(l, r);
      const lItems = indexItems(kind, l);
      const rItems = indexItems(kind, r);
      const lOrder = [...lItems.keys()];
      const rOrder = [...rItems.keys()];
      const shared = rOrder.filter((pe) => lItems.has(pe));
      let nextShared = shared.shift();
      const out: unknown[] = [];
      const emit = (pe: PathElement): void => {
        const v = walk(s.items, lItems.get(pe)?.[0], rItems.get(pe)?.[0]);
        if (v !== undefined) out.push(v);
      };
      for (let li = 0, ri = 0; li < lOrder.length || ri < rOrder.length;) {
        if (li < lOrder.length && ri < rOrder.length) {
          const pe = lOrder[li];
          if (pe === rOrder[ri]) {
            emit(pe);
            li++; ri++;
            nextShared = shared.shift();
            continue;
          }
          if (rItems.has(pe) && nextShared !== undefined && nextShared !== pe) { li++; continue; }
        }
        if (li < lOrder.length && !rItems.has(lOrder[li])) { emit(lOrder[li]); li++; continue; }
        if (ri < rOrder.length) {
          const pe = rOrder[ri];
          emit(pe);
          ri++;
          if (nextShared === pe) nextShared = shared.shift();
        }
      }
      return out.length ? out : undefined;
    }
    if (s.type === 'struct' || s.type === 'map') {
      if (isAtomicContainer(s) || (emptyMap(l) && emptyMap(r))) return leaf(l, r);
      const lm = isObject(l) ? l : {};
      const rm = isObject(r) ? r : {};
      const out: Record<string, unknown> = {};
      for (const k of new Set([...Object.keys(lm), ...Object.keys(rm)])) {
        const cs = childSchema(s, k);
        const l = ownValue(lm, k);
        const r = ownValue(rm, k);
        const v = cs ? walk(cs, l, r) : leaf(l, r);
        if (v !== undefined) setOwn(out, k, v);
      }
      return Object.keys(out).length ? out : undefined;
    }
    return leaf(l, r);
  };
  return walk(schema, lhs, rhs);
}

// ---------------------------------------------------------------------------------------------
// RemoveItems (typed/remove.go): drops every map entry and list item named by the set. As in SMD,
// a container left empty (or an empty or atomic one descended into) becomes null.

export function removeItems(schema: Schema, value: unknown, set: ReadonlySet<PathKey>): unknown {
  const walk = (s: Schema, v: unknown, node: SetNode): unknown => {
    if (s.type === 'list') {
      const kind = listKindOf(s);
      if (!Array.isArray(v) || v.length === 0 || kind.type === 'atomic') return null;
      const items: unknown[] = [];
      v.forEach((item, i) => {
        const pe = itemElement(kind, item, i);
        if ('element' in pe) {
          if (node.children.get(pe.element)?.member) return;
          const below = node.children.get(pe.element);
          if (below && below.children.size > 0) item = walk(s.items, item, below);
        }
        items.push(item);
      });
      return items.length ? items : null;
    }
    if (s.type === 'struct' || s.type === 'map') {
      if (!isObject(v) || Object.keys(v).length === 0 || isAtomicContainer(s)) return null;
      const out: Record<string, unknown> = {};
      for (const [k, child] of Object.entries(v)) {
        const below = node.children.get(`f:${k}`);
        if (below?.member) continue;
        const cs = childSchema(s, k);
        setOwn(out, k, below && below.children.size > 0 && cs ? walk(cs, child, below) : child);
      }
      return Object.keys(out).length ? out : null;
    }
    return v;
  };
  return walk(schema, value, treeOf(set));
}

/** The schema node a path leads to, or undefined where it leaves the schema. */
function schemaAt(root: Schema, elements: readonly PathElement[]): Schema | undefined {
  let s: Schema | undefined = root;
  for (const e of elements) {
    if (!s) return undefined;
    if (s.type === 'list') s = s.items;
    else if (e.startsWith('f:')) s = childSchema(s, e.slice(2));
    else return undefined;
  }
  return s;
}

/**
 * Set.EnsureNamedFieldsAreMembers: adds every struct field above a member, so that removing the
 * set also removes the structs it reaches into (map entries above a member are not added).
 */
export function ensureNamedFieldsAreMembers(schema: Schema, set: ReadonlySet<PathKey>): FieldSet {
  const out = new Set(set);
  for (const p of set) {
    const elements = pathElements(p);
    let s: Schema | undefined = schema;
    for (let i = 0; i < elements.length - 1 && s; i++) {
      const e = elements[i];
      if (s.type === 'struct' && e.startsWith('f:') && Object.hasOwn(s.fields, e.slice(2))) out.add(pathKey(elements.slice(0, i + 1)));
      s = s.type === 'list' ? (e.startsWith('k:') ? s.items : undefined) : e.startsWith('f:') ? childSchema(s, e.slice(2)) : undefined;
    }
  }
  return out;
}

/**
 * ReconcileFieldSetWithSchema: ownership recorded inside a list, map or struct that the schema now
 * declares atomic becomes ownership of the whole node. The reverse change is not reconciled: a
 * whole-node owner owns nothing granular, so it conflicts with nobody.
 * Returns undefined when nothing changed.
 */
export function reconcileWithSchema(schema: Schema, set: ReadonlySet<PathKey>): FieldSet | undefined {
  let out: FieldSet | undefined;
  for (const p of set) {
    const elements = pathElements(p);
    for (let i = 1; i < elements.length; i++) {
      const s = schemaAt(schema, elements.slice(0, i));
      if (!s) break;
      if (isAtomicContainer(s)) {
        out ??= new Set(set);
        out.delete(p);
        out.add(pathKey(elements.slice(0, i)));
        break;
      }
    }
  }
  return out;
}
