/**
 * Serves what CustomResourceDefinitions define. Watching the read model's change feed, it
 * registers each accepted CRD's declarations in the runtime API registry at once (in the commit's
 * own notification, so a client that created a CRD finds its endpoints), reports the names
 * (NamesAccepted, with conflicts inside the group; Established; acceptedNames) in the status, and
 * on deletion takes the endpoints away, deletes every custom resource, then drops the cleanup
 * finalizer so the definition itself goes (apiextensions' naming, establishing and finalizing
 * controllers in one).
 */
import type { KindDeclaration } from '../api/kind.js';
import type { ApiRegistry } from '../api/registry/api-registry.js';
import type { ObjectStore, WriteContext } from '../resource-store/object-store.js';
import type { ReadModel } from '../store/read-model.js';
import { StatusError } from '../status/status-error.js';
import { setCondition } from './crd-kind.js';
import { cleanupFinalizer, crdTable, type CrdCondition, type CrdNames, type CrdObject } from './crd-types.js';
import { declarationsOf, type CrdServingOptions } from './custom-resource.js';

export const apiextensionsManager = 'orch-apiextensions-controller';
const cleanupRetryMs = 200;

interface Served { spec: string; kinds: KindDeclaration[]; unservedStorage?: KindDeclaration }

export interface CrdControllerDeps {
  readModel: ReadModel;
  registry: ApiRegistry;
  crds: ObjectStore;
  storeOf(kind: KindDeclaration): ObjectStore;
  onError(err: unknown): void;
  /** from the feature gates */
  serving: CrdServingOptions;
  /** called when a CRD's declarations are served or withdrawn (for caches keyed by kind) */
  onServed?(kinds: readonly KindDeclaration[], served: boolean): void;
}

/** The names a CRD claims in its group, to find conflicts with other definitions. */
function claimedNames(names: CrdNames): { plural: string[]; singular: string[]; shortNames: string[]; kind: string[]; listKind: string[] } {
  return {
    plural: [names.plural], singular: names.singular ? [names.singular] : [], shortNames: names.shortNames ?? [],
    kind: [names.kind], listKind: names.listKind ? [names.listKind] : [],
  };
}

export class CrdController {
  private readonly served = new Map<string, Served>();
  private readonly pending = new Set<string>();
  private running = false;
  private stopped = false;
  private readonly unsubscribe: () => void;

  constructor(private readonly deps: CrdControllerDeps) {
    this.unsubscribe = deps.readModel.onChange((changes) => {
      for (const c of changes) if (c.resource === crdTable) this.sync(c.path);
    });
    deps.readModel.table(crdTable).forEach((_v, name) => this.sync(name));
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe();
  }

  private context(): WriteContext {
    return { now: Date.now(), dryRun: false, manager: apiextensionsManager };
  }

  /** Registers or withdraws at once; status and cleanup follow asynchronously. */
  private sync(name: string): void {
    const crd = this.deps.readModel.get(crdTable, name)?.object as CrdObject | undefined;
    if (!crd || crd.metadata.deletionTimestamp) this.withdraw(name);
    else if (!this.conflict(crd)) this.serve(name, crd);
    else this.withdraw(name);
    this.pending.add(name);
    void this.drain();
  }

  private serve(name: string, crd: CrdObject): void {
    const spec = JSON.stringify(crd.spec);
    if (this.served.get(name)?.spec === spec) return;
    this.withdraw(name);
    const { served: kinds, unservedStorage } = declarationsOf(crd, this.deps.serving);
    try {
      // the storage version first: a view's store is made with the storage declaration it finds
      if (unservedStorage) this.deps.registry.addUnservedStorage(unservedStorage);
      this.deps.registry.add(...kinds);
    } catch (err) {
      if (unservedStorage) this.deps.registry.removeUnservedStorage(unservedStorage);
      this.deps.onError(err);
      return;
    }
    this.served.set(name, { spec, kinds, unservedStorage });
    this.deps.onServed?.(kinds, true);
  }

  private withdraw(name: string): void {
    const was = this.served.get(name);
    if (!was) return;
    this.served.delete(name);
    this.deps.registry.remove(...was.kinds);
    if (was.unservedStorage) this.deps.registry.removeUnservedStorage(was.unservedStorage);
    this.deps.onServed?.(was.kinds, false);
  }

