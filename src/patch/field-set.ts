/**
 * Field sets as sigs.k8s.io/structured-merge-diff/v4 keeps them: set algebra (fieldpath.Set) and
 * the FieldsV1 codec (fieldpath/serialize.go). The typed walks that build and use them are in
 * typed-walks.ts.
 */
import { compareElements, elementRank, pathElements, pathKey, type PathElement, type PathKey } from './field-path.js';

/** A set of paths, each naming an owned field. Parents are not implied members. */
export type FieldSet = Set<PathKey>;

// ---------------------------------------------------------------------------------------------
// Set algebra (fieldpath.Set): membership is per path, parents are never implied.

export function sameMembers(a: ReadonlySet<PathKey>, b: ReadonlySet<PathKey>): boolean {
  if (a === b) return true;
  if (a.size !== b.size) return false;
  for (const p of a) if (!b.has(p)) return false;
  return true;
}

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

/** A set as a tree of its path elements: the walks that follow a set down a value read it so. */
export interface SetNode { member: boolean; children: Map<PathElement, SetNode> }

export function treeOf(set: ReadonlySet<PathKey>): SetNode {
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
  /**
   * Returns whether the node is a member of its parent. `open` is the node's path key without its
   * closing bracket: a child's key extends it by one element, as pathKey would write the whole
   * path (every stored object's entries are read on every write, so paths are not rebuilt per key).
   */
  const read = (node: unknown, open: string): boolean => {
    let member = false;
    let children = false;
    if (node !== null && typeof node === 'object') {
      const doc = node as Record<string, unknown>;
      for (const k of Object.keys(doc)) {
        if (k === '.') { member = true; continue; }
        if (k.length < 2 || k[1] !== ':') throw new Error(`missing colon: ${k}`);
        if (!(k[0] in elementRank)) continue;
        if (k[0] === 'k' || k[0] === 'v') JSON.parse(k.slice(2));
        children = true;
        const childOpen = `${open}${open.length > 1 ? ',' : ''}${JSON.stringify(k)}`;
        if (read(doc[k], childOpen)) out.add(`${childOpen}]`);
      }
    }
    return member || !children;
  };
  read(fields, '[');
  return out;
}

/** Writes a set of paths as a FieldsV1 document, byte-for-byte in Kubernetes' key order. */
export function toFieldsV1(set: ReadonlySet<PathKey>): Record<string, unknown> {
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
