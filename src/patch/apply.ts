/**
 * Server-side apply, as Kubernetes' field manager chain runs it around structured-merge-diff's
 * Updater.Apply: the version check, the client-side-apply upgrade for `kubectl`
 * (lastappliedmanager.go, lastappliedupdater.go), the first apply to an untracked object
 * (skipnonapplied.go), then merge, prune and ownership (merge/update.go), and the conflict error
 * (internal/conflict.go).
 */
import { copyJson } from '../api/json-copy.js';
import type { KindDeclaration } from '../api/kind.js';
import { parseJson } from '../codec/json.js';
import { setOwn } from '../api/own-member.js';
import { apiVersionOf } from '../api/kind.js';
import type { KObject } from '../api/meta.js';
import { formatTime, type Schema } from '../api/schema.js';
import { errors, StatusError } from '../status/status-error.js';
import { compareStrings, goJSON, pathString, type PathKey } from './field-path.js';
import { difference, orderedPaths, recursiveDifference, union, type FieldSet } from './field-set.js';
import { validateTyped } from './typed-schema.js';
import { compareObjects, ensureNamedFieldsAreMembers, jsonEqual, mergeObjects, removeItems, toFieldSet } from './typed-walks.js';
import {
  capUpdateManagers, decodeManagedFields, encodeManagedFields, excludeFields, managerIdentifier, printOwner, reconcileManaged,
  recordUpdate, resetSet, stripMeta, takeFromOthers, withoutManagedFields, type Managed, type Owner,
} from './managed-fields.js';

export interface ApplyInput {
  kind: KindDeclaration;
  /** the stored object; undefined when the apply creates it */
  live: KObject | undefined;
  /** the applied configuration as sent (the parsed YAML/JSON body, not yet decoded) */
  applied: KObject;
  manager: string;
  force: boolean;
  now: number;
  /** top-level fields the request may not set (`f:status` on a main resource with a status subresource, all but `f:status` on it) */
  resetFields?: readonly string[];
  /** the subresource applied to (`status`): its own manager entries */
  subresource?: string;
}

export interface ApplyConflict {
  /** the owning entry's manager name */
  manager: string;
  /** the field as Kubernetes prints it: `.metadata.labels.app`, `.secrets[name="a"]` */
  field: string;
  /** the owner as Kubernetes names it in messages: `"mgr"`, or `"mgr" using v1` for an Update entry */
  owner: string;
}

export type ApplyResult = { object: KObject } | { conflicts: ApplyConflict[] };

/** kubectl's client-side apply annotation, which a server-side apply by `kubectl` takes over. */
const lastAppliedAnnotation = 'kubectl.kubernetes.io/last-applied-configuration';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** GroupVersionKind.String(): `/v1, Kind=ServiceAccount`. */
function gvkString(apiVersion: unknown, kind: unknown): string {
  const av = typeof apiVersion === 'string' ? apiVersion : '';
  const parts = av.split('/');
  const [group, version] = parts.length === 2 ? parts : parts.length === 1 ? ['', av] : ['', ''];
  return `${group}/${version}, Kind=${typeof kind === 'string' ? kind : ''}`;
}

/**
 * Merges `applied` into `live` for `manager` and records ownership. Returns the object to store,
 * with its new managedFields, or the conflicts that stop the apply. Throws the StatusError
 * Kubernetes answers for an applied object it cannot take (400 for a wrong type or managedFields
 * in the body, 500 for one that does not fit the schema).
 * The caller still checks name and namespace against the URL, defaults, validates and stores;
 * strategy changes made after this point are not ownership.
 */
