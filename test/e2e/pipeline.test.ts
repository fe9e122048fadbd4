/**
 * The request pipeline seen from outside: every answer carries an Audit-Id, impersonation is
 * authorized through the chain and changes who the request acts as, WebSocket upgrades pass the
 * same filters, and a malformed timeout is a 400 before any work starts. AlwaysDeny makes the
 * effective user visible in the 403 message, as against kube-apiserver 1.32.
 */
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { userFor } from '../support/certs.js';
import { request, request2, startServer, type Credentials, type TestServer } from '../support/server.js';

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('the request pipeline under --authorization-mode AlwaysDeny', () => {
  let server: TestServer;
  let jane: Credentials;
  before(async () => {
    server = await startServer({ args: ['--authorization-mode', 'AlwaysDeny'] });
    jane = userFor(server, 'jane', ['dev']);
  });
  after(async () => { await server?.dispose(); });

  it('answers every request with an Audit-Id, 401s and 404s included, over HTTP/1.1 and HTTP/2', async () => {
    const answers = [
      await request(server, '/api/v1/namespaces'),
      await request(server, '/version'),
      await request(server, '/api/v1/nothings'),
      await request(server, '/api/v1/namespaces', { credentials: jane }),
      await request(server, '/api/v1/namespaces', { headers: { authorization: 'Bearer not-a-token' }, credentials: null }),
      await request2(server, '/api/v1/namespaces'),
    ];
    assert.deepEqual(answers.map((r) => r.status), [200, 200, 404, 403, 401, 200]);
    for (const res of answers) assert.match(String(res.headers['audit-id']), uuid);
    assert.equal(new Set(answers.map((r) => r.headers['audit-id'])).size, answers.length, 'every request has its own ID');
  });

  it('carries the Audit-Id on every kind of answer: watch, metrics, health, discovery, OpenAPI (200, 301, 304)', async () => {
    const aggregated = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
    const v2 = await request(server, '/openapi/v2');
    const discovery = await request(server, '/apis', { headers: { accept: aggregated } });
    const answers = [
      await request(server, '/api/v1/namespaces?watch=1&timeoutSeconds=1'),
      await request(server, '/metrics'),
      await request(server, '/healthz'),
      discovery,
      await request(server, '/apis', { headers: { accept: aggregated, 'if-none-match': String(discovery.headers.etag) } }),
      v2,
      await request(server, '/openapi/v2', { headers: { 'if-none-match': String(v2.headers.etag) } }),
      await request(server, '/openapi/v3/api/v1?hash=stale'),
    ];
    assert.deepEqual(answers.map((r) => r.status), [200, 200, 200, 200, 304, 200, 304, 301]);
    for (const res of answers) assert.match(String(res.headers['audit-id']), uuid);
  });

  it('keeps an Audit-Id the client sent', async () => {
    const res = await request(server, '/api/v1/namespaces', { headers: { 'audit-id': 'trace-4711' } });
    assert.equal(res.headers['audit-id'], 'trace-4711');
  });

  it('acts as the impersonated user once the impersonation is allowed (system:masters may)', async () => {
    const res = await request(server, '/api/v1/namespaces', { headers: { 'impersonate-user': 'bob' } });
    assert.equal(res.status, 403, res.body);
    assert.equal(res.json.message, 'namespaces is forbidden: User "bob" cannot list resource "namespaces" in API group "" at the cluster scope: Everything is forbidden.');
  });

  it('carries impersonated groups: impersonating system:masters is allowed everything', async () => {
    const res = await request(server, '/api/v1/namespaces', { headers: { 'impersonate-user': 'bob', 'impersonate-group': 'system:masters' } });
    assert.equal(res.status, 200, res.body);
  });

  it('forbids impersonation the authorizer does not allow, naming the impersonate verb', async () => {
    const user = await request(server, '/api/v1/namespaces', { credentials: jane, headers: { 'impersonate-user': 'bob' } });
    assert.equal(user.status, 403);
    assert.equal(user.json.message, 'users "bob" is forbidden: User "jane" cannot impersonate resource "users" in API group "" at the cluster scope: Everything is forbidden.');
    assert.deepEqual(user.json.details, { name: 'bob', kind: 'users' });

    const sa = await request(server, '/api/v1/namespaces', { credentials: jane, headers: { 'impersonate-user': 'system:serviceaccount:ns1:robot' } });
    assert.equal(sa.status, 403);
    assert.equal(sa.json.message, 'serviceaccounts "robot" is forbidden: User "jane" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "ns1": Everything is forbidden.');
  });

  it('refuses groups, extra or uid without a user to impersonate, with kube-apiserver\'s internal error', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ 'impersonate-group': 'g' }, '[{Group  g    }]'],
      [{ 'impersonate-uid': 'u' }, '[{UID  u  authentication.k8s.io/v1  }]'],
      [{ 'impersonate-extra-scopes': 'view' }, '[{UserExtra  view  authentication.k8s.io/v1  scopes}]'],
    ];
    for (const [headers, refs] of cases) {
      const res = await request(server, '/api/v1/namespaces', { headers });
      assert.equal(res.status, 500, JSON.stringify(headers));
      assert.equal(res.json.message, `Internal Server Error: "/api/v1/namespaces": requested ${refs} without impersonating a user`);
    }
  });

  it('keeps repeated Impersonate-Group headers apart and reads extra keys lower-cased, then unescaped', async () => {
    const res = await new Promise<{ status: number; json: { status: { userInfo: Record<string, unknown> } } }>((resolve, reject) => {
      const req = httpsRequest(`${server.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`, {
        method: 'POST', ca: server.admin.ca, cert: server.admin.cert, key: server.admin.key, agent: false,
        // raw pairs: repeated headers as separate lines (a raw list carries no implicit Host)
        headers: [
          'host', `127.0.0.1:${server.port}`, 'content-type', 'application/json',
          'impersonate-user', 'system:anonymous', 'impersonate-group', 'a,b', 'impersonate-group', 'system:masters', 'impersonate-group', 'system:authenticated',
          'impersonate-extra-Acme.io%2FScope', 'x', 'impersonate-extra-bad%zz', 'y',
        ] as unknown as Record<string, string>,
      }, (r) => {
        let body = '';
        r.on('data', (c: Buffer) => { body += c.toString(); });
        r.on('end', () => resolve({ status: r.statusCode ?? 0, json: JSON.parse(body) }));
      });
      req.on('error', reject);
      req.end('{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}');
    });
    assert.equal(res.status, 201);
    assert.deepEqual(res.json.status.userInfo, {
      username: 'system:anonymous',
      // the anonymous user is unauthenticated whatever else it is given
      groups: ['a,b', 'system:masters', 'system:authenticated', 'system:unauthenticated'],
      extra: { 'acme.io/scope': ['x'], 'bad%zz': ['y'] },
    });
  });

  it('runs WebSocket upgrades through the same chain: 403 for jane, 101 with an Audit-Id for the admin', async () => {
    const path = '/api/v1/namespaces/default/serviceaccounts?watch=true';
    const denied = await new Promise<{ status: number; body: string; auditId: unknown }>((resolve, reject) => {
      const ws = new WebSocket(`wss://127.0.0.1:${server.port}${path}`, { ca: jane.ca, cert: jane.cert, key: jane.key });
      ws.on('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => { body += c.toString(); });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, auditId: res.headers['audit-id'] }));
      });
      ws.on('open', () => reject(new Error('upgrade was not refused')));
      ws.on('error', () => { /* reported through unexpected-response */ });
    });
    assert.equal(denied.status, 403);
    assert.match(String(denied.auditId), uuid);
    assert.equal(JSON.parse(denied.body).message, 'serviceaccounts is forbidden: User "jane" cannot watch resource "serviceaccounts" in API group "" in the namespace "default": Everything is forbidden.');

    const upgraded = await new Promise<unknown>((resolve, reject) => {
      const admin = server.admin;
      const ws = new WebSocket(`wss://127.0.0.1:${server.port}${path}`, { ca: admin.ca, cert: admin.cert, key: admin.key });
      ws.on('upgrade', (res) => { resolve(res.headers['audit-id']); ws.close(); });
      ws.on('error', reject);
    });
    assert.match(String(upgraded), uuid);
  });
});

describe('the request pipeline under the default flags', () => {
  let server: TestServer;
  before(async () => { server = await startServer(); });
  after(async () => { await server?.dispose(); });

  it('answers a malformed timeout with 400 before any work starts, and keeps serving', async () => {
    for (const timeout of ['abc', '5', '1x', '-']) {
      const res = await request(server, `/api/v1/namespaces/default/serviceaccounts?timeout=${timeout}`, {
        method: 'POST', body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: `t-${timeout.length}-${timeout.charCodeAt(0)}` } },
      });
      assert.equal(res.status, 400, `${timeout}: ${res.body}`);
      assert.match(res.json.message, /^invalid timeout specified in the request URL/);
    }
    const listed = await request(server, '/api/v1/namespaces/default/serviceaccounts');
    assert.deepEqual(listed.json.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['default'], 'nothing was created');
    assert.equal((await request(server, '/livez')).status, 200);
  });

  it('honours a valid timeout shorter than --request-timeout', async () => {
    const res = await request(server, '/api/v1/namespaces/default/serviceaccounts?timeout=30s');
    assert.equal(res.status, 200);
  });
});
