/**
 * Objects the server keeps from its first start: the system namespaces (kube-apiserver's
 * bootstrap controller) and, with RBAC, the bootstrap policy reconciled against what is stored.
 */
import { namespaceFinalizer, namespaceKind } from '../api/core/namespace.js';
import { clusterRoleBindingKind } from '../api/rbac/bindings.js';
import { clusterRoleKind } from '../api/rbac/roles.js';
import { controllerManager } from '../controllers/namespace-controller.js';
import { reconcileBootstrapPolicy } from '../controllers/rbac/bootstrap-reconciler.js';
import type { ResourceStores } from '../resource-store/resource-stores.js';
import { StatusError } from '../status/status-error.js';
import type { ReadModel } from '../store/read-model.js';
import type { Lifecycle } from './lifecycle.js';

/** Namespaces that exist from the first start. */
const systemNamespaces = ['default', 'orch-system', 'orch-public', 'orch-node-lease'];

const bootstrapContext = () => ({ now: Date.now(), dryRun: false, manager: controllerManager });

export async function bootstrapObjects(readModel: ReadModel, stores: ResourceStores, rbac: boolean, lifecycle: Lifecycle): Promise<void> {
  for (const name of systemNamespaces) {
    if (readModel.get('namespaces', name)) continue;
    try {
      await stores.of(namespaceKind).create(undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name }, spec: { finalizers: [namespaceFinalizer] } }, bootstrapContext());
    } catch (err) {
      if (!(err instanceof StatusError && err.reason === 'AlreadyExists')) throw err;
    }
  }
  lifecycle.done('bootstrap-controller');
  if (rbac) {
    await reconcileBootstrapPolicy(readModel, { clusterRoles: stores.of(clusterRoleKind), clusterRoleBindings: stores.of(clusterRoleBindingKind) }, bootstrapContext);
    lifecycle.done('rbac/bootstrap-roles');
  }
}
