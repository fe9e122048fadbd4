/**
 * managedFields bookkeeping for non-apply writes (operation Update), as structured-merge-diff's
 * Updater does it: the writer takes ownership of everything it added or changed, every manager
 * loses what was removed, and a manager left owning nothing is dropped.
 */
import type { KindDeclaration } from '../api/kind.js';
import { apiVersionOf } from '../api/kind.js';
import type { KObject, ManagedFieldsEntry } from '../api/meta.js';
import { formatTime } from '../api/schema.js';
import { parseFieldsV1, toFieldsV1, valuePaths, type PathKey } from './field-set.js';

/** The manager name Kubernetes infers from a User-Agent: everything before the first '/', at most 128 characters. */
export function managerFromUserAgent(userAgent: string | undefined): string {
  return (userAgent ?? '').split('/')[0].slice(0, 128);
}

export interface UpdateOwnership {
  kind: KindDeclaration;
  manager: string;
  now: number;
  /** top-level fields the main resource resets (status of kinds with a status subresource) */
  resetFields?: readonly string[];
}

/**
 * Returns the managedFields the new object should carry after `manager` wrote it with a
 * non-apply operation. `old` is undefined for a create.
 */
export function updateManagedFields(next: KObject, old: KObject | undefined, o: UpdateOwnership): ManagedFieldsEntry[] {
  const reset = o.resetFields ?? [];
  const before = old ? valuePaths(o.kind.schema, old, reset) : new Map<PathKey, string | null>();
  const after = valuePaths(o.kind.schema, next, reset);
  const removed = new Set<PathKey>();
  const changed = new Set<PathKey>();
  for (const [path, value] of after) {
    if (!before.has(path) || (value !== null && before.get(path) !== value)) changed.add(path);
  }
  for (const path of before.keys()) if (!after.has(path)) removed.add(path);

  const apiVersion = apiVersionOf(o.kind);
  const entries: ManagedFieldsEntry[] = [];
  let mine: Set<PathKey> | undefined;
  let mineIndex = -1;
  for (const entry of old?.metadata.managedFields ?? []) {
    const set = parseFieldsV1(entry.fieldsV1);
    if (entry.manager === o.manager && entry.operation === 'Update' && !entry.subresource) {
      mine = set;
      mineIndex = entries.length;
      entries.push(entry);
      continue;
    }
    // an Update never conflicts: whatever it touched moves to the writer
    let touched = false;
    for (const p of [...removed, ...changed]) if (set.delete(p)) touched = true;
    if (!touched) { entries.push(entry); continue; }
    if (set.size > 0) entries.push({ ...entry, fieldsV1: toFieldsV1(set) });
  }
  const owned = mine ?? new Set<PathKey>();
  for (const p of removed) owned.delete(p);
  for (const p of changed) owned.add(p);
  const updated: ManagedFieldsEntry = {
    manager: o.manager, operation: 'Update', apiVersion, time: formatTime(o.now), fieldsType: 'FieldsV1', fieldsV1: toFieldsV1(owned),
  };
  if (mineIndex >= 0) {
    if (owned.size === 0) entries.splice(mineIndex, 1);
    else if (changed.size > 0 || removed.size > 0) entries[mineIndex] = updated;
  } else if (owned.size > 0) {
    entries.push(updated);
  }
  return entries;
}