  /**
   * The first name another definition of the group (or a built-in) already uses, as the naming
   * controller reports it; undefined when every name is free.
   */
  private conflict(crd: CrdObject): CrdCondition | undefined {
    const { group, names } = crd.spec;
    const mine = claimedNames(names);
    const reasons = { plural: 'PluralConflict', singular: 'SingularConflict', shortNames: 'ShortNamesConflict', kind: 'KindConflict', listKind: 'ListKindConflict' } as const;
    const taken = (field: keyof typeof reasons, value: string): boolean => {
      let found = false;
      this.deps.readModel.table(crdTable).forEach((stored, otherName) => {
        const other = stored.object as CrdObject;
        if (found || otherName === crd.metadata.name || other.spec?.group !== group || !this.served.has(otherName)) return;
        const accepted = other.status?.acceptedNames ?? other.spec.names;
        if (claimedNames(accepted)[field].includes(value)) found = true;
      });
      if (found) return true;
      // a built-in (or another definition served already) on a path this one would take
      return field === 'plural' && this.deps.registry.kinds.some((k) => k.group === group && k.resource === value && !this.isOwn(crd, k));
    };
    for (const field of Object.keys(reasons) as (keyof typeof reasons)[]) {
      for (const value of mine[field]) {
        if (taken(field, value)) return { type: 'NamesAccepted', status: 'False', reason: reasons[field], message: `"${value}" is already in use` };
      }
    }
    return undefined;
  }

  private isOwn(crd: CrdObject, k: KindDeclaration): boolean {
    return this.served.get(crd.metadata.name as string)?.kinds.includes(k) ?? false;
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.pending.size > 0 && !this.stopped) {
        const [name] = this.pending;
        this.pending.delete(name);
        try {
          await this.reconcile(name);
        } catch (err) {
          if (!(err instanceof StatusError && (err.reason === 'NotFound' || err.reason === 'Conflict'))) this.deps.onError(err);
        }
      }
    } finally {
      this.running = false;
    }
  }

  private async reconcile(name: string): Promise<void> {
    const crd = this.deps.readModel.get(crdTable, name)?.object as CrdObject | undefined;
    if (!crd) return;
    if (crd.metadata.deletionTimestamp) return this.finalize(crd);
    const conflict = this.conflict(crd);
    await this.deps.crds.modify(undefined, name, this.context(), (current) => {
      const next = current as CrdObject;
      const before = JSON.stringify(next.status ?? {});
      const now = Date.now();
      if (conflict) {
        setCondition(next, conflict, now);
        if (!next.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) {
          setCondition(next, { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' }, now);
        }
      } else {
        setCondition(next, { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' }, now);
        setCondition(next, { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }, now);
        const { plural, singular, shortNames, kind, listKind, categories } = next.spec.names;
        next.status = { ...next.status, acceptedNames: { plural, singular, shortNames, kind, listKind, categories } };
      }
      return JSON.stringify(next.status ?? {}) === before ? undefined : next;
    }, 'status');
  }

  /** Deletes every custom resource of a terminating definition, then lets the definition go. */
  private async finalize(crd: CrdObject): Promise<void> {
    const name = crd.metadata.name as string;
    if (!crd.metadata.finalizers?.includes(cleanupFinalizer)) return;
    const { served, unservedStorage } = declarationsOf(crd, this.deps.serving);
    const storage = unservedStorage ?? served.find((k) => !k.storage) ?? served[0];
    let remaining = 0;
    if (storage) {
      const store = this.deps.storeOf(storage);
      const items: { namespace?: string; name: string }[] = [];
      this.deps.readModel.table(store.table).forEach((stored) => {
        items.push({ namespace: stored.object.metadata.namespace, name: stored.object.metadata.name as string });
      });
      for (const item of items) {
        try {
          await store.delete(item.namespace, item.name, {}, this.context());
        } catch (err) {
          if (!(err instanceof StatusError && err.reason === 'NotFound')) throw err;
        }
      }
      remaining = this.deps.readModel.table(store.table).length;
    }
    if (remaining > 0) {
      // objects held by their own finalizers: look again shortly
      setTimeout(() => { if (!this.stopped) { this.pending.add(name); void this.drain(); } }, cleanupRetryMs).unref();
      return;
    }
    await this.deps.crds.modify(undefined, name, this.context(), (current) => {
      const finalizers = (current.metadata.finalizers ?? []).filter((f) => f !== cleanupFinalizer);
      if (finalizers.length === current.metadata.finalizers?.length) return undefined;
      current.metadata.finalizers = finalizers;
      return current;
    });
  }
}
