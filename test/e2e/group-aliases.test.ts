/**
 * Kubernetes' group names beside the spec's: events.k8s.io serves the same Event objects as
 * events.orch.io, every response naming the group that was asked — discovery, reads, lists,
 * field selectors, writes, and watches in JSON and Protobuf — unless --kubernetes-group-aliases=false.
 */
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { request, startServer, type TestServer } from '../support/server.js';
import { sleep } from '../support/api.js';

const ns = 'default';
const orchPath = `/apis/events.orch.io/v1/namespaces/${ns}/events`;
const k8sPath = `/apis/events.k8s.io/v1/namespaces/${ns}/events`;

function event(apiVersion: string, name: string, reason: string) {
  return {
    apiVersion, kind: 'Event', metadata: { name },
    eventTime: '2024-05-01T10:00:00.123456Z', action: 'Testing', reason, note: 'alias test',
    reportingController: 'example.com/tester', reportingInstance: 'tester-1', type: 'Normal',
    regarding: { apiVersion: 'v1', kind: 'ServiceAccount', namespace: ns, name: 'default' },
  };
}

/** The first `count` newline-terminated JSON watch events of a watch. */
function watchLines(server: TestServer, path: string, count: number): Promise<Array<{ type: string; object: { apiVersion: string; metadata: { name: string } } }>> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`${server.url}${path}`, { ca: server.admin.ca, cert: server.admin.cert, key: server.admin.key, agent: false }, (res) => {
      let text = '';
      const timer = setTimeout(() => { req.destroy(); reject(new Error(`watch got: ${text}`)); }, 10_000);
      res.on('data', (c: Buffer) => {
        text += c.toString();
        const lines = text.split('\n').filter((l) => l.trim());
        if (lines.length >= count && text.endsWith('\n')) { clearTimeout(timer); req.destroy(); resolve(lines.slice(0, count).map((l) => JSON.parse(l))); }
      });
    });
    req.on('error', () => { /* destroyed on purpose */ });
    req.end();
  });
}

