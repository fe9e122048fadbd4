/**
 * RBAC escalation prevention (pkg/registry/rbac/*\/policybased in Kubernetes): a Role or
 * ClusterRole may only grant what its author holds, unless the author may `escalate` it; a
 * binding may only bind a role whose rules its author holds, unless the author may `bind` it.
 * system:masters and the server's own controllers are exempt. Answers are Kubernetes' 403s.
 */
import type { KObject } from '../../api/meta.js';
import type { BindingObject } from '../../api/rbac/bindings.js';
import { rbacGroup, rbacKubernetesGroup, type PolicyRule, type RoleRef } from '../../api/rbac/policy.js';
import type { ClusterRoleObject } from '../../api/rbac/roles.js';
import type { Authorizer } from '../../auth/authz/authorizer.js';
import { compactRules, compactString, uncoveredRules } from '../../auth/authz/rbac/covers.js';
import type { RbacPolicyIndex } from '../../auth/authz/rbac/policy-index.js';
import { RbacAuthorizer } from '../../auth/authz/rbac/rbac-authorizer.js';
import { canonicalGroup } from '../../auth/authz/rbac/rule.js';
import { privilegedGroup, type UserInfo } from '../../auth/user.js';
import { errors } from '../../status/status-error.js';
import type { AdmissionAttributes, AdmissionPlugin } from '../admission.js';

const fullAuthority: PolicyRule[] = [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, { verbs: ['*'], nonResourceURLs: ['*'] }];

/** IsOnlyMutatingGCFields: finalizers and owner references may change without the check */
function onlyGcFieldsChanged(obj: KObject, old: Readonly<KObject>): boolean {
  const strip = (o: Readonly<KObject>) => {
    const { ownerReferences: _o, finalizers: _f, managedFields: _m, resourceVersion: _r, generation: _g, ...meta } = o.metadata;
    return JSON.stringify({ ...o, metadata: meta });
  };
  return strip(obj) === strip(old);
}

export class RbacEscalationCheck implements AdmissionPlugin {
  readonly name = 'RBACEscalation';

  private readonly rbac: RbacAuthorizer;

  /** `authorizer`: the server's, asked for `escalate` and `bind`; `index`: whose rules the author holds */
  constructor(private readonly authorizer: Authorizer, private readonly index: RbacPolicyIndex) {
    this.rbac = new RbacAuthorizer(index);
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (canonicalGroup(a.kind.group) !== rbacGroup || a.subresource || !a.object || a.operation === 'DELETE') return;
    const user = a.user;
    if (!user || user.groups.includes(privilegedGroup)) return;
    if (a.oldObject && onlyGcFieldsChanged(a.object, a.oldObject)) return;
    const gr = { group: a.kind.group, resource: a.kind.resource };
    const namespace = a.namespace ?? '';
    switch (a.kind.resource) {
      case 'roles': case 'clusterroles': {
        const role = a.object as ClusterRoleObject;
        if (await this.allowed(user, 'escalate', a.kind.resource, a.name, namespace)) return;
        this.confirmNoEscalation(user, namespace, role.rules ?? [], gr, a.name);
        if (role.aggregationRule) {
          if (uncoveredRules(this.ownedRules(user, namespace), fullAuthority).length) {
            throw errors.forbidden(gr, a.name, 'must have cluster-admin privileges to use the aggregationRule');
          }
        }
        return;
      }
      case 'rolebindings': case 'clusterrolebindings': {
        const ref = (a.object as BindingObject).roleRef;
        if (await this.allowed(user, 'bind', ref.kind === 'Role' ? 'roles' : 'clusterroles', ref.name, namespace)) return;
        this.confirmNoEscalation(user, namespace, this.roleRules(ref, namespace, gr, a.name), gr, a.name);
      }
    }
  }

  /** RoleEscalationAuthorized / BindingAuthorized */
  private async allowed(user: UserInfo, verb: string, resource: string, name: string, namespace: string): Promise<boolean> {
    const d = await this.authorizer.authorize({
      user, verb, isResourceRequest: true, path: '', namespace, apiGroup: rbacKubernetesGroup, apiVersion: '', resource, subresource: '', name,
    });
    return d.decision === 'Allow';
  }

  private ownedRules(user: UserInfo, namespace: string): PolicyRule[] {
    const { resourceRules, nonResourceRules } = this.rbac.rulesFor(user, namespace);
    return [...resourceRules, ...nonResourceRules];
  }

  /** GetRoleReferenceRules: a missing role is an error here (an admin may still bind it) */
  private roleRules(ref: RoleRef, namespace: string, gr: { group: string; resource: string }, name: string): PolicyRule[] {
    const exists = ref.kind === 'ClusterRole' ? this.index.clusterRoleRulesOf(ref.name) !== undefined : this.index.hasRole(namespace, ref.name);
    if (!exists) {
      const resource = ref.kind === 'ClusterRole' ? 'clusterroles' : 'roles';
      throw errors.forbidden(gr, name, `${resource}.${rbacKubernetesGroup} ${JSON.stringify(ref.name)} not found`);
    }
    return this.index.rulesOf(ref, namespace).map((r) => r.source);
  }

  /** ConfirmNoEscalation */
  private confirmNoEscalation(user: UserInfo, namespace: string, rules: readonly PolicyRule[], gr: { group: string; resource: string }, name: string): void {
    const missing = uncoveredRules(this.ownedRules(user, namespace), rules);
    if (missing.length === 0) return;
    const descriptions = [...new Set(compactRules(missing).map(compactString))].sort();
    const groups = `[${user.groups.map((g) => JSON.stringify(g)).join(' ')}]`;
    throw errors.forbidden(gr, name,
      `user ${JSON.stringify(user.name)} (groups=${groups}) is attempting to grant RBAC permissions not currently held:\n${descriptions.join('\n')}`);
  }
}
