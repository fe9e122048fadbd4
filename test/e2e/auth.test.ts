/**
 * Authentication (client certificates, anonymous requests), the AlwaysAllow / AlwaysDeny
 * authorizers, health endpoints, discovery and /version, over HTTPS against real server processes,
 * checked against kube-apiserver 1.32. Client certificates are minted with the openssl CLI.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request, request2, startServer, type Credentials, type HttpResponse, type TestServer } from '../support/server.js';
import { foreignAdmin, userFor } from '../support/certs.js';

function janeFor(server: TestServer): Credentials {
  return userFor(server, 'jane', ['dev']);
}

// ---------------------------------------------------------------------------------------------

const unauthorized = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 };

function expectForbidden(res: HttpResponse, message: string, details: Record<string, unknown>): void {
  assert.equal(res.status, 403, `expected 403, got ${res.status}: ${res.body}`);
  assert.equal(res.headers['content-type'], 'application/json');
  assert.deepEqual(res.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'Forbidden', details, code: 403 });
}

describe('authentication with the default flags (AlwaysAllow, so anonymous is off)', () => {
  let server: TestServer;
  before(async () => { server = await startServer(); });
  after(async () => { await server?.dispose(); });

  it('answers 401 Unauthorized to a request without a client certificate', async () => {
    for (const path of ['/api/v1/namespaces/default/serviceaccounts', '/api/v1/namespaces', '/version', '/healthz']) {
      const res = await request(server, path, { credentials: null });
      assert.equal(res.status, 401, `${path}: ${res.body}`);
      assert.equal(res.headers['content-type'], 'application/json');
      assert.deepEqual(res.json, unauthorized, path);
    }
    const h2 = await request2(server, '/api/v1/namespaces', { credentials: null });
    assert.equal(h2.status, 401);
    assert.deepEqual(h2.json, unauthorized);
  });

  it('logs that anonymous auth is turned off because of AlwaysAllow', () => {
    assert.ok(server.logs.some((l) => l.includes('AnonymousAuth is not allowed with the AlwaysAllow authorizer. Resetting AnonymousAuth to false. You should use a different authorizer')),
      server.logs.join('\n'));
  });

  it('answers 401 to a bearer token no authenticator accepts', async () => {
    const res = await request(server, '/api/v1/namespaces', { credentials: null, headers: { authorization: 'Bearer not-a-real-token' } });
    assert.equal(res.status, 401, res.body);
    assert.deepEqual(res.json, unauthorized);
  });

  it('answers 401 to a client certificate signed by another CA, whatever groups it claims', async () => {
    const mallory = foreignAdmin();
    const res = await request(server, '/api/v1/namespaces', { credentials: { ca: server.admin.ca, ...mallory } });
    assert.equal(res.status, 401, res.body);
    assert.deepEqual(res.json, unauthorized);
  });

  it('accepts a client certificate signed by the cluster CA for any user', async () => {
    const jane = janeFor(server);
    const res = await request(server, '/api/v1/namespaces/default/serviceaccounts', { credentials: jane });
    assert.equal(res.status, 200, res.body);
    assert.equal(res.json.kind, 'ServiceAccountList');
    const created = await request(server, '/api/v1/namespaces/default/serviceaccounts', {
      credentials: jane, method: 'POST', body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'made-by-jane' } },
      headers: { 'user-agent': 'jane-tool/1.0' },
    });
    assert.equal(created.status, 201, created.body);
  });
});

describe('authorization with --authorization-mode AlwaysDeny', () => {
  let server: TestServer;
  let jane: Credentials;
  before(async () => {
    server = await startServer({ args: ['--authorization-mode', 'AlwaysDeny'] });
    jane = janeFor(server);
  });
  after(async () => { await server?.dispose(); });

  it('still allows system:masters (the admin certificate)', async () => {
    const list = await request(server, '/api/v1/namespaces/default/serviceaccounts');
    assert.equal(list.status, 200, list.body);
    const create = await request(server, '/api/v1/namespaces/default/serviceaccounts', { method: 'POST', body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'by-admin' } } });
    assert.equal(create.status, 201, create.body);
    assert.equal((await request(server, '/version')).status, 200);
  });

  it('forbids a list for an ordinary user, naming user, verb, resource, group and namespace', async () => {
    const res = await request(server, '/api/v1/namespaces/default/serviceaccounts', { credentials: jane });
    expectForbidden(res,
      'serviceaccounts is forbidden: User "jane" cannot list resource "serviceaccounts" in API group "" in the namespace "default": Everything is forbidden.',
      { kind: 'serviceaccounts' });
  });

  it('forbids a get with the name in message and details', async () => {
    const res = await request(server, '/api/v1/namespaces/default/serviceaccounts/default', { credentials: jane });
    expectForbidden(res,
      'serviceaccounts "default" is forbidden: User "jane" cannot get resource "serviceaccounts" in API group "" in the namespace "default": Everything is forbidden.',
      { name: 'default', kind: 'serviceaccounts' });
  });

  it('forbids a create, naming the verb create', async () => {
    const res = await request(server, '/api/v1/namespaces/default/secrets', {
      credentials: jane, method: 'POST', body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'nope' } },
    });
    expectForbidden(res,
      'secrets is forbidden: User "jane" cannot create resource "secrets" in API group "" in the namespace "default": Everything is forbidden.',
      { kind: 'secrets' });
    assert.equal((await request(server, '/api/v1/namespaces/default/secrets/nope')).status, 404);
  });

  it('forbids update, delete and deletecollection with the right verbs', async () => {
    const put = await request(server, '/apis/events.orch.io/v1/namespaces/default/events/e1', {
      credentials: jane, method: 'PUT', body: { apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: { name: 'e1' } },
    });
    expectForbidden(put,
      'events.events.orch.io "e1" is forbidden: User "jane" cannot update resource "events" in API group "events.orch.io" in the namespace "default": Everything is forbidden.',
      { name: 'e1', group: 'events.orch.io', kind: 'events' });
    const del = await request(server, '/api/v1/namespaces/default/serviceaccounts/by-admin', { credentials: jane, method: 'DELETE' });
    expectForbidden(del,
      'serviceaccounts "by-admin" is forbidden: User "jane" cannot delete resource "serviceaccounts" in API group "" in the namespace "default": Everything is forbidden.',
      { name: 'by-admin', kind: 'serviceaccounts' });
    const delAll = await request(server, '/api/v1/namespaces/default/serviceaccounts', { credentials: jane, method: 'DELETE' });
    expectForbidden(delAll,
      'serviceaccounts is forbidden: User "jane" cannot deletecollection resource "serviceaccounts" in API group "" in the namespace "default": Everything is forbidden.',
      { kind: 'serviceaccounts' });
    assert.equal((await request(server, '/api/v1/namespaces/default/serviceaccounts/by-admin')).status, 200);
  });

  it('forbids cluster-scoped requests "at the cluster scope"', async () => {
    const events = await request(server, '/apis/events.orch.io/v1/events', { credentials: jane });
    expectForbidden(events,
      'events.events.orch.io is forbidden: User "jane" cannot list resource "events" in API group "events.orch.io" at the cluster scope: Everything is forbidden.',
      { group: 'events.orch.io', kind: 'events' });
    const namespaces = await request(server, '/api/v1/namespaces', { credentials: jane });
    expectForbidden(namespaces,
      'namespaces is forbidden: User "jane" cannot list resource "namespaces" in API group "" at the cluster scope: Everything is forbidden.',
      { kind: 'namespaces' });
  });

  it('treats a namespace GET as in the namespace itself', async () => {
    const res = await request(server, '/api/v1/namespaces/default', { credentials: jane });
    expectForbidden(res,
      'namespaces "default" is forbidden: User "jane" cannot get resource "namespaces" in API group "" in the namespace "default": Everything is forbidden.',
      { name: 'default', kind: 'namespaces' });
  });

  it('forbids non-resource paths, naming the path', async () => {
    const version = await request(server, '/version', { credentials: jane });
    expectForbidden(version, 'forbidden: User "jane" cannot get path "/version": Everything is forbidden.', {});
    const api = await request(server, '/api', { credentials: jane });
    expectForbidden(api, 'forbidden: User "jane" cannot get path "/api": Everything is forbidden.', {});
    const healthz = await request(server, '/healthz', { credentials: jane });
    expectForbidden(healthz, 'forbidden: User "jane" cannot get path "/healthz": Everything is forbidden.', {});
  });

  it('treats an unauthenticated request as system:anonymous, --anonymous-auth defaulting to true without AlwaysAllow', async () => {
    const res = await request(server, '/api/v1/namespaces/default/serviceaccounts', { credentials: null });
    expectForbidden(res,
      'serviceaccounts is forbidden: User "system:anonymous" cannot list resource "serviceaccounts" in API group "" in the namespace "default": Everything is forbidden.',
      { kind: 'serviceaccounts' });
  });
});

describe('anonymous requests with --anonymous-auth=true --authorization-mode AlwaysDeny', () => {
  let server: TestServer;
  before(async () => { server = await startServer({ args: ['--anonymous-auth=true', '--authorization-mode', 'AlwaysDeny'] }); });
  after(async () => { await server?.dispose(); });

  it('authenticates an unauthenticated request as system:anonymous and forbids it (403, not 401)', async () => {
    const res = await request(server, '/api/v1/namespaces/default/serviceaccounts', { credentials: null });
    expectForbidden(res,
      'serviceaccounts is forbidden: User "system:anonymous" cannot list resource "serviceaccounts" in API group "" in the namespace "default": Everything is forbidden.',
      { kind: 'serviceaccounts' });
    const version = await request(server, '/version', { credentials: null });
    expectForbidden(version, 'forbidden: User "system:anonymous" cannot get path "/version": Everything is forbidden.', {});
  });

  it('does not treat a bad credential as anonymous: 401', async () => {
    const token = await request(server, '/api/v1/namespaces', { credentials: null, headers: { authorization: 'Bearer bogus' } });
    assert.equal(token.status, 401, token.body);
    assert.deepEqual(token.json, unauthorized);
    const mallory = foreignAdmin();
    const cert = await request(server, '/api/v1/namespaces', { credentials: { ca: server.admin.ca, ...mallory } });
    assert.equal(cert.status, 401, cert.body);
    assert.deepEqual(cert.json, unauthorized);
  });

  it('does not log the AlwaysAllow warning', () => {
    assert.ok(!server.logs.some((l) => l.includes('AnonymousAuth is not allowed with the AlwaysAllow authorizer')));
  });
});

// ---------------------------------------------------------------------------------------------

describe('health, discovery and version', () => {
  let server: TestServer;
  before(async () => { server = await startServer(); });
  after(async () => { await server?.dispose(); });

  describe('health endpoints', () => {
    it('answers 200 "ok" as text/plain on /healthz, /livez and /readyz', async () => {
      for (const path of ['/healthz', '/livez', '/readyz']) {
        const res = await request(server, path);
        assert.equal(res.status, 200, path);
        assert.equal(res.body, 'ok', path);
        assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8', path);
        assert.equal(res.headers['x-content-type-options'], 'nosniff', path);
      }
    });

    it('lists every check with ?verbose and ends with "<endpoint> check passed"', async () => {
      for (const endpoint of ['healthz', 'livez', 'readyz']) {
        const res = await request(server, `/${endpoint}?verbose`);
        assert.equal(res.status, 200);
        assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
        assert.ok(res.body.endsWith('\n'), JSON.stringify(res.body));
        const lines = res.body.slice(0, -1).split('\n');
        assert.equal(lines[0], '[+]ping ok', res.body);
        assert.equal(lines.at(-1), `${endpoint} check passed`, res.body);
        for (const line of lines.slice(0, -1)) assert.match(line, /^\[\+\][\w/.-]+ ok$/, res.body);
        for (const check of ['[+]log ok', '[+]etcd ok']) assert.ok(lines.includes(check), `${endpoint} lacks ${check}:\n${res.body}`);
        assert.ok(lines.some((l) => l.startsWith('[+]poststarthook/')), res.body);
      }
      const ready = await request(server, '/readyz?verbose');
      assert.ok(ready.body.includes('[+]shutdown ok\n'), ready.body);
    });

    it('reports an excluded check as "excluded: ok"', async () => {
      const res = await request(server, '/readyz?verbose&exclude=etcd');
      assert.equal(res.status, 200);
      const lines = res.body.trimEnd().split('\n');
      assert.ok(lines.includes('[+]etcd excluded: ok'), res.body);
      assert.ok(!lines.includes('[+]etcd ok'), res.body);
      assert.ok(lines.includes('[+]ping ok'), res.body);
      assert.equal(lines.at(-1), 'readyz check passed');
      const quiet = await request(server, '/readyz?exclude=etcd');
      assert.equal(quiet.status, 200);
      assert.equal(quiet.body, 'ok');
    });

    it('serves single checks under /livez/<check> and /readyz/<check>', async () => {
      for (const path of ['/livez/ping', '/livez/log', '/livez/etcd', '/readyz/ping', '/readyz/etcd', '/readyz/shutdown', '/healthz/ping']) {
        const res = await request(server, path);
        assert.equal(res.status, 200, `${path}: ${res.body}`);
        assert.equal(res.body, 'ok', path);
      }
      const missing = await request(server, '/livez/no-such-check');
      assert.equal(missing.status, 404, missing.body);
    });
  });

  describe('discovery', () => {
    const resourceVerbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

    it('/api lists the core version v1', async () => {
      const res = await request(server, '/api');
      assert.equal(res.status, 200, res.body);
      assert.equal(res.headers['content-type'], 'application/json');
      assert.equal(res.json.kind, 'APIVersions');
      assert.deepEqual(res.json.versions, ['v1']);
      assert.equal(res.json.serverAddressByClientCIDRs[0].clientCIDR, '0.0.0.0/0');
      assert.ok(String(res.json.serverAddressByClientCIDRs[0].serverAddress).endsWith(`:${server.port}`), res.body);
    });

    it('/api/v1 describes namespaces, serviceaccounts and secrets', async () => {
      const res = await request(server, '/api/v1');
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.kind, 'APIResourceList');
      assert.equal(res.json.groupVersion, 'v1');
      const byName = new Map<string, any>(res.json.resources.map((r: any) => [r.name, r])); // eslint-disable-line @typescript-eslint/no-explicit-any
      const ns = byName.get('namespaces');
      assert.ok(ns, res.body);
      assert.equal(ns.singularName, 'namespace');
      assert.equal(ns.namespaced, false);
      assert.equal(ns.kind, 'Namespace');
      assert.deepEqual(ns.verbs, ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']);
      assert.deepEqual(ns.shortNames, ['ns']);
      assert.equal(typeof ns.storageVersionHash, 'string');
      const sa = byName.get('serviceaccounts');
      assert.ok(sa, res.body);
      assert.equal(sa.singularName, 'serviceaccount');
      assert.equal(sa.namespaced, true);
      assert.equal(sa.kind, 'ServiceAccount');
      assert.deepEqual(sa.verbs, resourceVerbs);
      assert.deepEqual(sa.shortNames, ['sa']);
      const secrets = byName.get('secrets');
      assert.ok(secrets, res.body);
      assert.equal(secrets.singularName, 'secret');
      assert.equal(secrets.namespaced, true);
      assert.equal(secrets.kind, 'Secret');
      assert.deepEqual(secrets.verbs, resourceVerbs);
      assert.equal(secrets.shortNames, undefined);
    });

    it('/apis and /apis/events.orch.io list the events group', async () => {
      const groupVersion = { groupVersion: 'events.orch.io/v1', version: 'v1' };
      const res = await request(server, '/apis');
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.kind, 'APIGroupList');
      assert.equal(res.json.apiVersion, 'v1');
      const events = res.json.groups.find((g: { name: string }) => g.name === 'events.orch.io');
      assert.deepEqual(events, { name: 'events.orch.io', versions: [groupVersion], preferredVersion: groupVersion });

      const group = await request(server, '/apis/events.orch.io');
      assert.equal(group.status, 200, group.body);
      assert.equal(group.json.kind, 'APIGroup');
      assert.equal(group.json.apiVersion, 'v1');
      assert.equal(group.json.name, 'events.orch.io');
      assert.deepEqual(group.json.versions, [groupVersion]);
      assert.deepEqual(group.json.preferredVersion, groupVersion);
    });

    it('/apis/events.orch.io/v1 describes events; their short name ev is listed under events.k8s.io only', async () => {
      const res = await request(server, '/apis/events.orch.io/v1');
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.kind, 'APIResourceList');
      assert.equal(res.json.apiVersion, 'v1');
      assert.equal(res.json.groupVersion, 'events.orch.io/v1');
      const ev = res.json.resources.find((r: { name: string }) => r.name === 'events');
      assert.ok(ev, res.body);
      assert.equal(ev.singularName, 'event');
      assert.equal(ev.namespaced, true);
      assert.equal(ev.kind, 'Event');
      assert.deepEqual(ev.verbs, resourceVerbs);
      // kubectl would warn of every other group listing `ev`, as it does of core's and events.k8s.io's on kube-apiserver
      assert.equal(ev.shortNames, undefined);
      const k8s = (await request(server, '/apis/events.k8s.io/v1')).json.resources.find((r: { name: string }) => r.name === 'events');
      assert.deepEqual(k8s.shortNames, ['ev']);
    });

    const aggregatedV2 = 'application/json;g=apidiscovery.orch.io;v=v2;as=APIGroupDiscoveryList';
    const kubectlAccept = `${aggregatedV2},application/json;g=apidiscovery.orch.io;v=v2beta1;as=APIGroupDiscoveryList,application/json`;

    it('serves the aggregated discovery document for /apis with an ETag, and 304 on If-None-Match', async () => {
      const res = await request(server, '/apis', { headers: { accept: kubectlAccept } });
      assert.equal(res.status, 200, res.body);
      assert.equal(res.headers['content-type'], aggregatedV2);
      const etag = res.headers.etag as string;
      assert.match(etag, /^"[^"]+"$/);
      assert.match(String(res.headers.vary), /Accept/);
      assert.equal(res.json.kind, 'APIGroupDiscoveryList');
      assert.equal(res.json.apiVersion, 'apidiscovery.orch.io/v2');
      const group = res.json.items.find((i: { metadata: { name: string } }) => i.metadata.name === 'events.orch.io');
      assert.ok(group, res.body);
      assert.equal(group.versions[0].version, 'v1');
      assert.equal(group.versions[0].freshness, 'Current');
      const ev = group.versions[0].resources.find((r: { resource: string }) => r.resource === 'events');
      assert.ok(ev, res.body);
      assert.equal(ev.scope, 'Namespaced');
      assert.equal(ev.singularResource, 'event');
      assert.equal(ev.responseKind.kind, 'Event');
      assert.deepEqual(ev.verbs, resourceVerbs);
      assert.equal(ev.shortNames, undefined);
      const k8sGroup = res.json.items.find((i: { metadata: { name: string } }) => i.metadata.name === 'events.k8s.io');
      assert.deepEqual(k8sGroup.versions[0].resources.find((r: { resource: string }) => r.resource === 'events').shortNames, ['ev']);

      const again = await request(server, '/apis', { headers: { accept: kubectlAccept, 'if-none-match': etag } });
      assert.equal(again.status, 304);
      assert.equal(again.body, '');
      assert.equal(again.headers.etag, etag);

      const stale = await request(server, '/apis', { headers: { accept: kubectlAccept, 'if-none-match': '"something-else"' } });
      assert.equal(stale.status, 200);
    });

    it('serves the aggregated discovery document for /api', async () => {
      const res = await request(server, '/api', { headers: { accept: kubectlAccept } });
      assert.equal(res.status, 200, res.body);
      assert.equal(res.headers['content-type'], aggregatedV2);
      const etag = res.headers.etag as string;
      assert.match(etag, /^"[^"]+"$/);
      assert.equal(res.json.kind, 'APIGroupDiscoveryList');
      assert.equal(res.json.items.length, 1);
      const [core] = res.json.items;
      assert.ok(!core.metadata?.name, 'the core group has no name');
      assert.equal(core.versions[0].version, 'v1');
      const resources = new Map<string, any>(core.versions[0].resources.map((r: any) => [r.resource, r])); // eslint-disable-line @typescript-eslint/no-explicit-any
      assert.equal(resources.get('namespaces')?.scope, 'Cluster');
      assert.deepEqual(resources.get('namespaces')?.shortNames, ['ns']);
      assert.equal(resources.get('serviceaccounts')?.scope, 'Namespaced');
      assert.deepEqual(resources.get('serviceaccounts')?.shortNames, ['sa']);
      assert.equal(resources.get('secrets')?.scope, 'Namespaced');
      const again = await request(server, '/api', { headers: { accept: kubectlAccept, 'if-none-match': etag } });
      assert.equal(again.status, 304);
    });

    it('serves the unaggregated document to a plain JSON Accept', async () => {
      const res = await request(server, '/apis', { headers: { accept: 'application/json' } });
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-type'], 'application/json');
      assert.equal(res.json.kind, 'APIGroupList');
    });
  });

  it('/version reports major 1, minor 32', async () => {
    const res = await request(server, '/version');
    assert.equal(res.status, 200, res.body);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(res.json.major, '1');
    assert.equal(res.json.minor, '32');
    assert.match(res.json.gitVersion, /^v1\.32\.\d+/);
    assert.match(res.json.platform, /^[a-z0-9]+\/[a-z0-9]+$/);
  });
});
