/**
 * What a DELETE does about an object's dependents: which of the garbage collector's finalizers
 * (`orphan`, `foregroundDeletion`) the object keeps while it terminates. The rules are
 * k8s.io/apiserver's generic Store (shouldOrphanDependents, shouldDeleteDependents,
 * deletionFinalizersForGarbageCollection) and the namespace registry's own variant.
 */

/** The garbage collector removes the owner from its dependents' ownerReferences, then this finalizer. */
export const orphanFinalizer = 'orphan';
/** The garbage collector deletes the dependents (waiting for blocking ones), then removes this finalizer. */
export const foregroundFinalizer = 'foregroundDeletion';

/**
 * rest.GarbageCollectionPolicy: what a DELETE that names no propagation does with dependents.
 * `DeleteDependents` (background) unless a kind says otherwise; `Unsupported` never adds finalizers.
 */
export type GarbageCollectionPolicy = 'DeleteDependents' | 'OrphanDependents' | 'Unsupported';

/** DeleteOptions.propagationPolicy's values. */
export type DeletionPropagation = 'Orphan' | 'Background' | 'Foreground';

/** The DeleteOptions fields that choose propagation (`orphanDependents` is the deprecated form). */
export interface PropagationOptions {
  orphanDependents?: boolean;
  propagationPolicy?: string;
}

function shouldOrphan(policy: GarbageCollectionPolicy, finalizers: readonly string[], o: PropagationOptions): boolean {
  if (policy === 'Unsupported') return false;
  if (o.orphanDependents !== undefined) return o.orphanDependents;
  if (o.propagationPolicy === 'Orphan') return true;
  if (o.propagationPolicy === 'Background' || o.propagationPolicy === 'Foreground') return false;
  // an existing finalizer overrides the kind's default; the first one listed decides
  for (const f of finalizers) {
    if (f === orphanFinalizer) return true;
    if (f === foregroundFinalizer) return false;
  }
  return policy === 'OrphanDependents';
}

function shouldDeleteInForeground(policy: GarbageCollectionPolicy, finalizers: readonly string[], o: PropagationOptions): boolean {
  if (policy === 'Unsupported') return false;
  if (o.orphanDependents !== undefined) return false;
  if (o.propagationPolicy === 'Foreground') return true;
  if (o.propagationPolicy === 'Background' || o.propagationPolicy === 'Orphan') return false;
  for (const f of finalizers) {
    if (f === foregroundFinalizer) return true;
    if (f === orphanFinalizer) return false;
  }
  return false;
}

function withPropagation(finalizers: readonly string[], orphan: boolean, foreground: boolean): readonly string[] {
  const next = finalizers.filter((f) => f !== orphanFinalizer && f !== foregroundFinalizer);
  if (orphan) next.push(orphanFinalizer);
  if (foreground) next.push(foregroundFinalizer);
  const same = next.length === finalizers.length && next.every((f) => finalizers.includes(f));
  return same ? finalizers : next;
}

/**
 * The finalizers an object keeps after a DELETE with `options` (the generic Store's rule, applied
 * on every DELETE, so a second one may switch the propagation). The same array when unchanged.
 */
export function finalizersAfterDelete(policy: GarbageCollectionPolicy, finalizers: readonly string[], options: PropagationOptions): readonly string[] {
  return withPropagation(finalizers, shouldOrphan(policy, finalizers, options), shouldDeleteInForeground(policy, finalizers, options));
}

/**
 * The namespace registry's rule, applied only on the first DELETE: an explicit option sets or
 * clears each finalizer (`orphanDependents: false` means foreground here), else the finalizers stay.
 */
export function namespaceFinalizersAfterDelete(finalizers: readonly string[], o: PropagationOptions): readonly string[] {
  const has = (f: string) => finalizers.includes(f);
  const orphan = o.orphanDependents !== undefined ? o.orphanDependents
    : o.propagationPolicy !== undefined ? o.propagationPolicy === 'Orphan' : has(orphanFinalizer);
  const foreground = o.orphanDependents !== undefined ? !o.orphanDependents
    : o.propagationPolicy !== undefined ? o.propagationPolicy === 'Foreground' : has(foregroundFinalizer);
  return withPropagation(finalizers, orphan, foreground);
}
