/**
 * The garbage collector (kube-controller-manager's garbagecollector): deletes objects whose
 * owners are all gone, and finishes the deletions that asked for propagation.
 *
 * - Background: an object whose ownerReferences all point at absent owners is deleted.
 * - Foreground: an owner terminating with the `foregroundDeletion` finalizer gets its dependents
 *   deleted; dependents with `blockOwnerDeletion: true` keep it until they are gone; then the
 *   finalizer is removed (and the registry removes the owner).
 * - Orphan: an owner terminating with the `orphan` finalizer is removed from every dependent's
 *   ownerReferences, then the finalizer is removed.
 *
 * It works from the read model and its change feed (dependents indexed by owner uid, never a
 * scan per change), for every kind of the registry (looked up per reference, so kinds may come and
 * go), and rebuilds its graph from the read model when it starts, so that what changed while no
 * collector ran is collected too.
 */
import { orphanFinalizer, foregroundFinalizer, type DeletionPropagation } from '../../api/deletion-policy.js';
import type { KindDeclaration } from '../../api/kind.js';
import type { KObject, OwnerReference } from '../../api/meta.js';
import { storageResourceOf } from '../../api/kind.js';
import type { ApiRegistry } from '../../api/registry/api-registry.js';
import type { ObjectStore } from '../../resource-store/object-store.js';
import type { ObjectChange, ReadModel } from '../../store/read-model.js';
import { RetryLater, WorkQueue } from '../work-queue.js';
import { OwnerIndex, splitKey } from './owner-index.js';
import { classifyOwner, isDeletingDependents, ownerKey } from './owners.js';
import { CollectorWrites } from './writes.js';

export interface GarbageCollectorDeps {
  readModel: ReadModel;
  kinds: ApiRegistry;
  /** the store that writes objects of a kind */
  storeOf(kind: KindDeclaration): ObjectStore | undefined;
  onError(err: unknown): void;
  /** keys worked at once (kube-controller-manager's --concurrent-gc-syncs is 20) */
  workers?: number;
}

const orphanBatch = 64;

/** A dependent of one owner: the object and its reference to that owner. */
interface Dependent { key: string; object: Readonly<KObject>; ref: OwnerReference }

function sameReferences(a: readonly OwnerReference[] | undefined, b: readonly OwnerReference[] | undefined): boolean {
  if (!a?.length || !b?.length) return !a?.length && !b?.length;
  return JSON.stringify(a) === JSON.stringify(b);
}

export class GarbageCollector {
  private readonly graph = new OwnerIndex();
  private readonly writes: CollectorWrites;
  /** objects to collect, and owners waiting in the foreground (attemptToDelete) */
  private readonly attemptToDelete: WorkQueue;
  /** owners terminating with the orphan finalizer (attemptToOrphan) */
  private readonly attemptToOrphan: WorkQueue;
  private readonly unsubscribe: () => void;

  constructor(private readonly deps: GarbageCollectorDeps) {
    this.writes = new CollectorWrites(deps.kinds, deps.storeOf);
    const options = { workers: deps.workers ?? 8, onError: (err: unknown) => deps.onError(err) };
    this.attemptToDelete = new WorkQueue((key) => this.collect(key), options);
    this.attemptToOrphan = new WorkQueue((key) => this.orphan(key), options);
    this.unsubscribe = deps.readModel.onChange((changes) => { for (const c of changes) this.observe(c); });
    this.rebuild();
  }

  stop(): void {
    this.unsubscribe();
    this.attemptToDelete.stop();
    this.attemptToOrphan.stop();
  }

  /** Resolves once nothing is queued or being worked. */
  async idle(): Promise<void> {
    await Promise.all([this.attemptToDelete.idle(), this.attemptToOrphan.idle()]);
  }

  /** Every stored object, as if it had just been added. */
  private rebuild(): void {
    const resources = new Set(this.deps.kinds.storageKinds().map(storageResourceOf));
    for (const resource of resources) {
      this.deps.readModel.table(resource).forEach((stored, path) => this.observeObject(`${resource}/${path}`, stored.object, undefined));
    }
  }

  private observe(change: ObjectChange): void {
    const key = `${change.resource}/${change.path}`;
    if (change.type !== 'DELETED') {
      this.observeObject(key, change.object.object, change.previous?.object);
      return;
    }
    const gone = change.object.object;
    this.graph.remove(key);
    // its dependents may have lost their last owner; its owners may have lost a blocking dependent
    this.enqueueDependents(gone.metadata.uid);
    this.enqueueWaitingOwners(gone);
  }

  private observeObject(key: string, obj: Readonly<KObject>, previous: Readonly<KObject> | undefined): void {
    const refs = obj.metadata.ownerReferences ?? [];
    this.graph.set(key, refs.map((ref) => ref.uid));
    const referencesChanged = !previous || !sameReferences(previous.metadata.ownerReferences, refs);
    if (refs.length > 0 && referencesChanged) this.attemptToDelete.add(key);
    // a reference removed or unblocked may free an owner waiting in the foreground
    if (previous && referencesChanged) this.enqueueWaitingOwners(previous);
    if (!obj.metadata.deletionTimestamp) return;
    const finalizers = obj.metadata.finalizers ?? [];
    if (finalizers.includes(orphanFinalizer)) this.attemptToOrphan.add(key);
    if (finalizers.includes(foregroundFinalizer)) {
      this.attemptToDelete.add(key);
      // it starts waiting for its dependents: every one of them is asked to go
      if (!previous || !isDeletingDependents(previous)) this.enqueueDependents(obj.metadata.uid);
    }
  }

