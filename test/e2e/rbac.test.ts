/**
 * The RBAC mode against a real server: decisions from Roles and bindings (within the time a
 * write takes to reach the read model), Kubernetes' 403 messages, the four kinds' validation,
 * both group names, and the bootstrap policy reconciled at start.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ApiException, CoreV1Api, KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import WebSocket from 'ws';
import { userFor } from '../support/certs.js';
import { certKubeconfig } from '../support/kube-clients.js';
import { request, request2, startServer, type Credentials, type HttpResponse, type TestServer } from '../support/server.js';

const rbac = '/apis/rbac.authorization.orch.io/v1';
const rbacK8s = '/apis/rbac.authorization.k8s.io/v1';

function expectForbidden(res: HttpResponse, message: string): void {
  assert.equal(res.status, 403, `expected 403, got ${res.status}: ${res.body}`);
  assert.equal(res.json.reason, 'Forbidden');
  assert.equal(res.json.message, message);
}

/** waits until the aggregation controller has filled a ClusterRole's rules */
async function aggregated(server: TestServer, name: string): Promise<Array<Record<string, string[]>>> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const rules = (await request(server, `${rbac}/clusterroles/${name}`)).json.rules;
    if (rules?.length) return rules;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`${name} was never aggregated`);
}

/** the read model applies a committed write before answering it; a decision right after must see it */
async function create(server: TestServer, path: string, body: object): Promise<void> {
  const res = await request(server, path, { method: 'POST', body });
  assert.equal(res.status, 201, res.body);
}

