/**
 * The default ClusterRoles and ClusterRoleBindings of Kubernetes 1.32
 * (plugin/pkg/auth/authorizer/rbac/bootstrappolicy), cut to the resources and paths this server
 * serves. Groups are named as Kubernetes names them; rules match either name of a group.
 */
import type { BindingObject } from '../../api/rbac/bindings.js';
import { rbacGroup, rbacKubernetesGroup, type PolicyRule } from '../../api/rbac/policy.js';
import type { ClusterRoleObject } from '../../api/rbac/roles.js';

export const bootstrappingLabel = 'orch.io/bootstrapping';
export const autoupdateAnnotation = 'rbac.authorization.kubernetes.io/autoupdate';
export const aggregateTo = (role: 'admin' | 'edit' | 'view') => `${rbacKubernetesGroup}/aggregate-to-${role}`;

const read = ['get', 'list', 'watch'];
const write = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const readWrite = [...write, ...read];

const rule = (verbs: string[], apiGroups: string[], resources: string[]): PolicyRule => ({ verbs, apiGroups, resources });
const urls = (verbs: string[], nonResourceURLs: string[]): PolicyRule => ({ verbs, nonResourceURLs });

function clusterRole(name: string, rules: PolicyRule[], extra: { labels?: Record<string, string>; aggregateFrom?: string } = {}): ClusterRoleObject {
  const role: ClusterRoleObject = {
    apiVersion: `${rbacGroup}/v1`, kind: 'ClusterRole',
    metadata: { name, labels: { [bootstrappingLabel]: 'rbac-defaults', ...extra.labels }, annotations: { [autoupdateAnnotation]: 'true' } },
    rules,
  };
  if (extra.aggregateFrom) role.aggregationRule = { clusterRoleSelectors: [{ matchLabels: { [extra.aggregateFrom]: 'true' } }] };
  return role;
}

function binding(name: string, groups: string[], roleName = name): BindingObject {
  return {
    apiVersion: `${rbacGroup}/v1`, kind: 'ClusterRoleBinding',
    metadata: { name, labels: { [bootstrappingLabel]: 'rbac-defaults' }, annotations: { [autoupdateAnnotation]: 'true' } },
    roleRef: { apiGroup: rbacKubernetesGroup, kind: 'ClusterRole', name: roleName },
    subjects: groups.map((g) => ({ kind: 'Group', apiGroup: rbacKubernetesGroup, name: g })),
  };
}

export const bootstrapClusterRoles: readonly ClusterRoleObject[] = [
  clusterRole('cluster-admin', [rule(['*'], ['*'], ['*']), urls(['*'], ['*'])]),
  clusterRole('system:discovery', [urls(['get'], ['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*', '/readyz', '/version', '/version/'])]),
  clusterRole('system:monitoring', [urls(['get'], ['/healthz', '/healthz/*', '/livez', '/livez/*', '/metrics', '/metrics/slis', '/readyz', '/readyz/*'])]),
  clusterRole('system:basic-user', [
    rule(['create'], ['authentication.k8s.io'], ['selfsubjectreviews']),
    rule(['create'], ['authorization.k8s.io'], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
  ]),
  clusterRole('system:public-info-viewer', [urls(['get'], ['/healthz', '/livez', '/readyz', '/version', '/version/'])]),
  // the user-facing roles, filled by the aggregation controller
  clusterRole('admin', [], { aggregateFrom: aggregateTo('admin') }),
  clusterRole('edit', [], { aggregateFrom: aggregateTo('edit'), labels: { [aggregateTo('admin')]: 'true' } }),
  clusterRole('view', [], { aggregateFrom: aggregateTo('view'), labels: { [aggregateTo('edit')]: 'true' } }),
  clusterRole('system:aggregate-to-admin', [
    rule(readWrite, ['rbac.authorization.k8s.io'], ['rolebindings', 'roles']),
    rule(['create'], ['authorization.k8s.io'], ['localsubjectaccessreviews']),
  ], { labels: { [aggregateTo('admin')]: 'true' } }),
  clusterRole('system:aggregate-to-edit', [
    rule(['impersonate'], [''], ['serviceaccounts']),
    rule(write, [''], ['configmaps', 'serviceaccounts']),
    // view does not read secrets; edit does
    rule(readWrite, [''], ['secrets']),
    rule(['create'], [''], ['serviceaccounts/token']),
  ], { labels: { [aggregateTo('edit')]: 'true' } }),
  clusterRole('system:aggregate-to-view', [
    rule(read, [''], ['configmaps', 'serviceaccounts']),
    rule(read, [''], ['events', 'namespaces', 'namespaces/status']),
  ], { labels: { [aggregateTo('view')]: 'true' } }),
  clusterRole('system:heapster', [rule(read, [''], ['events', 'namespaces'])]),
  clusterRole('system:auth-delegator', [
    rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
    rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews']),
  ]),
  clusterRole('system:service-account-issuer-discovery', [
    urls(['get'], ['/.well-known/openid-configuration', '/.well-known/openid-configuration/', '/openid/v1/jwks', '/openid/v1/jwks/']),
  ]),
];

export const bootstrapClusterRoleBindings: readonly BindingObject[] = [
  binding('cluster-admin', ['system:masters']),
  binding('system:discovery', ['system:authenticated']),
  binding('system:monitoring', ['system:monitoring']),
  binding('system:basic-user', ['system:authenticated']),
  binding('system:public-info-viewer', ['system:authenticated', 'system:unauthenticated']),
  binding('system:service-account-issuer-discovery', ['system:serviceaccounts']),
];