describe('Kubernetes group names served beside the spec\'s (default)', () => {
  let server: TestServer;
  before(async () => { server = await startServer(); });
  after(async () => { await server?.dispose(); });

  it('lists both groups in discovery, with the same resources', async () => {
    const groups = (await request(server, '/apis')).json.groups.map((g: { name: string }) => g.name);
    assert.ok(groups.includes('events.orch.io') && groups.includes('events.k8s.io'), groups.join());
    const orch = (await request(server, '/apis/events.orch.io/v1')).json;
    const k8s = (await request(server, '/apis/events.k8s.io/v1')).json;
    assert.equal(k8s.groupVersion, 'events.k8s.io/v1');
    assert.deepEqual(k8s.resources.map((r: { name: string }) => r.name), orch.resources.map((r: { name: string }) => r.name));
  });

  it('serves one object under both names, each response naming the group asked', async () => {
    const created = await request(server, k8sPath, { method: 'POST', body: event('events.k8s.io/v1', 'via-k8s', 'Aliased') });
    assert.equal(created.status, 201, created.body);
    assert.equal(created.json.apiVersion, 'events.k8s.io/v1');
    const viaOrch = await request(server, `${orchPath}/via-k8s`);
    assert.equal(viaOrch.json.apiVersion, 'events.orch.io/v1');
    assert.equal(viaOrch.json.metadata.uid, created.json.metadata.uid);
    const viaK8s = await request(server, `${k8sPath}/via-k8s`);
    assert.equal(viaK8s.json.apiVersion, 'events.k8s.io/v1');
    assert.equal(viaK8s.json.metadata.resourceVersion, viaOrch.json.metadata.resourceVersion);

    const list = await request(server, `${k8sPath}?fieldSelector=reason%3DAliased`);
    assert.equal(list.json.apiVersion, 'events.k8s.io/v1');
    assert.deepEqual(list.json.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['via-k8s']);
  });

  it('refuses a body naming the other group, as a kind in the wrong group', async () => {
    const res = await request(server, k8sPath, { method: 'POST', body: event('events.orch.io/v1', 'wrong-group', 'Aliased') });
    assert.equal(res.status, 400, res.body);
  });

  it('updates through the alias with a no-op writing nothing, and a change writing once', async () => {
    const current = (await request(server, `${k8sPath}/via-k8s`)).json;
    const same = await request(server, `${k8sPath}/via-k8s`, { method: 'PUT', body: current });
    assert.equal(same.status, 200, same.body);
    assert.equal(same.json.metadata.resourceVersion, current.metadata.resourceVersion, 'a no-op update keeps the resourceVersion');
    const changed = await request(server, `${k8sPath}/via-k8s`, { method: 'PUT', body: { ...current, metadata: { ...current.metadata, labels: { changed: 'yes' } } } });
    assert.equal(changed.status, 200, changed.body);
    assert.equal(changed.json.apiVersion, 'events.k8s.io/v1');
    assert.notEqual(changed.json.metadata.resourceVersion, current.metadata.resourceVersion);
    assert.deepEqual((await request(server, `${orchPath}/via-k8s`)).json.metadata.labels, { changed: 'yes' });
  });

  it('watches under each name with that name\'s apiVersion', async () => {
    const rv = (await request(server, orchPath)).json.metadata.resourceVersion;
    const k8s = watchLines(server, `${k8sPath}?watch=1&resourceVersion=${rv}`, 1);
    const orch = watchLines(server, `${orchPath}?watch=1&resourceVersion=${rv}`, 1);
    await sleep(200);
    assert.equal((await request(server, orchPath, { method: 'POST', body: event('events.orch.io/v1', 'via-orch', 'Watched') })).status, 201);
    const [k8sEvent] = await k8s;
    const [orchEvent] = await orch;
    assert.equal(k8sEvent.type, 'ADDED');
    assert.equal(k8sEvent.object.apiVersion, 'events.k8s.io/v1');
    assert.equal(orchEvent.object.apiVersion, 'events.orch.io/v1');
    assert.equal(k8sEvent.object.metadata.name, 'via-orch');

    // initial events through the alias are converted too
    const initial = await watchLines(server, `${k8sPath}?watch=1`, 2);
    assert.deepEqual(initial.map((e) => e.object.apiVersion), ['events.k8s.io/v1', 'events.k8s.io/v1']);
  });

  it('watches under the alias in Protobuf, the envelope naming the alias', async () => {
    const rv = (await request(server, orchPath)).json.metadata.resourceVersion;
    const frames = new Promise<Buffer>((resolve, reject) => {
      const req = httpsRequest(`${server.url}${k8sPath}?watch=1&resourceVersion=${rv}`, {
        ca: server.admin.ca, cert: server.admin.cert, key: server.admin.key, agent: false,
        headers: { accept: 'application/vnd.kubernetes.protobuf;type=watch, application/vnd.kubernetes.protobuf' },
      }, (res) => {
        let got = Buffer.alloc(0);
        const timer = setTimeout(() => { req.destroy(); reject(new Error('no protobuf frame')); }, 10_000);
        res.on('data', (c: Buffer) => {
          got = Buffer.concat([got, c]);
          if (got.includes(Buffer.from('proto-watched'))) { clearTimeout(timer); req.destroy(); resolve(got); }
        });
      });
      req.on('error', () => { /* destroyed on purpose */ });
      req.end();
    });
    await sleep(200);
    assert.equal((await request(server, orchPath, { method: 'POST', body: event('events.orch.io/v1', 'proto-watched', 'Watched') })).status, 201);
    const bytes = await frames;
    // the object's envelope: k8s\0, then TypeMeta{apiVersion (1), kind (2)} naming the alias
    const typeMeta = (apiVersion: string) => Buffer.concat([
      Buffer.from('k8s\0', 'latin1'), Buffer.from([0x0a, 2 + apiVersion.length + 2 + 5, 0x0a, apiVersion.length]), Buffer.from(apiVersion), Buffer.from([0x12, 5]), Buffer.from('Event'),
    ]);
    assert.ok(bytes.includes(typeMeta('events.k8s.io/v1')), 'the envelope names the alias group');
    assert.ok(!bytes.includes(typeMeta('events.orch.io/v1')));
  });
});

describe('--kubernetes-group-aliases=false', () => {
  let server: TestServer;
  before(async () => { server = await startServer({ args: ['--kubernetes-group-aliases=false'] }); });
  after(async () => { await server?.dispose(); });

  it('serves only the spec\'s names', async () => {
    assert.equal((await request(server, k8sPath)).status, 404);
    assert.equal((await request(server, orchPath)).status, 200);
    const groups = (await request(server, '/apis')).json.groups.map((g: { name: string }) => g.name);
    assert.ok(!groups.includes('events.k8s.io'));
  });

  it('lists short names and categories under the spec\'s names, which are then the only ones', async () => {
    const resource = async (groupVersion: string, name: string) =>
      (await request(server, `/apis/${groupVersion}`)).json.resources.find((r: { name: string }) => r.name === name);
    assert.deepEqual((await resource('events.orch.io/v1', 'events')).shortNames, ['ev']);
    const crds = await resource('apiextensions.orch.io/v1', 'customresourcedefinitions');
    assert.deepEqual([crds.shortNames, crds.categories], [['crd', 'crds'], ['api-extensions']]);
  });
});