describe('authorization with --authorization-mode RBAC and anonymous requests', () => {
  let server: TestServer;
  let jane: Credentials;
  before(async () => {
    server = await startServer({ args: ['--authorization-mode', 'RBAC', '--anonymous-auth=true'] });
    jane = userFor(server, 'jane', ['dev']);
  });
  after(async () => { await server?.dispose(); });

  it('lets anonymous health probes and /version through system:public-info-viewer, and nothing else', async () => {
    for (const path of ['/healthz', '/livez', '/readyz', '/version']) {
      const res = await request(server, path, { credentials: null });
      assert.equal(res.status, 200, `${path}: ${res.body}`);
    }
    expectForbidden(await request(server, '/api/v1/namespaces', { credentials: null }),
      'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope');
    expectForbidden(await request(server, '/apis', { credentials: null }), 'forbidden: User "system:anonymous" cannot get path "/apis"');
  });

  it('lets authenticated users discover the API (system:discovery) but not read objects', async () => {
    assert.equal((await request(server, '/apis', { credentials: jane })).status, 200);
    assert.equal((await request(server, '/openapi/v2', { credentials: jane })).status, 200);
    expectForbidden(await request(server, '/api/v1/namespaces/default/serviceaccounts', { credentials: jane }),
      'serviceaccounts is forbidden: User "jane" cannot list resource "serviceaccounts" in API group "" in the namespace "default"');
    expectForbidden(await request(server, '/api/v1/namespaces/default/serviceaccounts?watch=true', { credentials: jane }),
      'serviceaccounts is forbidden: User "jane" cannot watch resource "serviceaccounts" in API group "" in the namespace "default"');
    expectForbidden(await request(server, '/api/v1/namespaces/default/serviceaccounts/default', { credentials: jane }),
      'serviceaccounts "default" is forbidden: User "jane" cannot get resource "serviceaccounts" in API group "" in the namespace "default"');
    expectForbidden(await request(server, '/api/v1/namespaces/default/configmaps', { credentials: jane, method: 'DELETE' }),
      'configmaps is forbidden: User "jane" cannot deletecollection resource "configmaps" in API group "" in the namespace "default"');
    // Kubernetes' RequestInfo gives a namespace's own subresources the namespace, too
    expectForbidden(await request(server, '/api/v1/namespaces/default/finalize', { credentials: jane, method: 'PUT', body: {} }),
      'namespaces "default" is forbidden: User "jane" cannot update resource "namespaces/finalize" in API group "" in the namespace "default"');
    expectForbidden(await request(server, '/metrics', { credentials: jane }), 'forbidden: User "jane" cannot get path "/metrics"');
  });

  it('answers the same 403 over HTTP/2 and to a WebSocket upgrade', async () => {
    expectForbidden(await request2(server, '/api/v1/namespaces/default/configmaps?watch=true', { credentials: jane }),
      'configmaps is forbidden: User "jane" cannot watch resource "configmaps" in API group "" in the namespace "default"');
    expectForbidden(await request2(server, '/logs', { credentials: jane }), 'forbidden: User "jane" cannot get path "/logs"');
    const refused = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const ws = new WebSocket(`wss://127.0.0.1:${server.port}/api/v1/namespaces/default/secrets?watch=true`, { ca: jane.ca, cert: jane.cert, key: jane.key });
      ws.on('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => { body += c.toString(); });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      ws.on('open', () => reject(new Error('upgrade was not refused')));
      ws.on('error', () => { /* reported through unexpected-response */ });
    });
    assert.equal(refused.status, 403);
    assert.equal(JSON.parse(refused.body).message, 'secrets is forbidden: User "jane" cannot watch resource "secrets" in API group "" in the namespace "default"');
  });

  it('works with @kubernetes/client-node: a 403 ApiException, then the grant a Role and binding give', async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(certKubeconfig(server, join(mkdtempSync(join(tmpdir(), 'orch-rbac-')), 'nina.kubeconfig'), userFor(server, 'nina')));
    const core = kc.makeApiClient(CoreV1Api);
    await assert.rejects(core.listNamespacedConfigMap({ namespace: 'default' }), (err: unknown) => {
      assert.ok(err instanceof ApiException);
      assert.equal(err.code, 403);
      assert.match(JSON.stringify(err.body), /cannot list resource .*configmaps/);
      return true;
    });
    const adminKc = new KubeConfig();
    adminKc.loadFromFile(server.kubeconfig);
    const rbacApi = adminKc.makeApiClient(RbacAuthorizationV1Api);
    await rbacApi.createNamespacedRole({ namespace: 'default', body: { metadata: { name: 'cm-reader' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }] } });
    await rbacApi.createNamespacedRoleBinding({ namespace: 'default', body: {
      metadata: { name: 'nina-cm' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm-reader' },
      subjects: [{ kind: 'User', name: 'nina', apiGroup: 'rbac.authorization.k8s.io' }],
    } });
    const listed = await core.listNamespacedConfigMap({ namespace: 'default' });
    assert.ok(Array.isArray(listed.items));
    const roles = await rbacApi.listNamespacedRole({ namespace: 'default' });
    assert.ok(roles.items.some((r) => r.metadata?.name === 'cm-reader'));
  });

  it('grants what a RoleBinding of a Role holds, in its namespace only, as soon as the binding is written', async () => {
    await create(server, `${rbac}/namespaces/default/roles`, {
      apiVersion: 'rbac.authorization.orch.io/v1', kind: 'Role', metadata: { name: 'sa-reader' },
      rules: [{ apiGroups: [''], resources: ['serviceaccounts'], verbs: ['get', 'list'] }],
    });
    const list = () => request(server, '/api/v1/namespaces/default/serviceaccounts', { credentials: jane });
    assert.equal((await list()).status, 403);
    await create(server, `${rbac}/namespaces/default/rolebindings`, {
      apiVersion: 'rbac.authorization.orch.io/v1', kind: 'RoleBinding', metadata: { name: 'jane-reads' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'sa-reader' },
      subjects: [{ kind: 'User', name: 'jane' }],
    });
    assert.equal((await list()).status, 200);
    assert.equal((await request(server, '/api/v1/namespaces/default/serviceaccounts/default', { credentials: jane })).status, 200);
    // not another verb, not another namespace
    assert.equal((await request(server, '/api/v1/namespaces/default/serviceaccounts?watch=true', { credentials: jane })).status, 403);
    assert.equal((await request(server, '/api/v1/namespaces/orch-system/serviceaccounts', { credentials: jane })).status, 403);
    // the binding is defaulted as Kubernetes defaults it
    const binding = await request(server, `${rbacK8s}/namespaces/default/rolebindings/jane-reads`);
    assert.deepEqual(binding.json.subjects, [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'jane' }]);
    assert.equal(binding.json.apiVersion, 'rbac.authorization.k8s.io/v1');
    // deleting the binding takes the grant away
    assert.equal((await request(server, `${rbac}/namespaces/default/rolebindings/jane-reads`, { method: 'DELETE' })).status, 200);
    assert.equal((await list()).status, 403);
  });

  it('grants to groups, service accounts, resource names, subresources and wildcards through ClusterRoleBindings', async () => {
    await create(server, `${rbacK8s}/clusterroles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'narrow' },
      rules: [
        { apiGroups: [''], resources: ['configmaps'], resourceNames: ['allowed'], verbs: ['get'] },
        { apiGroups: [''], resources: ['*/finalize'], verbs: ['update'] },
        // the Kubernetes group name covers the spec's
        { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['*'] },
        { nonResourceURLs: ['/metrics*'], verbs: ['get'] },
      ],
    });
    await create(server, `${rbac}/clusterrolebindings`, {
      apiVersion: 'rbac.authorization.orch.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'dev-narrow' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'narrow' },
      subjects: [{ kind: 'Group', name: 'dev' }, { kind: 'ServiceAccount', name: 'robot', namespace: 'default' }],
    });
    assert.equal((await request(server, '/api/v1/namespaces/default/configmaps/allowed', { credentials: jane })).status, 404);
    assert.equal((await request(server, '/api/v1/namespaces/default/configmaps/other', { credentials: jane })).status, 403);
    assert.equal((await request(server, `${rbac}/namespaces/default/roles`, { credentials: jane })).status, 200);
    assert.equal((await request(server, `${rbacK8s}/namespaces/default/roles`, { credentials: jane })).status, 200);
    assert.equal((await request(server, `${rbac}/namespaces/default/rolebindings`, { credentials: jane })).status, 403);
    assert.notEqual((await request(server, '/metrics', { credentials: jane })).status, 403);
    const robot = userFor(server, 'system:serviceaccount:default:robot', ['system:serviceaccounts']);
    assert.equal((await request(server, `${rbac}/namespaces/orch-system/roles`, { credentials: robot })).status, 200);
    const other = userFor(server, 'system:serviceaccount:orch-system:robot', ['system:serviceaccounts']);
    assert.equal((await request(server, `${rbac}/namespaces/orch-system/roles`, { credentials: other })).status, 403);
  });

  it('accepts bindings to missing roles, which grant nothing until the role appears', async () => {
    await create(server, `${rbac}/namespaces/default/rolebindings`, {
      apiVersion: 'rbac.authorization.orch.io/v1', kind: 'RoleBinding', metadata: { name: 'early' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'later' },
      subjects: [{ kind: 'User', name: 'jane' }],
    });
    const get = () => request(server, '/api/v1/namespaces/default/secrets', { credentials: jane });
    assert.equal((await get()).status, 403);
    await create(server, `${rbac}/namespaces/default/roles`, {
      apiVersion: 'rbac.authorization.orch.io/v1', kind: 'Role', metadata: { name: 'later' },
      rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['list'] }],
    });
    assert.equal((await get()).status, 200);
  });

  it('refuses invalid rules and bindings with 422 and Kubernetes\' messages', async () => {
    const role = await request(server, `${rbac}/namespaces/default/roles`, {
      method: 'POST', body: {
        apiVersion: 'rbac.authorization.orch.io/v1', kind: 'Role', metadata: { name: 'bad' },
        rules: [{ apiGroups: [''], resources: ['pods'] }, { verbs: ['get'], nonResourceURLs: ['/x'] }, { verbs: ['get'] }],
      },
    });
    assert.equal(role.status, 422, role.body);
    assert.equal(role.json.message, 'Role.rbac.authorization.orch.io "bad" is invalid: [rules[0].verbs: Required value: verbs must contain at least one value, '
      + 'rules[1].nonResourceURLs: Invalid value: []string{"/x"}: namespaced rules cannot apply to non-resource URLs, '
      + 'rules[2].apiGroups: Required value: resource rules must supply at least one api group, '
      + 'rules[2].resources: Required value: resource rules must supply at least one resource]');
    const binding = await request(server, `${rbac}/clusterrolebindings`, {
      method: 'POST', body: {
        apiVersion: 'rbac.authorization.orch.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'bad' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'x' },
        subjects: [{ kind: 'ServiceAccount', name: 'robot' }, { kind: 'Robot', name: 'r2' }],
      },
    });
    assert.equal(binding.status, 422, binding.body);
    assert.equal(binding.json.message, 'ClusterRoleBinding.rbac.authorization.orch.io "bad" is invalid: [roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole", '
      + 'subjects[0].namespace: Required value, subjects[1].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"]');
    const changed = await request(server, `${rbac}/namespaces/default/rolebindings/early`, {
      method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json' }, body: { roleRef: { name: 'other' } },
    });
    assert.equal(changed.status, 422, changed.body);
    assert.match(changed.json.message, /roleRef: Invalid value: .*: cannot change roleRef/);
  });

  it('creates the bootstrap policy at start, labelled and marked for autoupdate', async () => {
    const roles = await request(server, `${rbac}/clusterroles?labelSelector=orch.io/bootstrapping%3Drbac-defaults`);
    const names = roles.json.items.map((r: { metadata: { name: string } }) => r.metadata.name);
    for (const name of ['cluster-admin', 'admin', 'edit', 'view', 'system:discovery', 'system:basic-user', 'system:public-info-viewer', 'system:auth-delegator']) {
      assert.ok(names.includes(name), `${name} in ${names}`);
    }
    const admin = await request(server, `${rbacK8s}/clusterrolebindings/cluster-admin`);
    assert.equal(admin.json.metadata.annotations['rbac.authorization.kubernetes.io/autoupdate'], 'true');
    assert.deepEqual(admin.json.subjects, [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:masters' }]);
  });
});

describe('ClusterRole aggregation', () => {
  let server: TestServer;
  before(async () => { server = await startServer({ args: ['--authorization-mode', 'RBAC'] }); });
  after(async () => { await server?.dispose(); });

  it('fills admin, edit and view from the labelled roles, and follows their changes and deletion', async () => {
    const view = await aggregated(server, 'view');
    assert.ok(view.some((r) => r.resources?.includes('configmaps') && r.verbs.includes('list')), JSON.stringify(view));
    assert.ok(!view.some((r) => r.resources?.includes('secrets')), 'view does not read secrets');
    const edit = await aggregated(server, 'edit');
    assert.ok(edit.some((r) => r.resources?.includes('secrets')), JSON.stringify(edit));
    await create(server, `${rbac}/clusterroles`, {
      apiVersion: 'rbac.authorization.orch.io/v1', kind: 'ClusterRole',
      metadata: { name: 'lease-viewer', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } },
      rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get'] }],
    });
    const hasLeases = async (name: string) => ((await request(server, `${rbac}/clusterroles/${name}`)).json.rules ?? [])
      .some((r: { resources?: string[] }) => r.resources?.includes('leases'));
    const eventually = async (check: () => Promise<boolean>, what: string) => {
      for (let attempt = 0; attempt < 200; attempt++) { if (await check()) return; await new Promise((r) => setTimeout(r, 50)); }
      assert.fail(what);
    };
    // through view into edit, and through edit into admin
    await eventually(() => hasLeases('admin'), 'admin never got the leases rule');
    assert.ok(await hasLeases('view'));
    const jane = userFor(server, 'jane');
    await create(server, `${rbac}/namespaces/default/rolebindings`, {
      apiVersion: 'rbac.authorization.orch.io/v1', kind: 'RoleBinding', metadata: { name: 'jane-views' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'User', name: 'jane' }],
    });
    assert.equal((await request(server, '/apis/coordination.k8s.io/v1/namespaces/default/leases/x', { credentials: jane })).status, 404);
    assert.equal((await request(server, `${rbac}/clusterroles/lease-viewer`, { method: 'DELETE' })).status, 200);
    await eventually(async () => !(await hasLeases('view')) && !(await hasLeases('admin')), 'the leases rule stayed after its role was deleted');
    assert.equal((await request(server, '/apis/coordination.k8s.io/v1/namespaces/default/leases/x', { credentials: jane })).status, 403);
  });
});

describe('bootstrap policy reconciliation across restarts', () => {
  it('recreates deleted defaults, restores missing rules and subjects, keeps additions and opted-out roles', async () => {
    let server = await startServer({ args: ['--authorization-mode', 'RBAC'] });
    const { dataDir } = server;
    try {
      assert.equal((await request(server, `${rbac}/clusterroles/system:discovery`, { method: 'DELETE' })).status, 200);
      const publicInfo = (await request(server, `${rbac}/clusterroles/system:public-info-viewer`)).json;
      publicInfo.rules = [{ nonResourceURLs: ['/custom'], verbs: ['get'] }];
      assert.equal((await request(server, `${rbac}/clusterroles/system:public-info-viewer`, { method: 'PUT', body: publicInfo })).status, 200);
      const basic = (await request(server, `${rbac}/clusterroles/system:basic-user`)).json;
      basic.metadata.annotations['rbac.authorization.kubernetes.io/autoupdate'] = 'false';
      basic.rules = [];
      assert.equal((await request(server, `${rbac}/clusterroles/system:basic-user`, { method: 'PUT', body: basic })).status, 200);
      const binding = (await request(server, `${rbac}/clusterrolebindings/system:discovery`)).json;
      binding.subjects = [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'jane' }];
      assert.equal((await request(server, `${rbac}/clusterrolebindings/system:discovery`, { method: 'PUT', body: binding })).status, 200);
      await server.stop();

      server = await startServer({ dataDir, args: ['--authorization-mode', 'RBAC'] });
      assert.equal((await request(server, `${rbac}/clusterroles/system:discovery`)).status, 200);
      const rules = (await request(server, `${rbac}/clusterroles/system:public-info-viewer`)).json.rules;
      assert.deepEqual(rules[0], { nonResourceURLs: ['/custom'], verbs: ['get'] });
      assert.ok(rules.some((r: { nonResourceURLs?: string[] }) => r.nonResourceURLs?.includes('/healthz')), JSON.stringify(rules));
      assert.deepEqual((await request(server, `${rbac}/clusterroles/system:basic-user`)).json.rules, []);
      assert.deepEqual((await request(server, `${rbac}/clusterrolebindings/system:discovery`)).json.subjects.map((s: { name: string }) => s.name),
        ['jane', 'system:authenticated']);
    } finally {
      await server.dispose();
    }
  });
});

describe('RBAC escalation prevention', () => {
  let server: TestServer;
  let jane: Credentials;
  const ns = `${rbac}/namespaces/default`;
  const role = (name: string, rules: object[]) => ({ apiVersion: 'rbac.authorization.orch.io/v1', kind: 'Role', metadata: { name }, rules });
  const bindingTo = (name: string, kind: string, roleName: string) => ({
    apiVersion: 'rbac.authorization.orch.io/v1', kind: 'RoleBinding', metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name: roleName }, subjects: [{ kind: 'User', name: 'someone' }],
  });
  const asJane = (path: string, body: object) => request(server, path, { method: 'POST', credentials: jane, body });

  before(async () => {
    server = await startServer({ args: ['--authorization-mode', 'RBAC'] });
    jane = userFor(server, 'jane', ['dev']);
    await create(server, `${ns}/roles`, role('rbac-manager', [
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'], verbs: ['create', 'update', 'get'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] },
    ]));
    await create(server, `${ns}/rolebindings`, {
      apiVersion: 'rbac.authorization.orch.io/v1', kind: 'RoleBinding', metadata: { name: 'jane-manages' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'rbac-manager' }, subjects: [{ kind: 'User', name: 'jane' }],
    });
  });
  after(async () => { await server?.dispose(); });

  it('lets a user grant what they hold, and refuses more with Kubernetes\' message', async () => {
    assert.equal((await asJane(`${ns}/roles`, role('cm-get', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }]))).status, 201);
    const res = await asJane(`${ns}/roles`, role('secrets', [
      { apiGroups: [''], resources: ['secrets', 'configmaps'], verbs: ['get', 'delete'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['list'] },
    ]));
    expectForbidden(res, 'roles.rbac.authorization.orch.io "secrets" is forbidden: user "jane" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n'
      + '{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}\n{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}');
  });

  it('refuses bindings to roles the user does not hold or that do not exist, unless the user may bind them', async () => {
    await aggregated(server, 'edit');
    const toEdit = await asJane(`${ns}/rolebindings`, bindingTo('to-edit', 'ClusterRole', 'edit'));
    assert.equal(toEdit.status, 403, toEdit.body);
    assert.match(toEdit.json.message, /^rolebindings.rbac.authorization.orch.io "to-edit" is forbidden: user "jane" \(groups=\["dev" "system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n/);
    // configmaps get and list are held; the rest of edit is not
    assert.match(toEdit.json.message, /^\{APIGroups:\[""\], Resources:\["configmaps"\], Verbs:\["create" "delete" "deletecollection" "patch" "update" "watch"\]\}$/m);
    assert.match(toEdit.json.message, /^\{APIGroups:\[""\], Resources:\["secrets"\], Verbs:\["create" "delete" "deletecollection" "patch" "update" "get" "list" "watch"\]\}$/m);
    expectForbidden(await asJane(`${ns}/rolebindings`, bindingTo('to-nothing', 'Role', 'nope')),
      'rolebindings.rbac.authorization.orch.io "to-nothing" is forbidden: roles.rbac.authorization.k8s.io "nope" not found');
    assert.equal((await asJane(`${ns}/rolebindings`, bindingTo('to-cm-get', 'Role', 'cm-get'))).status, 201);
    await create(server, `${rbac}/clusterroles`, {
      apiVersion: 'rbac.authorization.orch.io/v1', kind: 'ClusterRole', metadata: { name: 'bind-edit' },
      rules: [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], resourceNames: ['edit'], verbs: ['bind'] }],
    });
    await create(server, `${rbac}/clusterrolebindings`, {
      apiVersion: 'rbac.authorization.orch.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'jane-binds-edit' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'bind-edit' }, subjects: [{ kind: 'User', name: 'jane' }],
    });
    assert.equal((await asJane(`${ns}/rolebindings`, bindingTo('to-edit', 'ClusterRole', 'edit'))).status, 201);
  });

  it('lets a user with escalate grant anything, and keeps aggregationRule to full authority', async () => {
    await create(server, `${rbac}/clusterroles`, {
      apiVersion: 'rbac.authorization.orch.io/v1', kind: 'ClusterRole', metadata: { name: 'escalator' },
      rules: [
        { apiGroups: ['rbac.authorization.orch.io'], resources: ['roles'], verbs: ['escalate', 'create'] },
        { apiGroups: ['rbac.authorization.orch.io'], resources: ['clusterroles'], verbs: ['create'] },
      ],
    });
    await create(server, `${rbac}/clusterrolebindings`, {
      apiVersion: 'rbac.authorization.orch.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'jane-escalates' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'escalator' }, subjects: [{ kind: 'User', name: 'jane' }],
    });
    assert.equal((await asJane(`${ns}/roles`, role('anything', [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }]))).status, 201);
    const gathering = await asJane(`${rbac}/clusterroles`, {
      apiVersion: 'rbac.authorization.orch.io/v1', kind: 'ClusterRole', metadata: { name: 'gathers' },
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { x: 'y' } }] },
    });
    expectForbidden(gathering, 'clusterroles.rbac.authorization.orch.io "gathers" is forbidden: must have cluster-admin privileges to use the aggregationRule');
  });
});
