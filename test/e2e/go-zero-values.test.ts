/**
 * Objects as Kubernetes' Go types write them: a field without omitempty, a struct held by value and
 * a metav1.Time held by value are there whether a client set them or not (`reportingComponent: ""`,
 * `source: {}`, `eventTime: null`), in what is stored, answered and watched. No writer owns a zero
 * it did not send.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createNamespace, createSA, expectStatus, type Obj } from '../support/api.js';
import { request, startServer, type TestServer } from '../support/server.js';

const ns = 'zeros';

/** The fields each manager owns, by manager name. */
function owners(obj: Obj): Record<string, Obj> {
  return Object.fromEntries((obj.metadata.managedFields ?? []).map((e: Obj) => [e.manager, e.fieldsV1]));
}

describe('Go zero values', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await createNamespace(server, ns);
  });
  after(async () => { await server?.dispose(); });

  const post = (path: string, body: Obj, query = '') => request(server, `${path}${query}`, { method: 'POST', body });

  it('writes a core Event\'s unset times, source and reporting fields, and owns none of them to the creator', async () => {
    const created = await post(`/api/v1/namespaces/${ns}/events`, { apiVersion: 'v1', kind: 'Event', metadata: { name: 'sparse' }, involvedObject: { kind: 'Lease', name: 'x', namespace: ns } }, '?fieldManager=maker');
    expectStatus(created, 201, 'create');
    const e = created.json;
    assert.equal(e.eventTime, null);
    assert.equal(e.firstTimestamp, null);
    assert.equal(e.lastTimestamp, null);
    assert.deepEqual(e.source, {});
    assert.equal(e.reportingComponent, '');
    assert.equal(e.reportingInstance, '');
    assert.equal(Object.hasOwn(e, 'count'), false, 'count has omitempty');
    assert.equal(Object.hasOwn(e, 'series'), false, 'series is a pointer');
    assert.deepEqual(owners(e), { maker: { 'f:involvedObject': {} } });

    const read = await request(server, `/api/v1/namespaces/${ns}/events/sparse`);
    assert.deepEqual(read.json, e, 'a read answers what the create stored');

    // events/v1 writes eventTime and its structs and times by value, and omits empty reporting fields
    const viaGroup = (await request(server, `/apis/events.k8s.io/v1/namespaces/${ns}/events/sparse`)).json;
    assert.equal(viaGroup.eventTime, null);
    assert.deepEqual(viaGroup.deprecatedSource, {});
    assert.equal(viaGroup.deprecatedFirstTimestamp, null);
    assert.equal(viaGroup.deprecatedLastTimestamp, null);
    assert.deepEqual(viaGroup.regarding, { kind: 'Lease', name: 'x', namespace: ns });
    assert.equal(Object.hasOwn(viaGroup, 'reportingController'), false);
    assert.equal(Object.hasOwn(viaGroup, 'reportingInstance'), false);

    // a replace without the zeros leaves them where they were, owned by nobody
    const { eventTime: _t, firstTimestamp: _f, lastTimestamp: _l, source: _s, reportingComponent: _c, reportingInstance: _i, ...rest } = e;
    const replaced = await request(server, `/api/v1/namespaces/${ns}/events/sparse?fieldManager=replacer`, { method: 'PUT', body: { ...rest, message: 'now with a message' } });
    expectStatus(replaced, 200, 'replace');
    assert.equal(replaced.json.eventTime, null);
    assert.deepEqual(replaced.json.source, {});
    assert.equal(replaced.json.reportingComponent, '');
    assert.deepEqual(owners(replaced.json), { maker: { 'f:involvedObject': {} }, replacer: { 'f:message': {} } });
  });

  it('writes an events/v1 Event\'s regarding, deprecated source and timestamps', async () => {
    const event = {
      apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'modern' },
      eventTime: '2025-01-02T03:04:05.123456Z', reportingController: 'example.com/c', reportingInstance: 'c-1', action: 'Do', reason: 'Done', type: 'Normal',
    };
    // Kubernetes' legacy event validation: an empty regarding is in the default namespace only
    expectStatus(await post(`/apis/events.k8s.io/v1/namespaces/${ns}/events`, event), 422, 'create with an empty regarding');
    const created = await post('/apis/events.k8s.io/v1/namespaces/default/events', event);
    expectStatus(created, 201, 'create');
    assert.deepEqual(created.json.regarding, {});
    assert.deepEqual(created.json.deprecatedSource, {});
    assert.equal(created.json.deprecatedFirstTimestamp, null);
    assert.equal(created.json.deprecatedLastTimestamp, null);
    assert.equal(Object.hasOwn(created.json, 'deprecatedCount'), false);
    const core = (await request(server, '/api/v1/namespaces/default/events/modern')).json;
    assert.deepEqual(core.involvedObject, {});
    assert.equal(core.reportingComponent, 'example.com/c');
  });

  it('writes a Lease without a spec with `spec: {}`, and its pointer times only when set', async () => {
    const created = await post(`/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'bare' } });
    expectStatus(created, 201, 'create');
    assert.deepEqual(created.json.spec, {});
    assert.equal(created.json.metadata.managedFields, undefined, 'the creator set nothing a manager owns');
    const held = await post(`/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'held' }, spec: { holderIdentity: 'me' } });
    assert.deepEqual(held.json.spec, { holderIdentity: 'me' }, 'acquireTime and renewTime are pointers');
  });

  it('writes a Role\'s rules as null when unset and keeps an empty list', async () => {
    const unset = await post(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'none' } });
    expectStatus(unset, 201, 'create');
    assert.equal(unset.json.rules, null);
    const empty = await post(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'empty' }, rules: [] });
    assert.deepEqual(empty.json.rules, []);
  });

  it('writes a priority level\'s status empty, as the strategy resets it', async () => {
    const created = await post('/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations', {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'PriorityLevelConfiguration', metadata: { name: 'zeros' },
      spec: { type: 'Limited', limited: { limitResponse: { type: 'Reject' } } },
    });
    expectStatus(created, 201, 'create');
    assert.deepEqual(created.json.status, {});
    const bootstrap = (await request(server, '/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations/global-default')).json;
    assert.deepEqual(bootstrap.status, {});
  });

  it('answers a CustomResourceDefinition\'s create with the status Go writes before the controller runs', async () => {
    const created = await post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'zeros.example.com' },
      spec: {
        group: 'example.com', scope: 'Namespaced', names: { plural: 'zeros', kind: 'Zero' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    });
    expectStatus(created, 201, 'create');
    assert.deepEqual(created.json.status, { conditions: null, acceptedNames: { plural: '', kind: '' }, storedVersions: ['v1'] });
  });

  it('answers reviews and token requests with their zero metadata, user and bound reference', async () => {
    const ssar = await post('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'get', resource: 'pods' } },
    });
    expectStatus(ssar, 201, 'self subject access review');
    assert.deepEqual(ssar.json.metadata, { creationTimestamp: null });
    assert.deepEqual(ssar.json.status, { allowed: true });

    const review = await post('/apis/authentication.k8s.io/v1/tokenreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'not-a-token' } });
    expectStatus(review, 201, 'token review');
    assert.deepEqual(review.json.metadata, { creationTimestamp: null });
    assert.deepEqual(review.json.status.user, {});

    await createSA(server, ns, 'bearer');
    const token = await post(`/api/v1/namespaces/${ns}/serviceaccounts/bearer/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: ['a'] } });
    expectStatus(token, 201, 'token request');
    assert.equal(token.json.spec.boundObjectRef, null, 'a pointer without omitempty');
    assert.equal(token.json.spec.expirationSeconds, 3600);
  });
});
