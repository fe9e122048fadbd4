/**
 * Fills the rules of ClusterRoles that have an aggregationRule with the rules of the ClusterRoles
 * their selectors match, and keeps them current (kube-controller-manager's clusterrole-aggregation
 * controller): matched roles in name order, each rule once.
 */
import type { KObject } from '../../api/meta.js';
import type { PolicyRule } from '../../api/rbac/policy.js';
import type { ClusterRoleObject, LabelSelectorSpec } from '../../api/rbac/roles.js';
import { rbacResources, type RbacPolicyIndex } from '../../auth/authz/rbac/policy-index.js';
import type { ObjectStore } from '../../resource-store/object-store.js';
import type { ReadModel } from '../../store/read-model.js';
import { StatusError } from '../../status/status-error.js';
import { controllerManager } from '../namespace-controller.js';

/** metav1.LabelSelectorAsSelector(...).Matches */
export function selectorMatches(selector: LabelSelectorSpec, labels: Readonly<Record<string, string>>): boolean {
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const present = Object.hasOwn(labels, e.key);
    const ok = e.operator === 'In' ? present && (e.values ?? []).includes(labels[e.key])
      : e.operator === 'NotIn' ? !present || !(e.values ?? []).includes(labels[e.key])
        : e.operator === 'Exists' ? present
          : e.operator === 'DoesNotExist' ? !present : false;
    if (!ok) return false;
  }
  return true;
}

export function aggregatedRules(role: ClusterRoleObject, all: readonly Readonly<ClusterRoleObject>[]): PolicyRule[] {
  const selectors = role.aggregationRule?.clusterRoleSelectors ?? [];
  const matched = all
    .filter((r) => r.metadata.name !== role.metadata.name && selectors.some((s) => selectorMatches(s, r.metadata.labels ?? {})))
    .sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
  const seen = new Set<string>();
  const rules: PolicyRule[] = [];
  for (const r of matched) {
    for (const rule of r.rules ?? []) {
      const key = JSON.stringify(rule);
      if (!seen.has(key)) { seen.add(key); rules.push(rule); }
    }
  }
  return rules;
}

export class ClusterRoleAggregationController {
  private scheduled = false;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly readModel: ReadModel,
    index: RbacPolicyIndex,
    private readonly clusterRoles: ObjectStore,
    private readonly onError: (err: unknown) => void,
  ) {
    this.unsubscribe = index.onUpdate((resources) => { if (resources.has(rbacResources.clusterRoles)) this.schedule(); });
    this.schedule();
  }

  stop(): void { this.unsubscribe(); }

  /** one pass per burst of changes */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => { this.scheduled = false; this.syncAll(); });
  }

  private syncAll(): void {
    const all: ClusterRoleObject[] = [];
    this.readModel.table(rbacResources.clusterRoles).forEach((stored) => { all.push(stored.object as ClusterRoleObject); });
    for (const role of all) {
      if (!role.aggregationRule) continue;
      const rules = aggregatedRules(role, all);
      if (JSON.stringify(rules) === JSON.stringify(role.rules ?? [])) continue;
      this.clusterRoles.modify(undefined, role.metadata.name as string, { now: Date.now(), dryRun: false, manager: controllerManager },
        (current: KObject) => {
          const live = current as ClusterRoleObject;
          if (!live.aggregationRule) return undefined;
          const next = aggregatedRules(live, all);
          return JSON.stringify(next) === JSON.stringify(live.rules ?? []) ? undefined : { ...live, rules: next };
        })
        .catch((err: unknown) => {
          if (!(err instanceof StatusError && err.code === 404)) this.onError(err);
        });
    }
  }
}
