/**
 * managedFields bookkeeping as k8s.io/apimachinery/pkg/util/managedfields/internal does it around
 * structured-merge-diff's Updater: entries decoded into per-manager field sets keyed by a manager
 * identifier (manager, operation, and for updates apiVersion; plus subresource), the Update
 * operation (the writer takes what it changed, nobody keeps what was removed), and the encoding
 * back into sorted entries. Apply (apply.ts) builds on the same pieces.
 */
import type { KindDeclaration } from '../api/kind.js';
import { apiVersionOf } from '../api/kind.js';
import type { KObject, ManagedFieldsEntry } from '../api/meta.js';
import { goQuote } from '../api/go-quote.js';
import { formatTime, type Schema } from '../api/schema.js';
import { zeroObjectOf } from '../api/schema/go-zero-values.js';
import { compareStrings, pathKey, type PathKey } from './field-path.js';
import { difference, intersection, parseFieldsV1, recursiveDifference, sameMembers, toFieldsV1, union, type FieldSet } from './field-set.js';
import { compareObjects, reconcileWithSchema, type Comparison } from './typed-walks.js';

/** The manager name Kubernetes infers from a User-Agent: everything before the first '/', at most 128 characters. */
export function managerFromUserAgent(userAgent: string | undefined): string {
  return (userAgent ?? '').split('/')[0].slice(0, 128);
}

/** One entry's ownership (SMD's VersionedSet with the entry's name and time). */
export interface Owner {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  subresource?: string;
  set: FieldSet;
  /** RFC 3339, as stored; absent on an entry whose fields never changed the object */
  time?: string;
  /**
   * The stored FieldsV1 document this owner's set was decoded from: while the set has the same
   * members, encoding hands the document back instead of building it again (most writes leave
   * most owners' fields as they were, the writer's own included).
   */
  decodedFrom?: { set: FieldSet; fieldsV1: Record<string, unknown> };
}

/** Owners keyed by manager identifier: one entry per manager, operation and subresource. */
export type Managed = Map<string, Owner>;

/**
 * BuildManagerIdentifier: the entry's JSON without fieldsType, fieldsV1 and time, and without
 * apiVersion for appliers (so that an applier is one entry whatever version it applies).
 */
export function managerIdentifier(o: Pick<Owner, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  const id: Record<string, string> = {};
  if (o.manager) id.manager = o.manager;
  id.operation = o.operation;
  if (o.operation === 'Update' && o.apiVersion) id.apiVersion = o.apiVersion;
  if (o.subresource) id.subresource = o.subresource;
  return JSON.stringify(id);
}

/** How conflict messages name an owner (printManager): `"mgr"`, `"mgr" with subresource "status" using v1`. */
export function printOwner(o: Pick<Owner, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  let s = goQuote(o.manager);
  if (o.subresource) s += ` with subresource ${goQuote(o.subresource)}`;
  return o.operation === 'Update' ? `${s} using ${o.apiVersion}` : s;
}

/** Fields no manager ever owns (StripMetaManager's set). */
const strippedPaths = new Set([
  ['f:apiVersion'], ['f:kind'], ['f:metadata'], ['f:metadata', 'f:name'], ['f:metadata', 'f:namespace'],
  ['f:metadata', 'f:creationTimestamp'], ['f:metadata', 'f:selfLink'], ['f:metadata', 'f:uid'], ['f:metadata', 'f:clusterName'],
  ['f:metadata', 'f:generation'], ['f:metadata', 'f:managedFields'], ['f:metadata', 'f:resourceVersion'],
].map(pathKey));

export function stripMeta(set: ReadonlySet<PathKey>): FieldSet {
  return difference(set, strippedPaths);
}

/** Reset fields given as top-level elements (`f:status`), as a set to exclude recursively. */
export function resetSet(resetFields: readonly string[] | undefined): FieldSet {
  return new Set((resetFields ?? []).map((e) => pathKey([e])));
}

/**
 * DecodeManagedFields. Throws on an entry Kubernetes cannot decode; the caller decides whether
 * that means "no managed fields" (updates) or an error (apply). `stored`: the entries are a
 * stored object's, written by encodeManagedFields, so each document is already in canonical form
 * and may be handed back as it is while its owner's set is unchanged (a client's may not).
 */
export function decodeManagedFields(entries: readonly ManagedFieldsEntry[], stored = false): Managed {
  const managed: Managed = new Map();
  entries.forEach((e, i) => {
    if (e.operation !== 'Apply' && e.operation !== 'Update') throw new Error('operation must be `Apply` or `Update`');
    if (!e.apiVersion) throw new Error('apiVersion must not be empty');
    if (!e.fieldsType) throw new Error(`missing fieldsType in managed fields entry ${i}`);
    if (e.fieldsType !== 'FieldsV1') throw new Error(`invalid fieldsType ${JSON.stringify(e.fieldsType)} in managed fields entry ${i}`);
    const owner: Owner = { manager: e.manager ?? '', operation: e.operation, apiVersion: e.apiVersion, set: parseFieldsV1(e.fieldsV1 ?? {}) };
    if (stored && e.fieldsV1) owner.decodedFrom = { set: owner.set, fieldsV1: e.fieldsV1 };
    if (e.subresource) owner.subresource = e.subresource;
    if (e.time) owner.time = e.time;
    managed.set(managerIdentifier(owner), owner);
  });
  return managed;
}

