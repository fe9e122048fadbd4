/**
 * Strategic merge patch (`application/strategic-merge-patch+json`) as kube-apiserver 1.32 applies
 * it: k8s.io/apimachinery/pkg/util/strategicpatch mergeMap with the server's options
 * (MergeParallelList, IgnoreUnmatchedNulls), reading the merge markers from the kind's schema
 * where Go reads struct tags (`patchStrategy`, `patchMergeKey`; the schema declares them on lists
 * only). Inside an `any` node there are no markers: maps merge and lists are replaced, as in a
 * JSON merge patch.
 *
 * Behaviours worth knowing, all Kubernetes':
 * - a merged list puts patch items missing from the live list before the live items, unless a
 *   `$setElementOrder/<list>` directive orders them;
 * - `$patch: delete` in a list removes every element with that merge key; `$patch: merge` is an
 *   error on maps and list elements alike;
 * - values added where the object had nothing lose their nulls and `$patch`-marked maps;
 * - `$deleteFromPrimitiveList/<list>` on a list without the merge strategy replaces the list.
 *
 * Errors carry interpretStrategicMergePatchError's status (patch.go): malformed directives 400,
 * lists of lists 422, everything else the untyped error kube-apiserver answers with 500.
 */
import { copyJson } from '../api/json-copy.js';
import { setOwn } from '../api/own-member.js';
import type { Schema, StructSchema } from '../api/schema.js';
import { errors } from '../status/status-error.js';
import { goJsonKind, isMap, member, type Json, type JsonMap } from './json-patch.js';
import { badArgType, badPatchType, elementKind, goFormat, goKind, goKindOfSchema, noMergeKey, untyped, type GoKind } from './strategic-merge-errors.js';

const directiveMarker = '$patch';
const retainKeysDirective = '$retainKeys';
const deleteFromPrimitiveListPrefix = '$deleteFromPrimitiveList';
const setElementOrderPrefix = '$setElementOrder';

/**
 * Applies a decoded strategic merge patch to a copy of `original`, `schema` being the kind's.
 * A JSON null patch changes nothing (it decodes to a nil map); any other non-object is 400.
 */
export function applyStrategicMergePatch(original: object, patch: unknown, schema: StructSchema): object {
  if (patch === null) return copyJson(original);
  if (!isMap(patch)) throw errors.badRequest(`json: cannot unmarshal ${goJsonKind(patch)} into Go value of type map[string]interface {}`);
  return mergeMap(copyJson(original) as JsonMap, copyJson(patch), schema);
}

// ---- schema lookups (LookupPatchMeta) ----------------------------------------------------------

/** A field's schema (undefined where the schema is silent) with its patch strategy and merge key. */
interface FieldMeta { schema: Schema | undefined; strategy: string; mergeKey: string }

function lookupField(parent: Schema | undefined, key: string): FieldMeta {
  if (parent?.type !== 'struct') return { schema: parent?.type === 'map' ? parent.values : undefined, strategy: '', mergeKey: '' };
  const field = Object.hasOwn(parent.fields, key) ? parent.fields[key] : undefined;
  if (!field) throw untyped(`unable to find api field in struct ${parent.goName} for the json field ${JSON.stringify(key)}`);
  if (field.type !== 'list') return { schema: field, strategy: '', mergeKey: '' };
  // the retainKeys strategy only shapes patches clients compute; applying honours the directive
  const strategy = (field.patchStrategy ?? '').split(',').find((s) => s !== 'retainKeys') ?? '';
  return { schema: field, strategy, mergeKey: field.patchMergeKey ?? '' };
}

/** A list field's markers, with the schema of its elements. */
function lookupListField(parent: Schema | undefined, key: string): FieldMeta {
  const field = lookupField(parent, key);
  return { ...field, schema: field.schema?.type === 'list' ? field.schema.items : undefined };
}

// ---- maps --------------------------------------------------------------------------------------

