/**
 * Auditing to a real log file (JSON, blocking mode) under a policy with a rule per level and
 * selector, and --authorization-mode AlwaysDeny so that denied requests exist: each level ×
 * stage, denied and unauthenticated requests, impersonation, non-resource requests, watches over
 * HTTP and WebSocket (ResponseStarted), the Audit-Id header, omitStages and omitManagedFields,
 * source IPs, and Secrets, whose content never appears at Metadata level.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { createNamespace, expectStatus, type Obj } from '../support/api.js';
import { auditIdOf, eventsOf, readJsonLines, tempDir, writePolicy } from '../support/audit.js';
import { userFor } from '../support/certs.js';
import { request, startServer, type Credentials, type TestServer } from '../support/server.js';

const policy = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: None
  nonResourceURLs: [/readyz*, /livez*, /healthz*]
- level: None
  resources: [{group: "", resources: [serviceaccounts]}]
  namespaces: [lvl-none]
- level: Metadata
  namespaces: [lvl-meta]
- level: Request
  namespaces: [lvl-req]
- level: RequestResponse
  namespaces: [lvl-rr]
- level: RequestResponse
  namespaces: [omit]
  omitStages: [RequestReceived]
  omitManagedFields: true
- level: Metadata
  resources: [{group: "", resources: [secrets]}]
- level: Request
  users: [jane]
- level: Metadata
`;

const stagesOf = (events: Obj[]) => events.map((e) => e.stage);

describe('auditing to a log file', () => {
  let server: TestServer;
  let logPath: string;
  let jane: Credentials;
  const events = () => readJsonLines(logPath);

  before(async () => {
    const dir = tempDir('audit-log-');
    logPath = join(dir, 'logs', 'audit.log');
    server = await startServer({ args: ['--authorization-mode', 'AlwaysDeny', '--audit-policy-file', writePolicy(dir, policy), '--audit-log-path', logPath] });
    jane = userFor(server, 'jane', ['dev']);
    for (const ns of ['lvl-none', 'lvl-meta', 'lvl-req', 'lvl-rr', 'omit']) await createNamespace(server, ns);
  });
  after(async () => { await server?.dispose(); });

  async function createSA(ns: string, name: string): Promise<{ id: string; body: Obj }> {
    const body = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, labels: { sent: 'by-test' } } };
    const res = await request(server, `/api/v1/namespaces/${ns}/serviceaccounts`, { method: 'POST', body });
    expectStatus(res, 201, `create ${ns}/${name}`);
    return { id: auditIdOf(res), body: res.json };
  }

  it('records each level with its stages: None nothing, Metadata no bodies, Request the request, RequestResponse both', async () => {
    const none = await createSA('lvl-none', 'a');
    const meta = await createSA('lvl-meta', 'a');
    const req = await createSA('lvl-req', 'a');
    const rr = await createSA('lvl-rr', 'a');
    const both = ['RequestReceived', 'ResponseComplete'];

    const m = await eventsOf(events, meta.id, both);
    assert.deepEqual(stagesOf(m), both);
    for (const e of m) {
      assert.equal(e.apiVersion, 'audit.orch.io/v1');
      assert.equal(e.kind, 'Event');
      assert.equal(e.level, 'Metadata');
      assert.equal(e.verb, 'create');
      assert.equal(e.requestURI, '/api/v1/namespaces/lvl-meta/serviceaccounts');
      assert.deepEqual(e.user, { username: 'orch-admin', groups: ['system:masters', 'system:authenticated'] });
      assert.deepEqual(e.sourceIPs, ['127.0.0.1']);
      assert.equal(e.requestObject, undefined);
      assert.equal(e.responseObject, undefined);
      assert.match(e.requestReceivedTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    }
    assert.equal(m[0].stageTimestamp, m[0].requestReceivedTimestamp, 'RequestReceived is stamped with the arrival');
    assert.equal(m[0].responseStatus, undefined);
    assert.deepEqual(m[1].responseStatus, { metadata: {}, code: 201 });
    assert.deepEqual(m[1].objectRef, { resource: 'serviceaccounts', namespace: 'lvl-meta', name: 'a', apiVersion: 'v1' });
    assert.deepEqual(m[1].annotations, { 'authorization.orch.io/decision': 'allow', 'authorization.orch.io/reason': '' });

    const r = await eventsOf(events, req.id, both);
    assert.equal(r[1].level, 'Request');
    assert.deepEqual(r[1].requestObject, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'a', labels: { sent: 'by-test' } } }, 'as the client sent it');
    assert.equal(r[1].responseObject, undefined);
    assert.equal(r[0].requestObject, undefined, 'RequestReceived comes before the body is read');

    const b = await eventsOf(events, rr.id, both);
    assert.equal(b[1].level, 'RequestResponse');
    assert.equal(b[1].requestObject.metadata.name, 'a');
    assert.deepEqual(b[1].responseObject, rr.body, 'the response as the client got it');

    // lvl-none's own create request is written before lvl-rr's events, so by now it would be there
    assert.equal(events().filter((e) => e.auditID === none.id).length, 0);
  });

  it('records reads and errors with the Status the client got', async () => {
    const get = await request(server, '/api/v1/namespaces/lvl-rr/serviceaccounts/a');
    const g = await eventsOf(events, auditIdOf(get), ['ResponseComplete']);
    assert.equal(g[1].verb, 'get');
    assert.deepEqual(g[1].responseObject, get.json);
    const missing = await request(server, '/api/v1/namespaces/lvl-meta/serviceaccounts/nope');
    const n = await eventsOf(events, auditIdOf(missing), ['ResponseComplete']);
    assert.deepEqual(n[1].responseStatus, {
      metadata: {}, status: 'Failure', message: 'serviceaccounts "nope" not found', reason: 'NotFound', details: { name: 'nope', kind: 'serviceaccounts' }, code: 404,
    });
    const list = await request(server, '/api/v1/namespaces/lvl-rr/serviceaccounts');
    const l = await eventsOf(events, auditIdOf(list), ['ResponseComplete']);
    assert.equal(l[1].verb, 'list');
    assert.deepEqual(l[1].responseObject, list.json);
  });

  it('records a request body sent as YAML as JSON', async () => {
    const res = await request(server, '/api/v1/namespaces/lvl-req/serviceaccounts', {
      method: 'POST', headers: { 'content-type': 'application/yaml' }, body: 'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: from-yaml\n',
    });
    expectStatus(res, 201, 'create from YAML');
    const e = await eventsOf(events, auditIdOf(res), ['ResponseComplete']);
    assert.deepEqual(e[1].requestObject, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'from-yaml' } });
  });

  it('answers every response with the event\'s Audit-Id, and keeps one the client sent', async () => {
    const res = await request(server, '/api/v1/namespaces/lvl-meta/serviceaccounts', { headers: { 'audit-id': 'trace-0042' } });
    assert.equal(res.headers['audit-id'], 'trace-0042');
    const e = await eventsOf(events, 'trace-0042', ['RequestReceived', 'ResponseComplete']);
    assert.equal(e.length, 2);
  });

  it('records a denied request with the authorizer\'s decision and reason', async () => {
    const res = await request(server, '/api/v1/namespaces/default/serviceaccounts', { credentials: jane });
    assert.equal(res.status, 403);
    const e = await eventsOf(events, auditIdOf(res), ['RequestReceived', 'ResponseComplete']);
    assert.equal(e[1].level, 'Request', 'the users rule selected jane');
    assert.deepEqual(e[1].user, { username: 'jane', groups: ['dev', 'system:authenticated'] });
    assert.deepEqual(e[1].annotations, { 'authorization.orch.io/decision': 'forbid', 'authorization.orch.io/reason': 'Everything is forbidden.' });
    assert.equal(e[1].responseStatus.code, 403);
    assert.equal(e[1].responseStatus.reason, 'Forbidden');
  });

  it('records a request that fails authentication: one ResponseStarted event, empty user, the 401', async () => {
    const res = await request(server, '/api/v1/namespaces/lvl-meta/serviceaccounts', { headers: { authorization: 'Bearer not-a-token' }, credentials: null });
    assert.equal(res.status, 401);
    const id = auditIdOf(res);
    const e = await eventsOf(events, id, ['ResponseStarted']);
    assert.equal(e.length, 1);
    assert.deepEqual(e[0].user, {});
    assert.equal(e[0].level, 'Metadata', 'the lvl-meta namespace rule matches without a user');
    assert.deepEqual(e[0].responseStatus, { metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
    assert.equal(JSON.stringify(e[0]).includes('not-a-token'), false, 'the credential is never recorded');
  });

  it('records the impersonated user beside the one who asked', async () => {
    const res = await request(server, '/api/v1/namespaces/lvl-meta/serviceaccounts', { headers: { 'impersonate-user': 'bob', 'impersonate-group': 'system:masters' } });
    expectStatus(res, 200, 'impersonated list');
    const e = await eventsOf(events, auditIdOf(res), ['ResponseComplete']);
    assert.equal(e[0].impersonatedUser, undefined, 'RequestReceived comes before impersonation');
    assert.equal(e[1].user.username, 'orch-admin');
    assert.deepEqual(e[1].impersonatedUser, { username: 'bob', groups: ['system:masters', 'system:authenticated'] });
  });

  it('records non-resource requests with the lower-cased method as verb and no objectRef', async () => {
    const res = await request(server, '/version?x=1');
    const e = await eventsOf(events, auditIdOf(res), ['ResponseComplete']);
    assert.equal(e[1].verb, 'get');
    assert.equal(e[1].requestURI, '/version?x=1');
    assert.equal(e[1].objectRef, undefined);
    assert.equal((await request(server, '/readyz')).status, 200);
  });

  it('takes X-Forwarded-For\'s addresses before the peer\'s', async () => {
    const res = await request(server, '/api/v1/namespaces/lvl-meta/serviceaccounts', { headers: { 'x-forwarded-for': '203.0.113.5, 198.51.100.7' } });
    const e = await eventsOf(events, auditIdOf(res), ['ResponseComplete']);
    assert.deepEqual(e[1].sourceIPs, ['203.0.113.5', '198.51.100.7', '127.0.0.1']);
  });

  it('records a watch over HTTP with ResponseStarted when its stream begins', async () => {
    const res = await request(server, '/api/v1/namespaces/lvl-meta/serviceaccounts?watch=true&timeoutSeconds=1');
    expectStatus(res, 200, 'watch');
    const e = await eventsOf(events, auditIdOf(res), ['RequestReceived', 'ResponseStarted', 'ResponseComplete']);
    assert.deepEqual(stagesOf(e), ['RequestReceived', 'ResponseStarted', 'ResponseComplete']);
    assert.equal(e[1].verb, 'watch');
    assert.deepEqual(e[1].responseStatus, { metadata: {}, code: 200 });
  });

  it('records a watch over WebSocket: ResponseStarted at the upgrade, ResponseComplete when it closes', async () => {
    const admin = server.admin;
    const ws = new WebSocket(`wss://127.0.0.1:${server.port}/api/v1/namespaces/lvl-meta/serviceaccounts?watch=true`, { ca: admin.ca, cert: admin.cert, key: admin.key });
    const id = await new Promise<string>((resolve, reject) => { ws.on('upgrade', (res) => resolve(String(res.headers['audit-id']))); ws.on('error', reject); });
    const started = await eventsOf(events, id, ['RequestReceived', 'ResponseStarted']);
    assert.deepEqual(started.find((e) => e.stage === 'ResponseStarted').responseStatus, { metadata: {}, code: 101 });
    assert.equal(started.some((e) => e.stage === 'ResponseComplete'), false, 'still open');
    ws.close();
    const e = await eventsOf(events, id, ['ResponseComplete']);
    assert.deepEqual(stagesOf(e), ['RequestReceived', 'ResponseStarted', 'ResponseComplete']);
  });

  it('omits the rule\'s stages and the objects\' managedFields as the rule says', async () => {
    const res = await request(server, '/api/v1/namespaces/omit/serviceaccounts/applied?fieldManager=test', {
      method: 'PATCH', headers: { 'content-type': 'application/apply-patch+yaml' }, body: 'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: applied\n  labels: {a: b}\n',
    });
    expectStatus(res, 201, 'apply');
    assert.ok(res.json.metadata.managedFields, 'the response has managedFields');
    const e = await eventsOf(events, auditIdOf(res), ['ResponseComplete']);
    assert.deepEqual(stagesOf(e), ['ResponseComplete']);
    assert.equal(e[0].responseObject.metadata.managedFields, undefined);
    assert.deepEqual(e[0].responseObject.metadata.labels, { a: 'b' });
    assert.deepEqual(e[0].requestObject, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'applied', labels: { a: 'b' } } }, 'the apply patch, as JSON');
  });

  it('never records a Secret\'s content at Metadata level, whatever is done to it', async () => {
    const plain = 'hunter2-plain-secret';
    const encoded = Buffer.from('s3cr3t-in-data').toString('base64');
    const path = '/api/v1/namespaces/default/secrets';
    const ids: string[] = [];
    const call = async (p: string, method: string, body?: unknown, headers?: Record<string, string>) => {
      const res = await request(server, p, { method, body: body as object, headers });
      ids.push(auditIdOf(res));
      return res;
    };
    expectStatus(await call(path, 'POST', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' }, data: { password: encoded }, stringData: { token: plain } }), 201, 'create secret');
    expectStatus(await call(`${path}/creds`, 'GET'), 200, 'get secret');
    expectStatus(await call(path, 'GET'), 200, 'list secrets');
    const got = (await request(server, `${path}/creds`)).json;
    expectStatus(await call(`${path}/creds`, 'PUT', { ...got, data: { ...got.data, other: encoded } }), 200, 'update secret');
    expectStatus(await call(`${path}/creds`, 'PATCH', { data: { third: encoded } }, { 'content-type': 'application/merge-patch+json' }), 200, 'patch secret');
    const invalid = await call(`${path}/creds`, 'PATCH', { type: 5 }, { 'content-type': 'application/merge-patch+json' });
    assert.ok(invalid.status >= 400, 'an invalid patch fails');
    assert.ok(invalid.body.includes(encoded), `whose Status quotes the Secret to the client: ${invalid.body}`);
    expectStatus(await call(`${path}/creds`, 'DELETE'), 200, 'delete secret');

    const recorded = await eventually(ids);
    for (const e of recorded) assert.equal(e.level, 'Metadata');
    const text = JSON.stringify(recorded);
    assert.ok(!text.includes(plain) && !text.includes(encoded) && !text.includes('s3cr3t-in-data'), 'no Secret content in the Metadata-level events');

    async function eventually(list: string[]): Promise<Obj[]> {
      const all: Obj[] = [];
      for (const id of list) all.push(...await eventsOf(events, id, ['ResponseComplete']));
      return all;
    }
  });

  it('records a Secret\'s body at Request level, as Kubernetes does when the policy asks for it', async () => {
    const encoded = Buffer.from('visible-at-request-level').toString('base64');
    const res = await request(server, '/api/v1/namespaces/lvl-req/secrets', { method: 'POST', body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { k: encoded } } });
    expectStatus(res, 201, 'create secret');
    const e = await eventsOf(events, auditIdOf(res), ['ResponseComplete']);
    assert.equal(e[1].requestObject.data.k, encoded);
  });

  it('creates the log file readable by its owner only', async () => {
    const { statSync } = await import('node:fs');
    assert.equal(statSync(logPath).mode & 0o777, 0o600);
  });
});
