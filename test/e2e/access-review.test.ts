/**
 * The access-review APIs (authorization.orch.io and authorization.k8s.io) against a server in
 * RBAC mode: real kubectl's `auth can-i` (with --as, --list, subresources, non-resource URLs),
 * `create role/rolebinding` and `auth reconcile`, and the reviews' own validation over HTTP.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { userFor } from '../support/certs.js';
import { kubectlFor, kubectlMissingReason, type Kubectl } from '../support/kubectl.js';
import { request, startServer, type TestServer } from '../support/server.js';

const skip = kubectlMissingReason();

describe('access reviews and kubectl auth under --authorization-mode RBAC', { skip }, () => {
  let server: TestServer;
  let kubectl: Kubectl;
  before(async () => {
    server = await startServer({ args: ['--authorization-mode', 'RBAC', '--anonymous-auth=true'] });
    kubectl = kubectlFor(server, mkdtempSync(join(tmpdir(), 'orch-kubectl-')));
  });
  after(async () => { await server?.dispose(); });

  it('answers kubectl auth can-i for the admin and, with --as, for other users', async () => {
    assert.equal((await kubectl.ok(['auth', 'can-i', 'delete', 'secrets', '-A'])).trim(), 'yes');
    const no = await kubectl.run(['auth', 'can-i', 'list', 'configmaps', '--as', 'jane', '-n', 'default']);
    assert.equal(no.code, 1, no.stderr);
    assert.equal(no.stdout.trim(), 'no');
    assert.equal((await kubectl.ok(['auth', 'can-i', 'get', '/healthz', '--as', 'jane'])).trim(), 'yes');
    assert.equal((await kubectl.run(['auth', 'can-i', 'get', '/metrics', '--as', 'jane'])).stdout.trim(), 'no');
    assert.equal((await kubectl.ok(['auth', 'can-i', 'create', 'selfsubjectaccessreviews.authorization.k8s.io', '--as', 'jane'])).trim(), 'yes');
  });

  it('follows kubectl create role / rolebinding at once, subresources included', async () => {
    await kubectl.ok(['create', 'role', 'cm-reader', '--verb=get,list', '--resource=configmaps,namespaces/status', '-n', 'default']);
    await kubectl.ok(['create', 'rolebinding', 'jane-cm', '--role=cm-reader', '--user=jane', '--group=dev', '-n', 'default']);
    assert.equal((await kubectl.ok(['auth', 'can-i', 'list', 'configmaps', '--as', 'jane', '-n', 'default'])).trim(), 'yes');
    assert.equal((await kubectl.ok(['auth', 'can-i', 'get', 'namespaces', '--subresource=status', '--as', 'jane', '-n', 'default'])).trim(), 'yes');
    assert.equal((await kubectl.run(['auth', 'can-i', 'list', 'configmaps', '--as', 'jane', '-n', 'orch-system'])).stdout.trim(), 'no');
    assert.equal((await kubectl.ok(['auth', 'can-i', 'get', 'configmaps', '--as', 'bob', '--as-group', 'dev', '-n', 'default'])).trim(), 'yes');
    const table = await kubectl.ok(['get', 'rolebindings', '-n', 'default', '-o', 'wide']);
    assert.match(table, /jane-cm\s+Role\/cm-reader\s+\S+\s+jane\s+dev/);
  });

  it('lists a user\'s rules with auth can-i --list', async () => {
    const out = await kubectl.ok(['auth', 'can-i', '--list', '--as', 'jane', '-n', 'default']);
    assert.match(out, /^configmaps\s+\[\]\s+\[\]\s+\[get list\]$/m);
    assert.match(out, /^\s+\[\/healthz\]\s+\[\]\s+\[get\]$/m);
    const elsewhere = await kubectl.ok(['auth', 'can-i', '--list', '--as', 'jane', '-n', 'orch-system']);
    assert.doesNotMatch(elsewhere, /^configmaps/m);
  });

  it('applies RBAC manifests with kubectl auth reconcile', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'orch-rbac-')), 'rbac.yaml');
    writeFileSync(file, [
      'apiVersion: rbac.authorization.k8s.io/v1', 'kind: ClusterRole', 'metadata: {name: lease-watcher}',
      'rules: [{apiGroups: [coordination.k8s.io], resources: [leases], verbs: [get, list, watch]}]', '---',
      'apiVersion: rbac.authorization.k8s.io/v1', 'kind: ClusterRoleBinding', 'metadata: {name: carol-leases}',
      'roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: lease-watcher}',
      'subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: carol}]', '',
    ].join('\n'));
    const out = await kubectl.ok(['auth', 'reconcile', '-f', file]);
    assert.match(out, /clusterrole.rbac.authorization.k8s.io\/lease-watcher reconciled/);
    assert.equal((await kubectl.ok(['auth', 'can-i', 'watch', 'leases.coordination.k8s.io', '--as', 'carol', '-A'])).trim(), 'yes');
    // the rule names Kubernetes' group; the spec's name of the group is the same resource
    const carol = userFor(server, 'carol');
    assert.equal((await request(server, '/apis/coordination.orch.io/v1/leases', { credentials: carol })).status, 200);
  });

  it('answers SubjectAccessReview, LocalSubjectAccessReview and SelfSubjectRulesReview over HTTP', async () => {
    const sar = await request(server, '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      method: 'POST', body: {
        apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview',
        spec: { user: 'jane', resourceAttributes: { namespace: 'default', verb: 'get', resource: 'configmaps' } },
      },
    });
    assert.equal(sar.status, 201, sar.body);
    assert.equal(sar.json.apiVersion, 'authorization.k8s.io/v1');
    assert.deepEqual(sar.json.status, { allowed: true, reason: 'RBAC: allowed by RoleBinding "jane-cm/default" of Role "cm-reader" to User "jane"' });
    const denied = await request(server, '/apis/authorization.orch.io/v1/subjectaccessreviews', {
      method: 'POST', body: { apiVersion: 'authorization.orch.io/v1', kind: 'SubjectAccessReview', spec: { user: 'jane', nonResourceAttributes: { path: '/metrics', verb: 'get' } } },
    });
    assert.deepEqual(denied.json.status, { allowed: false });
    const invalid = await request(server, '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      method: 'POST', body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: {} },
    });
    assert.equal(invalid.status, 422, invalid.body);
    assert.equal(invalid.json.message, 'SubjectAccessReview.authorization.k8s.io "" is invalid: [spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: "": at least one of user or group must be specified]');
    const local = await request(server, '/apis/authorization.k8s.io/v1/namespaces/orch-system/localsubjectaccessreviews', {
      method: 'POST', body: {
        apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview',
        spec: { user: 'jane', resourceAttributes: { namespace: 'default', verb: 'get', resource: 'configmaps' } },
      },
    });
    assert.equal(local.status, 400, local.body);
    assert.equal(local.json.message, 'spec.resourceAttributes.namespace must match namespace: orch-system');
    const rules = await request(server, '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      method: 'POST', credentials: userFor(server, 'jane'),
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: 'default' } },
    });
    assert.equal(rules.status, 201, rules.body);
    assert.equal(rules.json.status.incomplete, false);
    assert.ok(rules.json.status.resourceRules.some((r: { resources?: string[] }) => r.resources?.includes('configmaps')), rules.body);
    // a review is never stored: there is nothing to list
    assert.equal((await request(server, '/apis/authorization.k8s.io/v1/subjectaccessreviews')).status, 405);
  });

  it('keeps 1.32\'s field and label selector attributes, validated as Kubernetes validates them', async () => {
    const review = (resourceAttributes: object) => request(server, '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      method: 'POST', body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'list', resource: 'configmaps', ...resourceAttributes } } },
    });
    const fieldSelector = { requirements: [{ key: 'metadata.name', operator: 'In', values: ['a'] }] };
    const labelSelector = { rawSelector: 'app=web' };
    const kept = await review({ fieldSelector, labelSelector });
    assert.equal(kept.status, 201, kept.body);
    assert.deepEqual(kept.json.spec.resourceAttributes, { verb: 'list', resource: 'configmaps', fieldSelector, labelSelector });
    assert.deepEqual(kept.json.status, { allowed: true });
    // what the review cannot read narrows nothing, and its status says so (BuildEvaluationError)
    const unread = await review({
      fieldSelector: { rawSelector: 'no operator' },
      labelSelector: { requirements: [{ key: 'app', operator: 'In', values: ['a'] }, { key: 'tier', operator: 'Newer' }] },
    });
    assert.equal(unread.status, 201, unread.body);
    assert.deepEqual(unread.json.status, {
      allowed: true,
      evaluationError: 'spec.resourceAttributes.fieldSelector ignored due to parse error; spec.resourceAttributes.labelSelector partially ignored due to parse error',
    });

    const both = await review({ fieldSelector: { rawSelector: 'metadata.name=a', requirements: fieldSelector.requirements } });
    assert.equal(both.status, 422, both.body);
    assert.equal(both.json.message, 'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes.fieldSelector.rawSelector: Invalid value: "metadata.name=a": may not specified at the same time as requirements');
    const neither = await review({ labelSelector: {} });
    assert.equal(neither.json.message, 'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes.labelSelector.requirements: Required value: when spec.resourceAttributes.labelSelector is specified, requirements or rawSelector is required');
    const requirements = await review({
      fieldSelector: { requirements: [{ key: '', operator: 'Exists', values: ['x'] }, { key: 'spec.x', operator: 'Newer' }] },
      labelSelector: { requirements: [{ key: 'bad key', operator: 'In' }] },
    });
    assert.deepEqual(requirements.json.details.causes.map((c: { field: string; reason: string }) => `${c.reason} ${c.field}`), [
      'FieldValueRequired spec.resourceAttributes.fieldSelector.requirements[0].key',
      'FieldValueForbidden spec.resourceAttributes.fieldSelector.requirements[0].values',
      // an operator the server does not know passes: newer clients may send one
      'FieldValueRequired spec.resourceAttributes.labelSelector.requirements[0].values',
      'FieldValueInvalid spec.resourceAttributes.labelSelector.requirements[0].key',
    ]);
  });

  it('answers every user\'s own SelfSubjectAccessReview, anonymous ones excepted', async () => {
    const body = { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'list', resource: 'namespaces' } } };
    const jane = await request(server, '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { method: 'POST', credentials: userFor(server, 'jane'), body });
    assert.equal(jane.status, 201, jane.body);
    assert.equal(jane.json.status.allowed, false);
    const anonymous = await request(server, '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { method: 'POST', credentials: null, body });
    assert.equal(anonymous.status, 403, anonymous.body);
  });
});
