/**
 * Empties terminating namespaces: deletes every namespaced object in them, and once nothing is
 * left removes the `orch` spec finalizer, which lets the registry remove the namespace itself.
 * Objects held by their own finalizers keep the namespace terminating until they go.
 *
 * A namespace is emptied no sooner than 5 s after it was seen terminating, as kube-controller-
 * manager's namespace controller waits (namespaceDeletionGracePeriod): replicas on etcd see the
 * deletion and refuse new objects first, and `kubectl delete -f` of a manifest that lists the
 * namespace before its objects still finds them to delete.
 */
import { namespaceFinalizer, type NamespaceObject } from '../api/core/namespace.js';
import type { ObjectStore, WriteContext } from '../resource-store/object-store.js';
import type { ReadModel } from '../store/read-model.js';
import { StatusError } from '../status/status-error.js';

export const controllerManager = 'orch-controller-manager';

/** kube-controller-manager's namespaceDeletionGracePeriod */
const deletionGracePeriodMs = 5_000;

export class NamespaceController {
  private scheduled = false;
  private running = false;
  private again = false;
  /** terminating namespaces seen, and the timer that lets them be emptied once their grace period is over */
  private readonly graceTimers = new Map<string, NodeJS.Timeout | undefined>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly readModel: ReadModel,
    private readonly namespaces: ObjectStore,
    /** the stores of every namespaced resource registered now: the registry changes at runtime */
    private readonly namespacedStores: () => readonly ObjectStore[],
    private readonly onError: (err: unknown) => void,
  ) {
    this.unsubscribe = readModel.onChange((changes) => {
      // a namespace began terminating, or content of one went: look again
      if (changes.some((c) => c.resource === 'namespaces' || c.type === 'DELETED')) this.schedule();
    });
    this.schedule();
  }

  stop(): void {
    this.unsubscribe();
    for (const timer of this.graceTimers.values()) clearTimeout(timer);
  }

  private schedule(): void {
    if (this.running) { this.again = true; return; }
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => { void this.run(); });
  }

  private async run(): Promise<void> {
    this.scheduled = false;
    this.running = true;
    try {
      const terminating: string[] = [];
      this.readModel.table('namespaces').forEach((stored, name) => {
        if (stored.object.metadata.deletionTimestamp && this.graceOver(name)) terminating.push(name);
      });
      for (const name of this.graceTimers.keys()) {
        if (!this.readModel.table('namespaces').get(name)) this.graceTimers.delete(name);
      }
      for (const ns of terminating) await this.finalize(ns);
    } catch (err) {
      this.onError(err);
    } finally {
      this.running = false;
      if (this.again) { this.again = false; this.schedule(); }
    }
  }

  /** True once `name` has been terminating for the grace period; the first sight starts it. */
  private graceOver(name: string): boolean {
    if (!this.graceTimers.has(name)) {
      const timer = setTimeout(() => {
        this.graceTimers.set(name, undefined);
        this.schedule();
      }, deletionGracePeriodMs);
      timer.unref();
      this.graceTimers.set(name, timer);
      return false;
    }
    return this.graceTimers.get(name) === undefined;
  }

  private context(): WriteContext {
    return { now: Date.now(), dryRun: false, manager: controllerManager };
  }

  private async finalize(namespace: string): Promise<void> {
    const stores = this.namespacedStores();
    for (const store of stores) {
      const items: string[] = [];
      this.readModel.table(store.table).forRange(`${namespace}/`, `${namespace}0`, false, (_k, v) => {
        if (!v.object.metadata.deletionTimestamp) items.push(v.object.metadata.name as string);
      });
      for (const name of items) {
        try {
          await store.delete(namespace, name, {}, this.context());
        } catch (err) {
          if (!(err instanceof StatusError && err.reason === 'NotFound')) throw err;
        }
      }
    }
    // count again: deletes answered in between; objects still present wait on their own finalizers
    let remaining = 0;
    for (const store of stores) {
      this.readModel.table(store.table).forRange(`${namespace}/`, `${namespace}0`, false, () => { remaining++; });
    }
    if (remaining > 0) return;
    await this.namespaces.modify(undefined, namespace, this.context(), (ns) => {
      const spec = (ns as NamespaceObject).spec;
      if (!spec?.finalizers?.includes(namespaceFinalizer)) return undefined;
      spec.finalizers = spec.finalizers.filter((f) => f !== namespaceFinalizer);
      return ns;
    }, 'finalize');
  }
}
