/**
 * The garbage collector's changes to objects, through each kind's store as any client's would go:
 * each checks that the object it acts on is still the one it decided about (same uid).
 */
import type { DeletionPropagation } from '../../api/deletion-policy.js';
import type { KObject, OwnerReference } from '../../api/meta.js';
import type { ApiRegistry } from '../../api/registry/api-registry.js';
import type { KindDeclaration } from '../../api/kind.js';
import type { ObjectStore, WriteContext } from '../../resource-store/object-store.js';
import { StatusError } from '../../status/status-error.js';
import { controllerManager } from '../namespace-controller.js';
import { RetryLater } from '../work-queue.js';
import { splitKey } from './owner-index.js';

export class CollectorWrites {
  constructor(
    private readonly kinds: ApiRegistry,
    private readonly storeOf: (kind: KindDeclaration) => ObjectStore | undefined,
  ) {}

  private context(): WriteContext {
    return { now: Date.now(), dryRun: false, manager: controllerManager };
  }

  private store(key: string): ObjectStore {
    const kind = this.kinds.storageKind(splitKey(key).resource);
    const store = kind && this.storeOf(kind);
    // the kind was removed from the registry: its objects wait until it is served again
    if (!store) throw new RetryLater(`no store for ${key}`);
    return store;
  }

  /** Changes the object at `key` if it is still `uid`; `change` returns false to leave it alone. */
  private async modify(key: string, uid: string, change: (obj: KObject) => boolean): Promise<void> {
    const store = this.store(key);
    const { path } = splitKey(key);
    const name = store.kind.namespaced ? path.slice(path.indexOf('/') + 1) : path;
    const namespace = store.kind.namespaced ? path.slice(0, path.indexOf('/')) : undefined;
    await store.modify(namespace, name, this.context(), (obj) => (obj.metadata.uid === uid && change(obj) ? obj : undefined));
  }

  /** Drops the references to `ownerUids` from the object's ownerReferences. */
  removeReferences(key: string, uid: string, ownerUids: ReadonlySet<string>): Promise<void> {
    return this.modify(key, uid, (obj) => {
      const refs = obj.metadata.ownerReferences ?? [];
      const kept = refs.filter((ref) => !ownerUids.has(ref.uid));
      if (kept.length === refs.length) return false;
      if (kept.length > 0) obj.metadata.ownerReferences = kept;
      else delete obj.metadata.ownerReferences;
      return true;
    });
  }

  /** Sets every blockOwnerDeletion of the object's references to false (breaking a foreground cycle). */
  unblockReferences(key: string, uid: string): Promise<void> {
    return this.modify(key, uid, (obj) => {
      const blocking = (obj.metadata.ownerReferences ?? []).filter((ref: OwnerReference) => ref.blockOwnerDeletion === true);
      for (const ref of blocking) ref.blockOwnerDeletion = false;
      return blocking.length > 0;
    });
  }

  /** Removes one finalizer; the registry removes the object when it was the last one. */
  removeFinalizer(key: string, uid: string, finalizer: string): Promise<void> {
    return this.modify(key, uid, (obj) => {
      const finalizers = obj.metadata.finalizers ?? [];
      if (!finalizers.includes(finalizer)) return false;
      obj.metadata.finalizers = finalizers.filter((f) => f !== finalizer);
      return true;
    });
  }

  /**
   * Deletes the object as it was decided about: the uid and resourceVersion are preconditions, so
   * a concurrent change (an owner reference added back) sends the object round again instead.
   */
  async delete(key: string, obj: Readonly<KObject>, propagationPolicy: DeletionPropagation): Promise<void> {
    const store = this.store(key);
    const { namespace, name } = obj.metadata;
    try {
      await store.delete(store.kind.namespaced ? namespace : undefined, name as string, {
        preconditions: { uid: obj.metadata.uid, resourceVersion: obj.metadata.resourceVersion },
        propagationPolicy,
      }, this.context());
    } catch (err) {
      if (err instanceof StatusError && err.reason === 'NotFound') return;
      if (err instanceof StatusError && err.reason === 'Conflict') throw new RetryLater(`${key} changed while it was collected`);
      throw err;
    }
  }
}