  private enqueueDependents(uid: string | undefined): void {
    if (uid) for (const key of this.graph.dependentsOf(uid)) this.attemptToDelete.add(key);
  }

  private enqueueWaitingOwners(dependent: Readonly<KObject>): void {
    for (const ref of dependent.metadata.ownerReferences ?? []) {
      const resolved = ownerKey(this.deps.kinds, ref, dependent.metadata.namespace);
      if (!resolved.ok) continue;
      const { resource, path } = splitKey(resolved.key);
      const owner = this.deps.readModel.get(resource, path)?.object;
      if (owner && owner.metadata.uid === ref.uid && isDeletingDependents(owner)) this.attemptToDelete.add(resolved.key);
    }
  }

  private current(key: string): Readonly<KObject> | undefined {
    const { resource, path } = splitKey(key);
    return this.deps.readModel.get(resource, path)?.object;
  }

  /** The objects whose references resolve to the owner at `key` (the index holds candidates by uid). */
  private dependentsOf(key: string, owner: Readonly<KObject>): Dependent[] {
    const uid = owner.metadata.uid as string;
    const out: Dependent[] = [];
    for (const depKey of this.graph.dependentsOf(uid)) {
      const object = this.current(depKey);
      const ref = object?.metadata.ownerReferences?.find((r) => r.uid === uid);
      if (!object || !ref) continue;
      const resolved = ownerKey(this.deps.kinds, ref, object.metadata.namespace);
      if (resolved.ok && resolved.key === key) out.push({ key: depKey, object, ref });
    }
    return out;
  }

  /** attemptToDeleteItem: collects the object at `key` if its owners are gone, or finishes a foreground deletion. */
  private async collect(key: string): Promise<void> {
    const obj = this.current(key);
    if (!obj) return;
    if (obj.metadata.deletionTimestamp) {
      // being deleted is a one-way trip; only an owner waiting for its dependents has work left
      if (isDeletingDependents(obj)) await this.finishForeground(key, obj);
      return;
    }
    const refs = obj.metadata.ownerReferences ?? [];
    if (refs.length === 0) return;
    const solid: OwnerReference[] = [];
    const absent: OwnerReference[] = [];
    const waiting: OwnerReference[] = [];
    for (const ref of refs) {
      const owner = classifyOwner(this.deps.readModel, this.deps.kinds, ref, obj.metadata.namespace);
      if (owner.state === 'unresolvable') {
        // a kind not served (yet) may be served later; a cluster-scoped object with a namespaced owner never resolves
        if (owner.reason === 'unknownKind') throw new RetryLater(`${key}: no served kind ${ref.apiVersion}/${ref.kind}`);
        return;
      }
      (owner.state === 'solid' ? solid : owner.state === 'waiting' ? waiting : absent).push(ref);
    }
    const uid = obj.metadata.uid as string;
    if (solid.length > 0) {
      // it stays; references to absent owners and to owners waiting for it go, or those owners would wait forever
      if (absent.length + waiting.length > 0) await this.writes.removeReferences(key, uid, new Set([...absent, ...waiting].map((r) => r.uid)));
      return;
    }
    if (waiting.length > 0) {
      const dependents = this.dependentsOf(key, obj);
      if (dependents.length > 0) {
        // it has dependents of its own: it goes in the foreground too, unblocking its owners first
        // where a dependent already waits on it, to break a cycle
        if (dependents.some((d) => isDeletingDependents(d.object))) await this.writes.unblockReferences(key, uid);
        await this.writes.delete(key, obj, 'Foreground');
        return;
      }
    }
    await this.writes.delete(key, obj, this.policyOf(obj));
  }

  /** An object collected keeps the propagation its own finalizers already ask for. */
  private policyOf(obj: Readonly<KObject>): DeletionPropagation {
    const finalizers = obj.metadata.finalizers ?? [];
    if (finalizers.includes(orphanFinalizer)) return 'Orphan';
    if (finalizers.includes(foregroundFinalizer)) return 'Foreground';
    return 'Background';
  }

  /** processDeletingDependentsItem: the owner goes once no blocking dependent is left. */
  private async finishForeground(key: string, owner: Readonly<KObject>): Promise<void> {
    const blocking = this.dependentsOf(key, owner).filter((d) => d.ref.blockOwnerDeletion === true);
    if (blocking.length === 0) {
      await this.writes.removeFinalizer(key, owner.metadata.uid as string, foregroundFinalizer);
      return;
    }
    for (const d of blocking) if (!isDeletingDependents(d.object)) this.attemptToDelete.add(d.key);
  }

  /** attemptToOrphanWorker: the owner leaves every dependent's ownerReferences, then its finalizer goes. */
  private async orphan(key: string): Promise<void> {
    const owner = this.current(key);
    if (!owner?.metadata.deletionTimestamp || !(owner.metadata.finalizers ?? []).includes(orphanFinalizer)) return;
    const uid = owner.metadata.uid as string;
    const only = new Set([uid]);
    const dependents = this.dependentsOf(key, owner);
    // a few writes at a time: the writer batches them, and an owner with many dependents holds no unbounded set of promises
    for (let i = 0; i < dependents.length; i += orphanBatch) {
      await Promise.all(dependents.slice(i, i + orphanBatch).map((d) => this.writes.removeReferences(d.key, d.object.metadata.uid as string, only)));
    }
    await this.writes.removeFinalizer(key, uid, orphanFinalizer);
  }
}