const seconds = (time: string | undefined): number => (time ? Math.floor(Date.parse(time) / 1000) : 0);

/** encodeManagedFields: entries sorted by operation, time (seconds), manager, apiVersion, subresource. */
export function encodeManagedFields(managed: Managed): ManagedFieldsEntry[] {
  const owners = [...managed.values()].sort((p, q) => {
    const byTime = seconds(p.time) - seconds(q.time);
    return compareStrings(p.operation, q.operation) || byTime || compareStrings(p.manager, q.manager)
      || compareStrings(p.apiVersion, q.apiVersion) || compareStrings(p.subresource ?? '', q.subresource ?? '');
  });
  return owners.map((o) => {
    const e: ManagedFieldsEntry = { manager: o.manager, operation: o.operation, apiVersion: o.apiVersion };
    // metav1.Time writes UTC seconds whatever offset it was given
    if (o.time) e.time = Number.isNaN(Date.parse(o.time)) ? o.time : formatTime(Date.parse(o.time));
    e.fieldsType = 'FieldsV1';
    e.fieldsV1 = o.decodedFrom && sameMembers(o.set, o.decodedFrom.set) ? o.decodedFrom.fieldsV1 : toFieldsV1(o.set);
    if (o.subresource) e.subresource = o.subresource;
    return e;
  });
}

/**
 * The start of every Updater operation: ownership inside nodes the schema now declares atomic
 * becomes ownership of the node. Entries recorded through another version of the object (an alias
 * group, a converted view such as core/v1 Events) are kept at their version, and the operation
 * treats their field paths as its own: paths the versions share name the same fields (all of them,
 * for an alias); a field a view renames is left with its owner. (Kubernetes converts the objects
 * to each entry's version instead.)
 */
export function reconcileManaged(schema: Schema, apiVersion: string, managed: Managed): void {
  for (const [id, owner] of managed) {
    if (owner.apiVersion !== apiVersion) continue;
    const reconciled = reconcileWithSchema(schema, owner.set);
    if (reconciled) managed.set(id, { ...owner, set: reconciled });
  }
}

/** Comparison.ExcludeFields: reset fields are nobody's business. */
export function excludeFields(c: Comparison, reset: ReadonlySet<PathKey>): Comparison {
  if (reset.size === 0) return c;
  return { added: recursiveDifference(c.added, reset), modified: recursiveDifference(c.modified, reset), removed: recursiveDifference(c.removed, reset) };
}

/**
 * Updater.update: every manager but `self` loses what was removed and, when forced, what `self`
 * changed. Without force, returns those changed fields per manager instead (the conflicts) and
 * leaves `managed` as it was. Managers left with nothing are dropped.
 */
export function takeFromOthers(managed: Managed, self: string | undefined, c: Comparison, force: boolean): Map<string, FieldSet> {
  const changed = union(c.modified, c.added);
  const conflicts = new Map<string, FieldSet>();
  for (const [id, owner] of managed) {
    if (id === self) continue;
    const lost = intersection(owner.set, changed);
    if (lost.size) conflicts.set(id, lost);
  }
  if (!force && conflicts.size) return conflicts;
  for (const [id, owner] of managed) {
    if (id === self) continue;
    const set = difference(difference(owner.set, conflicts.get(id) ?? new Set()), c.removed);
    if (set.size !== owner.set.size) managed.set(id, { ...owner, set });
  }
  for (const [id, owner] of managed) if (owner.set.size === 0) managed.delete(id);
  return new Map();
}

/** An object as the field manager sees it: managedFields are not part of the compared value. */
export function withoutManagedFields(obj: KObject | undefined): KObject {
  if (!obj) return { metadata: {} };
  const metadata = { ...obj.metadata };
  delete metadata.managedFields;
  return { ...obj, metadata };
}

export interface UpdateWriter {
  manager: string;
  apiVersion: string;
  subresource?: string;
}

/**
 * A non-apply write, as Updater.Update behind managedFieldsUpdater and stripMeta: the writer takes
 * every field it added or changed (merged into its previous entry, whose time moves to `now`),
 * other managers lose those fields and everything removed. A write that took nothing leaves the
 * writer's entry and time alone.
 */