function mergeMap(original: JsonMap, patch: JsonMap, schema: Schema | undefined): JsonMap {
  if (Object.hasOwn(patch, directiveMarker)) return mapDirective(patch);
  applyRetainKeys(original, patch);
  applyElementOrder(original, patch, schema);
  for (const [patchKey, patchValue] of Object.entries(patch)) {
    const isDeleteList = patchKey.startsWith(deleteFromPrimitiveListPrefix);
    const key = isDeleteList ? extractKey(patchKey, deleteFromPrimitiveListPrefix) : patchKey;
    if (patchValue === null) {
      delete original[key];
      continue;
    }
    const current = member(original, key);
    if (current === undefined || goKind(current) !== goKind(patchValue)) {
      // a deletion list for a list the object lacks deletes nothing
      if (!isDeleteList) putNewValue(original, key, patchValue);
    } else if (isMap(current)) {
      setOwn(original, key, mergeMap(current, patchValue as JsonMap, lookupField(schema, key).schema));
    } else if (Array.isArray(current)) {
      setOwn(original, key, mergeListField(current, patchValue as Json[], lookupListField(schema, key), isDeleteList));
    } else {
      setOwn(original, key, patchValue);
    }
  }
  return original;
}

function mapDirective(patch: JsonMap): JsonMap {
  const directive = patch[directiveMarker];
  if (directive === 'replace') {
    delete patch[directiveMarker];
    return patch;
  }
  if (directive === 'delete') return {};
  throw badPatchType(directive, patch);
}

/** A value for a member the object lacks: without nulls and without `$patch`-marked maps. */
function putNewValue(target: JsonMap, key: string, value: Json): void {
  discardNulls(value);
  const [clean, keep] = removeDirectives(value);
  if (keep) setOwn(target, key, clean);
  else delete target[key];
}

function discardNulls(value: Json): void {
  if (Array.isArray(value)) {
    value.forEach(discardNulls);
  } else if (isMap(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (v === null) delete value[k];
      else discardNulls(v);
    }
  }
}

function removeDirectives(value: Json): [Json, boolean] {
  if (Array.isArray(value)) {
    return [value.flatMap((v) => {
      const [clean, keep] = removeDirectives(v);
      return keep ? [clean] : [];
    }), true];
  }
  if (!isMap(value)) return [value, true];
  if (Object.hasOwn(value, directiveMarker)) return [null, false];
  for (const [k, v] of Object.entries(value)) {
    const [clean, keep] = removeDirectives(v);
    if (keep) setOwn(value, k, clean);
    else delete value[k];
  }
  return [value, true];
}

/** `$retainKeys`: members missing from the list are cleared; the patch may only set listed ones. */
function applyRetainKeys(original: JsonMap, patch: JsonMap): void {
  if (!Object.hasOwn(patch, retainKeysDirective)) return;
  const retain = patch[retainKeysDirective];
  delete patch[retainKeysDirective];
  if (!Array.isArray(retain)) throw errors.badRequest('invalid patch format of retainKeys');
  const kept = new Set<Json>(retain);
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || k.startsWith(deleteFromPrimitiveListPrefix) || k.startsWith(setElementOrderPrefix)) continue;
    if (!kept.has(k)) throw errors.badRequest('invalid patch format of retainKeys');
  }
  for (const k of Object.keys(original)) {
    if (!kept.has(k)) delete original[k];
  }
}

/** The list name after a directive prefix and '/'. */
function extractKey(key: string, prefix: string): string {
  const slash = key.indexOf('/');
  if (slash < 0 || key.slice(0, slash) !== prefix) {
    throw errors.badRequest(prefix === deleteFromPrimitiveListPrefix
      ? 'invalid patch format of primitive list' : 'invalid patch format of setElementOrder list');
  }
  return key.slice(slash + 1);
}

// ---- lists -------------------------------------------------------------------------------------

function mergeListField(original: Json[], patch: Json[], field: FieldMeta, isDeleteList: boolean): Json[] {
  return field.strategy === 'merge' ? mergeList(original, patch, field, isDeleteList) : patch;
}

function mergeList(original: Json[], patch: Json[], field: FieldMeta, isDeleteList: boolean): Json[] {
  if (original.length === 0 && patch.length === 0) return original;
  const kind = elementKind(original, patch);
  const { mergeKey } = field;
  let live = original;
  let items = patch;
  let merged: Json[];
  if (kind !== 'map') {
    if (isDeleteList) return original.filter((v) => !patch.includes(v));
    merged = deduplicateScalars([...original, ...patch]);
  } else {
    if (!mergeKey) throw untyped(`cannot merge lists without merge key for ${goKindOfSchema(field.schema)}`);
    [live, items] = applyElementDirectives(original, patch, mergeKey);
    merged = mergeElements(live, items, mergeKey, field.schema);
  }
  const [fromPatch, liveOnly] = partition(merged, items, mergeKey);
  return normalizeOrder(fromPatch, liveOnly, items, live, mergeKey, kind);
}

