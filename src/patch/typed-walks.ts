/**
 * The typed walks that managed fields and apply are built from, driven by a kind's schema:
 * ToFieldSet, Compare, Merge, RemoveItems (structured-merge-diff/v4 typed/*.go).
 *
 * Values are JSON; `undefined` is an absent field and `null` an explicit null, which SMD keeps apart.
 */
import { ownValue, setOwn } from '../api/own-member.js';
import type { Schema } from '../api/schema.js';
import { pathElements, pathKey, type PathElement, type PathKey } from './field-path.js';
import { treeOf, type FieldSet, type SetNode } from './field-set.js';
import { alwaysPresent, childSchema, isAtomicContainer, isObject, itemElement, listKindOf, resolved, type ListKind } from './typed-schema.js';

// ---------------------------------------------------------------------------------------------
// ToFieldSet (typed/tofieldset.go): every leaf, list item and map entry the value mentions.
// Declared struct fields and granular maps themselves are not members; atomic nodes are, whole.

export function toFieldSet(schema: Schema, value: unknown): FieldSet {
  const out: FieldSet = new Set();
  const insert = (path: PathElement[]): void => { if (path.length) out.add(pathKey(path)); };
  const walk = (declared: Schema, v: unknown, path: PathElement[]): void => {
    const s = resolved(declared, v);
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
        // a map's entries are members, as are a struct's undeclared (kept) fields; declared fields are not
        if (s.type === 'map' || !Object.hasOwn(s.fields, k)) insert([...path, `f:${k}`]);
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
  // one path, pushed and popped as the walk descends (every write compares whole objects, so a
  // path array per field was most of its garbage); it is serialized only when it is a member
  const path: PathElement[] = [];
  const insert = (set: FieldSet): void => { if (path.length) set.add(pathKey(path)); };
  const leaf = (l: unknown, r: unknown): void => {
    if (l === undefined) insert(c.added);
    else if (r === undefined) insert(c.removed);
    else if (!jsonEqual(l, r)) insert(c.modified);
  };
  const field = (s: Schema, lm: Record<string, unknown> | undefined, rm: Record<string, unknown> | undefined, k: string): void => {
    const cs = childSchema(s, k);
    if (!cs) return;
    let lv = lm && ownValue(lm, k);
    let rv = rm && ownValue(rm, k);
    if (alwaysPresent(s, k)) { if (lm && lv === undefined) lv = {}; if (rm && rv === undefined) rv = {}; }
    if (lv === undefined && rv === undefined) return;
    path.push(`f:${k}`);
    walk(cs, lv, rv);
    path.pop();
  };
  const walk = (declared: Schema, l: unknown, r: unknown): void => {
    const s = resolved(declared, l, r);
    if (s.type === 'list') {
      const kind = listKindOf(s);
      if (kind.type === 'atomic' || (emptyList(l) && emptyList(r))) return leaf(l, r);
      const lItems = indexItems(kind, l);
      const rItems = indexItems(kind, r);
      for (const pe of new Set([...lItems.keys(), ...rItems.keys()])) {
        const ls = lItems.get(pe) ?? [];
        const rs = rItems.get(pe) ?? [];
        path.push(pe);
        if (ls.length <= 1 && rs.length <= 1) walk(s.items, ls[0], rs[0]);
        else if (ls.length >= 2 && rs.length >= 2) { if (!jsonEqual(ls, rs)) insert(c.modified); }
        else if (ls.length >= 2) { if (rs.length) walk(s.items, undefined, rs[0]); insert(c.removed); }
        else { if (ls.length) walk(s.items, ls[0], undefined); insert(c.added); }
        path.pop();
      }
    } else if (s.type === 'struct' || s.type === 'map') {
      if (isAtomicContainer(s) || (emptyMap(l) && emptyMap(r))) return leaf(l, r);
      const lm = isObject(l) ? l : undefined;
      const rm = isObject(r) ? r : undefined;
      // the left side's keys, then the right side's others
      if (lm) for (const k of Object.keys(lm)) field(s, lm, rm, k);
      if (rm) for (const k of Object.keys(rm)) if (!lm || !Object.hasOwn(lm, k)) field(s, lm, rm, k);
    } else {
      return leaf(l, r);
    }
    if (l === undefined) insert(c.added);
    else if (r === undefined) insert(c.removed);
  };
  walk(schema, lhs, rhs);
  return c;
}

// ---------------------------------------------------------------------------------------------
// Merge (typed/merge.go): the applied value wins on every leaf it names; granular lists keep the
// live order except where the applied order of shared items says otherwise.

export function mergeObjects(schema: Schema, lhs: unknown, rhs: unknown): unknown {
  const leaf = (l: unknown, r: unknown): unknown => (r !== undefined ? r : l);
  const walk = (declared: Schema, l: unknown, r: unknown): unknown => {
    const s = resolved(declared, l, r);
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
  const walk = (declared: Schema, v: unknown, node: SetNode): unknown => {
    const s = resolved(declared, v);
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

/** The schema node one path element leads to from `s`, or undefined where it leaves the schema. */
function childAt(s: Schema, e: PathElement): Schema | undefined {
  if (s.type === 'list') return s.items;
  return e.startsWith('f:') ? childSchema(s, e.slice(2)) : undefined;
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
    // the schema of each proper prefix, one step further each time
    let s: Schema | undefined = schema;
    for (let i = 1; i < elements.length; i++) {
      s = childAt(s, elements[i - 1]);
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