export function serverSideApply(input: ApplyInput): ApplyResult {
  const { kind, applied } = input;
  const apiVersion = apiVersionOf(kind);
  // in Kubernetes' order: the live entries, the type, managedFields in the body, the typed body
  let managed: Managed;
  try {
    managed = decodeManagedFields(input.live?.metadata.managedFields ?? [], true);
  } catch (err) {
    throw errors.unknown(`failed to decode managed fields: ${(err as Error).message}`);
  }
  if (applied.apiVersion !== apiVersion || applied.kind !== kind.kind) {
    throw errors.badRequest(`invalid object type: ${gvkString(applied.apiVersion, applied.kind)}`);
  }
  // any list, even an empty one; unstructured.GetManagedFields reads nothing else
  if (Array.isArray(applied.metadata?.managedFields)) {
    throw errors.badRequest('metadata.managedFields must be nil');
  }
  const typeErrors = validateTyped(kind.schema, applied);
  if (typeErrors.length) {
    const detail = typeErrors.length === 1 ? typeErrors[0] : ['errors:', ...typeErrors.map((e) => `  ${e}`)].join('\n');
    const meta = (isRecord(applied.metadata) ? applied.metadata : {}) as { namespace?: unknown; name?: unknown };
    // kube-apiserver 1.32 answers this with a 500; it is the client's mistake, and upstream makes it a 400
    throw errors.badRequest(`failed to create typed patch object (${String(meta.namespace ?? '')}/${String(meta.name ?? '')}; ${gvkString(applied.apiVersion, applied.kind)}): ${detail}`);
  }

  let result = applyOnce(input, managed, input.force);
  if ('conflicts' in result && input.manager === 'kubectl') {
    // conflicts on fields kubectl's client-side apply last set to their live values are not conflicts
    const allowed = allowedFromLastApplied(kind.schema, apiVersion, input.live);
    if (allowed) {
      const remaining = result.conflicts.filter((c) => !allowed.has(c.path));
      result = remaining.length ? { conflicts: remaining } : applyOnce(input, managed, true);
    }
  }
  if ('conflicts' in result) return { conflicts: result.conflicts.map(({ manager, field, owner }) => ({ manager, field, owner })) };
  const object = result.object;
  if (input.manager === 'kubectl' && object.metadata.annotations?.[lastAppliedAnnotation]) {
    // keep client-side apply in step: the annotation becomes what was just applied
    object.metadata.annotations[lastAppliedAnnotation] = lastAppliedValue(applied);
  }
  return { object };
}

type Attempt = { object: KObject } | { conflicts: Array<ApplyConflict & { path: PathKey }> };

/** One run of the chain below the client-side-apply upgrade, on copies of the inputs. */
function applyOnce(input: ApplyInput, decoded: Managed, force: boolean): Attempt {
  const { kind, manager, now } = input;
  const schema = kind.schema;
  const apiVersion = apiVersionOf(kind);
  const reset = resetSet(input.resetFields);
  const managed: Managed = new Map(decoded);
  const live = withoutManagedFields(input.live);

  if (managed.size === 0) {
    // an object nobody tracked yet: its current fields go to `before-first-apply`
    recordUpdate(schema, { metadata: {} }, live, managed, { manager: 'before-first-apply', apiVersion }, reset, now);
    capUpdateManagers(managed);
  }
  reconcileManaged(schema, apiVersion, managed);

  const subresource = input.subresource ? { subresource: input.subresource } : {};
  const id = managerIdentifier({ manager, operation: 'Apply', apiVersion, ...subresource });
  const lastSet = managed.get(id)?.set;
  const applier: Owner = { manager, operation: 'Apply', apiVersion, ...subresource, set: recursiveDifference(toFieldSet(schema, input.applied), reset) };
  const previousTime = managed.get(id)?.time;
  if (previousTime) applier.time = previousTime;
  managed.set(id, applier);

  let merged: unknown = mergeObjects(schema, live, input.applied) ?? {};
  if (lastSet?.size) merged = prune(schema, merged, managed, lastSet);

  const c = excludeFields(compareObjects(schema, live, merged), reset);
  const conflicts = takeFromOthers(managed, id, c, force);
  if (conflicts.size) return { conflicts: describeConflicts(managed, conflicts) };

  const own = managed.get(id);
  if (own) {
    const set = stripMeta(own.set);
    if (set.size) managed.set(id, { ...own, set });
    else managed.delete(id);
  }
  const changed = !jsonEqual(live, merged);
  if (changed && managed.has(id)) managed.set(id, { ...(managed.get(id) as Owner), time: formatTime(now) });

  const object = (changed ? dropNulls(merged) : copyJson(live)) as KObject;
  object.metadata ??= {};
  const entries = encodeManagedFields(managed);
  if (entries.length) object.metadata.managedFields = entries;
  return { object };
}