/** `$patch` on list elements: delete removes every element with the key, replace keeps only the patch. */
function applyElementDirectives(original: Json[], patch: Json[], mergeKey: string): [Json[], Json[]] {
  let live = original;
  const rest: Json[] = [];
  let replace = false;
  for (const item of patch as JsonMap[]) {
    if (!Object.hasOwn(item, directiveMarker)) {
      rest.push(item);
      continue;
    }
    const directive = item[directiveMarker];
    if (directive === 'delete') {
      if (!Object.hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
      live = live.filter((v) => keyOf(v, mergeKey) !== item[mergeKey]);
    } else if (directive === 'replace') {
      replace = true;
    } else if (directive === 'merge') {
      throw untyped('merging lists cannot yet be specified in the patch');
    } else {
      throw badPatchType(directive, item);
    }
  }
  return replace ? [rest, []] : [live, rest];
}

function mergeElements(live: Json[], patch: Json[], mergeKey: string, schema: Schema | undefined): Json[] {
  const merged = [...live];
  for (const item of patch as JsonMap[]) {
    if (!Object.hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
    const at = merged.findIndex((v) => isMap(v) && Object.hasOwn(v, mergeKey) && v[mergeKey] === item[mergeKey]);
    if (at >= 0) merged[at] = mergeMap(merged[at] as JsonMap, item, schema);
    else merged.push(item);
  }
  return merged;
}

/** Go's in-place deduplication, which moves the last element into each duplicate's place. */
function deduplicateScalars(s: Json[]): Json[] {
  let last = s.length - 1;
  for (let i = 0; i < last; i++) {
    for (let j = i + 1; j <= last; j++) {
      if (s[i] === s[j]) {
        s[j] = s[last];
        s.length = last;
        last--;
        j--;
      }
    }
  }
  return s;
}

/** `$setElementOrder/<list>`: merges the list (if the patch has it) and orders it as directed. */
function applyElementOrder(original: JsonMap, patch: JsonMap, schema: Schema | undefined): void {
  for (const directiveKey of Object.keys(patch)) {
    if (!directiveKey.startsWith(setElementOrderPrefix)) continue;
    const order = patch[directiveKey];
    delete patch[directiveKey];
    if (!Array.isArray(order)) throw badArgType('[]interface {}', order);
    const key = extractKey(directiveKey, setElementOrderPrefix);
    const live = member(original, key);
    const patchList = member(patch, key);
    if (live !== undefined && !Array.isArray(live)) throw badArgType('[]interface {}', live);
    if (patchList !== undefined && !Array.isArray(patchList)) throw badArgType('[]interface {}', patchList);
    const field = lookupListField(schema, key);
    validateOrder(patchList ?? [], order, field.mergeKey);
    let merged: Json[];
    if (live && patchList) merged = mergeListField(live, patchList, field, false);
    else if (live) merged = live;
    else if (patchList) merged = removeDirectives(patchList)[0] as Json[];
    else continue;
    const [ordered, liveOnly] = partition(merged, order, field.mergeKey);
    const kind = elementKind(live ?? [], patchList ?? []);
    setOwn(original, key, normalizeOrder(ordered, liveOnly, order, live ?? [], field.mergeKey, kind));
    delete patch[key];
  }
}

/** The patch list's items must appear in the `$setElementOrder` list, in the same relative order. */
function validateOrder(patchList: Json[], order: Json[], mergeKey: string): void {
  if (order.length === 0 || patchList.length === 0) return;
  const items = mergeKey ? splitDeletions(patchList)[0] : patchList;
  let p = 0;
  let o = 0;
  while (p < items.length && o < order.length) {
    if (isMap(items[p]) && Object.hasOwn(items[p] as JsonMap, directiveMarker)) {
      p++;
      continue;
    }
    if (sameKey(items[p], order[o], mergeKey)) p++;
    o++;
  }
  if (p < items.length) {
    throw untyped(`The order in patch list:\n${goFormat(patchList)}\n doesn't match ${setElementOrderPrefix} list:\n${goFormat(order)}\n`);
  }
}

function sameKey(left: Json, right: Json, mergeKey: string): boolean {
  if (!mergeKey) return left === right;
  for (const side of [left, right]) {
    if (!isMap(side)) throw badArgType('map[string]interface {}', side);
    if (!Object.hasOwn(side, mergeKey)) throw noMergeKey(side, mergeKey);
  }
  return (left as JsonMap)[mergeKey] === (right as JsonMap)[mergeKey];
}

/** Elements without (first) and with a `$patch: delete` directive. */
function splitDeletions(list: Json[]): [Json[], Json[]] {
  const keep: Json[] = [];
  const deletions: Json[] = [];
  for (const v of list) {
    if (!isMap(v)) throw badArgType('map[string]interface {}', v);
    (v[directiveMarker] === 'delete' ? deletions : keep).push(v);
  }
  return [keep, deletions];
}

function keyOf(v: Json, mergeKey: string): Json {
  return isMap(v) ? member(v, mergeKey) ?? null : null;
}

/** The items of `list` present in `by` (by merge key, or by value for scalars), and the others. */
function partition(list: Json[], by: Json[], mergeKey: string): [Json[], Json[]] {
  const present: Json[] = [];
  const absent: Json[] = [];
  for (const v of list) {
    let found: boolean;
    if (!mergeKey) {
      found = by.includes(v);
    } else {
      if (!isMap(v)) throw badArgType('map[string]interface {}', v);
      if (!Object.hasOwn(v, mergeKey)) throw noMergeKey(v, mergeKey);
      found = false;
      for (const [i, other] of by.entries()) {
        if (!isMap(other)) throw untyped(`value for key ${i} is not a map`);
        if (Object.hasOwn(other, mergeKey) && other[mergeKey] === v[mergeKey]) {
          found = true;
          break;
        }
      }
    }
    (found ? present : absent).push(v);
  }
  return [present, absent];
}

/** Position of an item in an order list: by merge key for maps, by value otherwise. */
function indexIn(order: Json[], item: Json, mergeKey: string, kind: GoKind): number {
  const valueOf = (v: Json) => (kind === 'map' ? keyOf(v, mergeKey) : v);
  return order.findIndex((v) => valueOf(v) === valueOf(item));
}

/**
 * normalizeElementOrder: patch items in patch order, live-only items in live order, then the two
 * interleaved where the live list orders them, patch items first where it cannot.
 */
function normalizeOrder(patchItems: Json[], liveOnly: Json[], patchOrder: Json[], liveOrder: Json[], mergeKey: string, kind: GoKind): Json[] {
  const right = sortByOrder(patchItems, patchOrder, mergeKey, kind);
  const left = sortByOrder(liveOnly, liveOrder, mergeKey, kind);
  const out: Json[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (j >= right.length) {
      out.push(left[i++]);
    } else if (i >= left.length) {
      out.push(right[j++]);
    } else {
      const li = indexIn(liveOrder, left[i], mergeKey, kind);
      const ri = indexIn(liveOrder, right[j], mergeKey, kind);
      out.push(li >= 0 && ri >= 0 && li < ri ? left[i++] : right[j++]);
    }
  }
  return out;
}

/** A stable sort by position in `order` (every item is in it by construction); deletions go last. */
function sortByOrder(items: Json[], order: Json[], mergeKey: string, kind: GoKind): Json[] {
  let sortable = items;
  let deletions: Json[] = [];
  if (kind === 'map') {
    for (const v of [...items, ...order]) {
      if (!isMap(v)) throw badArgType('map[string]interface {}', v);
      if (!Object.hasOwn(v, mergeKey)) throw noMergeKey(v, mergeKey);
    }
    [sortable, deletions] = splitDeletions(items);
  }
  const ranked = sortable.map((v, i) => ({ v, i, at: indexIn(order, v, mergeKey, kind) }));
  ranked.sort((a, b) => a.at - b.at || a.i - b.i);
  return [...ranked.map((r) => r.v), ...deletions];
}
