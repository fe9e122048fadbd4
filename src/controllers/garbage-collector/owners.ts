/**
 * What an ownerReference points at, decided as kube-controller-manager's garbage collector does
 * (isDangling, classifyReferences), but from the read model instead of a GET per reference:
 *
 * - the reference's apiVersion and kind map to a resource through the kind registry (the REST
 *   mapping); a kind the registry does not serve cannot be decided yet;
 * - an owner of a namespaced kind is looked up in the dependent's own namespace (a reference has
 *   no namespace), so a reference to an object in another namespace finds nothing there and is
 *   absent; a cluster-scoped dependent cannot have a namespaced owner at all, and is never collected;
 * - the owner exists only if the object found carries the reference's uid.
 */
import { foregroundFinalizer } from '../../api/deletion-policy.js';
import type { KObject, OwnerReference } from '../../api/meta.js';
import { storageResourceOf } from '../../api/kind.js';
import type { ApiRegistry } from '../../api/registry/api-registry.js';
import type { ReadModel } from '../../store/read-model.js';
import { splitKey } from './owner-index.js';

export type Resolution =
  | { ok: true; key: string }
  | { ok: false; reason: 'unknownKind' | 'namespacedOwnerOfClusterScopedObject' };

/** The storage key of the object `ref` names, for a dependent in `namespace` ('' or undefined: cluster-scoped). */
export function ownerKey(kinds: ApiRegistry, ref: OwnerReference, namespace: string | undefined): Resolution {
  const kind = kinds.kindFor(ref.apiVersion, ref.kind);
  if (!kind) return { ok: false, reason: 'unknownKind' };
  const table = storageResourceOf(kind);
  if (!kind.namespaced) return { ok: true, key: `${table}/${ref.name}` };
  if (!namespace) return { ok: false, reason: 'namespacedOwnerOfClusterScopedObject' };
  return { ok: true, key: `${table}/${namespace}/${ref.name}` };
}

/** An owner that exists, terminating with foregroundDeletion: it waits for its dependents to go. */
export function isDeletingDependents(obj: Readonly<KObject>): boolean {
  return Boolean(obj.metadata.deletionTimestamp) && (obj.metadata.finalizers ?? []).includes(foregroundFinalizer);
}

export type OwnerState =
  /** exists and is not waiting for its dependents */
  | { state: 'solid'; key: string }
  /** exists, terminating in the foreground */
  | { state: 'waiting'; key: string }
  /** gone (or another object, with another uid, under its name) */
  | { state: 'dangling' }
  | { state: 'unresolvable'; reason: 'unknownKind' | 'namespacedOwnerOfClusterScopedObject' };

export function classifyOwner(readModel: ReadModel, kinds: ApiRegistry, ref: OwnerReference, namespace: string | undefined): OwnerState {
  const resolved = ownerKey(kinds, ref, namespace);
  if (!resolved.ok) return { state: 'unresolvable', reason: resolved.reason };
  const { resource, path } = splitKey(resolved.key);
  const owner = readModel.get(resource, path)?.object;
  if (!owner || owner.metadata.uid !== ref.uid) return { state: 'dangling' };
  return { state: isDeletingDependents(owner) ? 'waiting' : 'solid', key: resolved.key };
}
