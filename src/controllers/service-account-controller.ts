/**
 * Keeps a `default` ServiceAccount in every active namespace, creating it when a namespace
 * appears and again if it is deleted, as kube-controller-manager's serviceaccounts-controller does.
 */
import type { NamespaceObject } from '../api/core/namespace.js';
import type { ObjectStore } from '../resource-store/object-store.js';
import type { ReadModel } from '../store/read-model.js';
import { StatusError } from '../status/status-error.js';
import { controllerManager } from './namespace-controller.js';

const defaultName = 'default';

export class ServiceAccountController {
  private readonly unsubscribe: () => void;

  constructor(
    private readonly readModel: ReadModel,
    private readonly serviceAccounts: ObjectStore,
    private readonly onError: (err: unknown) => void,
  ) {
    this.unsubscribe = readModel.onChange((changes) => {
      for (const c of changes) {
        if (c.resource === 'namespaces' && c.type !== 'DELETED') this.ensure(c.path);
        else if (c.resource === 'serviceaccounts' && c.type === 'DELETED' && c.object.object.metadata.name === defaultName) {
          this.ensure(c.object.object.metadata.namespace as string);
        }
      }
    });
    readModel.table('namespaces').forEach((_v, name) => this.ensure(name));
  }

  stop(): void { this.unsubscribe(); }

  private ensure(namespace: string): void {
    const ns = this.readModel.get('namespaces', namespace)?.object as NamespaceObject | undefined;
    if (!ns || ns.metadata.deletionTimestamp || ns.status?.phase === 'Terminating') return;
    if (this.readModel.get('serviceaccounts', `${namespace}/${defaultName}`)) return;
    this.serviceAccounts.create(namespace, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: defaultName } },
      { now: Date.now(), dryRun: false, manager: controllerManager })
      .catch((err: unknown) => {
        // raced with another creator, or the namespace began terminating: both are fine
        if (err instanceof StatusError && (err.reason === 'AlreadyExists' || err.code === 403 || err.code === 404)) return;
        this.onError(err);
      });
  }
}
