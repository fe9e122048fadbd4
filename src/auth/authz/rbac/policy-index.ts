/**
 * The RBAC objects in memory, indexed for decisions: rules per Role / ClusterRole, bindings per
 * subject (cluster-wide, and per namespace). Fed by the read model's change feed, so a decision
 * reads no storage and sees a change as soon as the read model applies it.
 */
import type { KObject } from '../../../api/meta.js';
import { storageResourceOf } from '../../../api/kind.js';
import { clusterRoleBindingKind, roleBindingKind, type BindingObject } from '../../../api/rbac/bindings.js';
import type { RoleRef, Subject } from '../../../api/rbac/policy.js';
import { clusterRoleKind, roleKind, type RoleObject } from '../../../api/rbac/roles.js';
import type { ObjectChange, ReadModel } from '../../../store/read-model.js';
import type { UserInfo } from '../../user.js';
import { compileRule, type CompiledRule } from './rule.js';

export const rbacResources = {
  roles: storageResourceOf(roleKind),
  clusterRoles: storageResourceOf(clusterRoleKind),
  roleBindings: storageResourceOf(roleBindingKind),
  clusterRoleBindings: storageResourceOf(clusterRoleBindingKind),
};

/** A binding as the index keeps it: what grants what to whom. */
export interface IndexedBinding {
  kind: 'RoleBinding' | 'ClusterRoleBinding';
  namespace: string;
  name: string;
  roleRef: RoleRef;
  subjects: readonly Subject[];
}

/** One reason a user holds a rule set: the binding and the subject of it that is the user. */
export interface Grant { binding: IndexedBinding; subject: Subject; rules: readonly CompiledRule[] }

/** subject keys: `User:<name>` or `Group:<name>`; a ServiceAccount is the user it authenticates as */
function subjectKey(subject: Subject, bindingNamespace: string): string | undefined {
  switch (subject.kind) {
    case 'User': case 'Group': return `${subject.kind}:${subject.name}`;
    case 'ServiceAccount': return `User:system:serviceaccount:${subject.namespace || bindingNamespace}:${subject.name}`;
    default: return undefined;
  }
}

class MultiMap<V> {
  private readonly map = new Map<string, Set<V>>();
  add(key: string, value: V): void {
    let set = this.map.get(key);
    if (!set) this.map.set(key, (set = new Set()));
    set.add(value);
  }
  remove(key: string, value: V): void {
    const set = this.map.get(key);
    if (set?.delete(value) && set.size === 0) this.map.delete(key);
  }
  get(key: string): ReadonlySet<V> | undefined { return this.map.get(key); }
}

export class RbacPolicyIndex {
  private readonly roleRules = new Map<string, readonly CompiledRule[]>();
  private readonly clusterRoleRules = new Map<string, readonly CompiledRule[]>();
  private readonly bindings = new Map<string, IndexedBinding>();
  /** `<namespace>|<subject key>` (namespace empty for ClusterRoleBindings) → bindings */
  private readonly bySubject = new MultiMap<IndexedBinding>();
  private readonly unsubscribe: () => void;
  private readonly listeners = new Set<(resources: ReadonlySet<string>) => void>();

  constructor(readModel: ReadModel) {
    for (const resource of Object.values(rbacResources)) {
      readModel.table(resource).forEach((stored, path) => this.apply(resource, path, stored.object));
    }
    this.unsubscribe = readModel.onChange((changes) => this.onChanges(changes));
  }

  stop(): void { this.unsubscribe(); }

  /** called after each batch of RBAC changes is indexed, with the resources it touched */
  onUpdate(listener: (resources: ReadonlySet<string>) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private onChanges(changes: readonly ObjectChange[]): void {
    const touched = new Set<string>();
    for (const c of changes) {
      if (!isRbacResource(c.resource)) continue;
      touched.add(c.resource);
      this.apply(c.resource, c.path, c.type === 'DELETED' ? undefined : c.object.object);
    }
    if (touched.size) for (const listener of this.listeners) listener(touched);
  }

  private apply(resource: string, path: string, obj: Readonly<KObject> | undefined): void {
    switch (resource) {
      case rbacResources.roles: return setOrDelete(this.roleRules, path, obj && compileRules(obj));
      case rbacResources.clusterRoles: return setOrDelete(this.clusterRoleRules, path, obj && compileRules(obj));
      default: return this.applyBinding(resource === rbacResources.roleBindings ? 'RoleBinding' : 'ClusterRoleBinding', path, obj as BindingObject | undefined);
    }
  }

  private applyBinding(kind: IndexedBinding['kind'], path: string, obj: BindingObject | undefined): void {
    const key = `${kind}/${path}`;
    const old = this.bindings.get(key);
    if (old) for (const k of bindingKeys(old)) this.bySubject.remove(k, old);
    this.bindings.delete(key);
    if (!obj) return;
    const binding: IndexedBinding = {
      kind, namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '', roleRef: obj.roleRef, subjects: obj.subjects ?? [],
    };
    this.bindings.set(key, binding);
    for (const k of bindingKeys(binding)) this.bySubject.add(k, binding);
  }

  /** the rules of the role a binding refers to; none when the role does not exist (yet) */
  rulesOf(roleRef: RoleRef, namespace: string): readonly CompiledRule[] {
    if (roleRef.kind === 'ClusterRole') return this.clusterRoleRules.get(roleRef.name) ?? [];
    return roleRef.kind === 'Role' && namespace ? this.roleRules.get(`${namespace}/${roleRef.name}`) ?? [] : [];
  }

  hasRole(namespace: string, name: string): boolean { return this.roleRules.has(`${namespace}/${name}`); }

  clusterRoleRulesOf(name: string): readonly CompiledRule[] | undefined { return this.clusterRoleRules.get(name); }

  /**
   * Every grant that applies to `user` in `namespace` (cluster-wide grants first), visited until
   * `visit` answers true; Kubernetes' VisitRulesFor.
   */
  visitGrants(user: UserInfo, namespace: string, visit: (grant: Grant) => boolean): void {
    const keys = [`User:${user.name}`, ...user.groups.map((g) => `Group:${g}`)];
    const scopes = namespace ? ['', namespace] : [''];
    for (const scope of scopes) {
      for (const key of keys) {
        for (const binding of this.bySubject.get(`${scope}|${key}`) ?? []) {
          const subject = binding.subjects.find((s) => subjectKey(s, binding.namespace) === key) as Subject;
          if (visit({ binding, subject, rules: this.rulesOf(binding.roleRef, binding.namespace) })) return;
        }
      }
    }
  }
}

function isRbacResource(resource: string): boolean {
  return resource === rbacResources.roles || resource === rbacResources.clusterRoles
    || resource === rbacResources.roleBindings || resource === rbacResources.clusterRoleBindings;
}

function compileRules(obj: Readonly<KObject>): readonly CompiledRule[] {
  return ((obj as RoleObject).rules ?? []).map(compileRule);
}

function setOrDelete<V>(map: Map<string, V>, key: string, value: V | undefined): void {
  if (value === undefined) map.delete(key);
  else map.set(key, value);
}

function bindingKeys(b: IndexedBinding): Set<string> {
  const scope = b.kind === 'RoleBinding' ? b.namespace : '';
  const keys = new Set<string>();
  for (const s of b.subjects) {
    const k = subjectKey(s, b.namespace);
    if (k) keys.add(`${scope}|${k}`);
  }
  return keys;
}