export function recordUpdate(schema: Schema, live: KObject, next: KObject, managed: Managed, writer: UpdateWriter, reset: ReadonlySet<PathKey>, now: number): void {
  const c = excludeFields(compareObjects(schema, live, next), reset);
  // the write runs as a temporary manager, so the writer's own entry is one of the "others"
  takeFromOthers(managed, undefined, c, true);
  const taken = stripMeta(recursiveDifference(difference(union(c.modified, c.added), c.removed), reset));
  if (taken.size === 0) return;
  const owner: Owner = { manager: writer.manager || 'unknown', operation: 'Update', apiVersion: writer.apiVersion, set: taken };
  if (writer.subresource) owner.subresource = writer.subresource;
  const id = managerIdentifier(owner);
  const previous = managed.get(id);
  managed.set(id, { ...owner, set: previous ? union(taken, previous.set) : taken, decodedFrom: previous?.decodedFrom, time: formatTime(now) });
}

/** Update entries kept at most, the oldest beyond it merged into an `ancient-changes` entry per version (capmanagers.go). */
const maxUpdateManagers = 10;

export function capUpdateManagers(managed: Managed): void {
  const updaters = [...managed].filter(([, o]) => o.operation === 'Update');
  if (updaters.length <= maxUpdateManagers) return;
  updaters.sort(([ia, a], [ib, b]) => seconds(a.time) - seconds(b.time) || compareStrings(ia, ib));
  const firstOfVersion = new Map<string, string>();
  let length = updaters.length;
  for (let i = 0; i < updaters.length && length > maxUpdateManagers; i++) {
    const [id, owner] = updaters[i];
    const bucket = managerIdentifier({ manager: 'ancient-changes', operation: 'Update', apiVersion: owner.apiVersion });
    const first = firstOfVersion.get(owner.apiVersion);
    if (first === undefined) { firstOfVersion.set(owner.apiVersion, id); continue; }
    // the version's oldest entry becomes the bucket unless a bucket is already there
    const into = managed.get(bucket) ?? (managed.get(first) as Owner);
    if (!managed.has(bucket)) managed.delete(first);
    managed.set(bucket, { manager: 'ancient-changes', operation: 'Update', apiVersion: owner.apiVersion, set: union(owner.set, into.set), time: owner.time });
    managed.delete(id);
    length--;
  }
}

export interface UpdateOwnership {
  kind: KindDeclaration;
  manager: string;
  now: number;
  /** top-level fields the main resource resets (status of kinds with a status subresource) */
  resetFields?: readonly string[];
  /** the subresource written (`status`), recorded in the writer's entry */
  subresource?: string;
  /** a write through a subresource: managedFields in the request are not the client's to set */
  ignoreSentManagedFields?: boolean;
}

/** A request asks to reset managedFields with an empty list, or a list of one empty entry (isResetManagedFields). */
function isReset(entries: readonly ManagedFieldsEntry[] | undefined): boolean {
  if (!entries) return false;
  if (entries.length === 0) return true;
  return entries.length === 1 && Object.values(entries[0]).every((v) => v === undefined || v === '');
}

/**
 * The ownership a write starts from (fieldmanager.go decodeManagedFields): what the request
 * carries, when it is a valid, non-empty set of entries, so that clients can edit managedFields;
 * otherwise the live object's, so that clients unaware of managedFields never drop them.
 */
function startingOwnership(sent: KObject, live: KObject | undefined, ignoreSent: boolean): Managed {
  const fromLive = (): Managed => {
    try {
      return decodeManagedFields(live?.metadata.managedFields ?? [], true);
    } catch {
      return new Map();
    }
  };
  if (ignoreSent) return fromLive();
  if (isReset(sent.metadata.managedFields)) return new Map();
  try {
    const managed = decodeManagedFields(sent.metadata.managedFields ?? []);
    if (managed.size > 0) return managed;
  } catch { /* the live object's, below */ }
  return fromLive();
}

/**
 * Returns the managedFields the new object should carry after `manager` wrote it with a
 * non-apply operation. `old` is undefined for a create; `next` may carry managedFields the client
 * sent, which are the starting point when valid (a create keeps such entries' ownership of fields
 * the object does not have; the creator owns the rest). An existing object left without entries
 * (never tracked, or reset by the request) stays untracked, as Kubernetes' skip-non-applied
 * manager leaves it until the first apply.
 */
export function updateManagedFields(next: KObject, old: KObject | undefined, o: UpdateOwnership): ManagedFieldsEntry[] {
  const managed = startingOwnership(next, old, o.ignoreSentManagedFields ?? false);
  if (old && managed.size === 0) return [];
  const apiVersion = apiVersionOf(o.kind);
  reconcileManaged(o.kind.schema, apiVersion, managed);
  const writer: UpdateWriter = { manager: o.manager, apiVersion, subresource: o.subresource };
  // a create is compared with the kind's empty object as Go encodes it, zeros and all
  recordUpdate(o.kind.schema, withoutManagedFields(old ?? zeroObjectOf(o.kind.schema) as KObject), withoutManagedFields(next), managed, writer, resetSet(o.resetFields), o.now);
  capUpdateManagers(managed);
  return encodeManagedFields(managed);
}