/**
 * Updater.prune: removes what the applier applied last time and omits now, unless another manager
 * (or the new configuration) owns it, and never anything the applier did not own before.
 */
function prune(schema: Schema, merged: unknown, managed: Managed, lastSet: FieldSet): unknown {
  const last = ensureNamedFieldsAreMembers(schema, lastSet);
  let pruned = removeItems(schema, merged, last);
  // add back what any manager owns
  let owned: FieldSet = new Set();
  for (const owner of managed.values()) owned = union(owned, owner.set);
  const mergedSet = ensureNamedFieldsAreMembers(schema, toFieldSet(schema, merged));
  const keep = union(ensureNamedFieldsAreMembers(schema, toFieldSet(schema, pruned)), ensureNamedFieldsAreMembers(schema, owned));
  pruned = removeItems(schema, merged, difference(mergedSet, keep));
  // remove only what the applier owned before
  const prunedSet = ensureNamedFieldsAreMembers(schema, toFieldSet(schema, pruned));
  const dangling = new Set([...difference(mergedSet, prunedSet)].filter((p) => last.has(p)));
  return removeItems(schema, merged, dangling) ?? {};
}

function describeConflicts(managed: Managed, conflicts: Map<string, FieldSet>): Array<ApplyConflict & { path: PathKey }> {
  const out: Array<ApplyConflict & { path: PathKey }> = [];
  // Kubernetes groups conflicts by sorted manager identifier
  for (const id of [...conflicts.keys()].sort(compareStrings)) {
    const owner = managed.get(id) as Owner;
    for (const path of orderedPaths(conflicts.get(id) as FieldSet)) {
      out.push({ manager: owner.manager, field: pathString(path), owner: printOwner(owner), path });
    }
  }
  return out;
}

/**
 * The fields kubectl's last client-side apply set and the live object still holds: an apply by
 * `kubectl` may take them over without force. Undefined when there is no usable annotation.
 */
function allowedFromLastApplied(schema: Schema, apiVersion: string, live: KObject | undefined): FieldSet | undefined {
  const text = live?.metadata.annotations?.[lastAppliedAnnotation];
  if (!text) return undefined;
  let last: unknown;
  try {
    last = parseJson(text);
  } catch {
    return undefined;
  }
  if ((last as KObject | null)?.apiVersion !== apiVersion || validateTyped(schema, last).length) return undefined;
  const c = compareObjects(schema, last, withoutManagedFields(live));
  return difference(difference(difference(toFieldSet(schema, last), c.modified), c.added), c.removed);
}

/** The applied configuration without the annotation itself, as kubectl writes it (Go JSON and a newline). */
function lastAppliedValue(applied: KObject): string {
  const copy = copyJson(applied);
  if (copy.metadata?.annotations) delete copy.metadata.annotations[lastAppliedAnnotation];
  return `${goJSON(copy)}\n`;
}

/** What the typed object keeps: a null is Go's zero value, which is not written. */
function dropNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropNulls);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (x !== null && x !== undefined) setOwn(out, k, dropNulls(x));
  return out;
}

/**
 * The 409 Kubernetes answers for apply conflicts: every conflicting field as a cause, the message
 * grouped by manager when there is more than one.
 */
export function conflictError(conflicts: readonly ApplyConflict[]): StatusError {
  let message: string;
  if (conflicts.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${conflicts[0].owner}: ${conflicts[0].field}`;
  } else {
    const groups = new Map<string, string[]>();
    for (const c of conflicts) groups.set(c.owner, [...(groups.get(c.owner) ?? []), c.field]);
    const lines = [...groups].flatMap(([owner, fields]) => [`conflicts with ${owner}:`, ...fields.map((f) => `- ${f}`)]);
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  const causes = conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${c.owner}`, field: c.field }));
  return new StatusError(409, 'Conflict', message, { causes });
}
