/**
 * Reconciles the bootstrap policy at start, as kube-apiserver's rbac/bootstrap-roles post-start
 * hook does: a missing default is created; an existing one keeps what users added and gets back
 * what it lacks (rules, subjects, labels, annotations), unless its autoupdate annotation is "false".
 */
import type { KObject } from '../../api/meta.js';
import type { BindingObject } from '../../api/rbac/bindings.js';
import type { ClusterRoleObject } from '../../api/rbac/roles.js';
import type { ObjectStore } from '../../resource-store/object-store.js';
import type { WriteContext } from '../../resource-store/store-types.js';
import type { ReadModel } from '../../store/read-model.js';
import { StatusError } from '../../status/status-error.js';
import { rbacResources } from '../../auth/authz/rbac/policy-index.js';
import { autoupdateAnnotation, bootstrapClusterRoleBindings, bootstrapClusterRoles } from './bootstrap-policy.js';

export interface BootstrapStores { clusterRoles: ObjectStore; clusterRoleBindings: ObjectStore }

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

function missingFrom<T>(have: readonly T[] | undefined, want: readonly T[] | undefined): T[] {
  return (want ?? []).filter((w) => !(have ?? []).some((h) => sameJson(h, w)));
}

/** the default's labels and annotations added to the object's; undefined when nothing is missing */
function withDefaultMeta(obj: KObject, want: KObject): KObject['metadata'] | undefined {
  const labels = { ...want.metadata.labels, ...obj.metadata.labels };
  const annotations = { ...want.metadata.annotations, ...obj.metadata.annotations };
  if (sameJson(labels, obj.metadata.labels ?? {}) && sameJson(annotations, obj.metadata.annotations ?? {})) return undefined;
  return { ...obj.metadata, labels, annotations };
}

function reconcileRole(live: ClusterRoleObject, want: ClusterRoleObject): ClusterRoleObject | undefined {
  const metadata = withDefaultMeta(live, want);
  // an aggregated role's rules belong to the aggregation controller
  const rules = want.aggregationRule ? [] : missingFrom(live.rules, want.rules);
  const selectors = missingFrom(live.aggregationRule?.clusterRoleSelectors, want.aggregationRule?.clusterRoleSelectors);
  if (!metadata && rules.length === 0 && selectors.length === 0) return undefined;
  const next: ClusterRoleObject = { ...live, metadata: metadata ?? live.metadata, rules: [...(live.rules ?? []), ...rules] };
  if (selectors.length) next.aggregationRule = { clusterRoleSelectors: [...(live.aggregationRule?.clusterRoleSelectors ?? []), ...selectors] };
  return next;
}

function reconcileBinding(live: BindingObject, want: BindingObject): BindingObject | undefined {
  const metadata = withDefaultMeta(live, want);
  const subjects = missingFrom(live.subjects, want.subjects);
  if (!metadata && subjects.length === 0) return undefined;
  return { ...live, metadata: metadata ?? live.metadata, subjects: [...(live.subjects ?? []), ...subjects] };
}

async function reconcile<T extends KObject>(
  readModel: ReadModel, resource: string, store: ObjectStore, defaults: readonly T[], ctx: () => WriteContext,
  merge: (live: T, want: T) => T | undefined,
): Promise<void> {
  for (const want of defaults) {
    const name = want.metadata.name as string;
    const live = readModel.get(resource, name)?.object as T | undefined;
    if (live?.metadata.annotations?.[autoupdateAnnotation] === 'false') continue;
    try {
      if (!live) await store.create(undefined, structuredClone(want), ctx());
      else await store.modify(undefined, name, ctx(), (current) => merge(current as T, want));
    } catch (err) {
      // another server of the same storage reconciled it first
      if (!(err instanceof StatusError && (err.reason === 'AlreadyExists' || err.reason === 'Conflict'))) throw err;
    }
  }
}

export async function reconcileBootstrapPolicy(readModel: ReadModel, stores: BootstrapStores, ctx: () => WriteContext): Promise<void> {
  await reconcile(readModel, rbacResources.clusterRoles, stores.clusterRoles, bootstrapClusterRoles, ctx, reconcileRole);
  await reconcile(readModel, rbacResources.clusterRoleBindings, stores.clusterRoleBindings, bootstrapClusterRoleBindings, ctx, reconcileBinding);
}
