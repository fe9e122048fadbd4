/**
 * The generic store of every served declaration, made when it is first asked for, so that a kind
 * registered at runtime is served at once. A view (alias, other version) gets the storage
 * version's declaration for the stored representation.
 */
import type { ApiRegistry } from '../api/registry/api-registry.js';
import { storageResourceOf, type KindDeclaration } from '../api/kind.js';
import { ObjectStore } from './object-store.js';
import type { RegistryDeps } from './store-types.js';

export class ResourceStores {
  private readonly stores = new WeakMap<KindDeclaration, ObjectStore>();

  constructor(private readonly registry: ApiRegistry, private readonly deps: RegistryDeps) {}

  of(kind: KindDeclaration): ObjectStore {
    let store = this.stores.get(kind);
    if (!store) {
      const storageKind = kind.storage ? this.registry.storageKind(storageResourceOf(kind)) ?? kind : kind;
      store = new ObjectStore(kind, this.deps, storageKind);
      this.stores.set(kind, store);
    }
    return store;
  }

  /** The stores of every namespaced resource's storage version, as registered now. */
  namespaced(): ObjectStore[] {
    return this.registry.storageKinds().filter((k) => k.namespaced).map((k) => this.of(k));
  }
}
