/**
 * Three API server processes on one etcd: what one replica acknowledges, every replica's gets,
 * lists and watches show, in one resourceVersion order; a name is created once however many
 * replicas race for it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startEtcd, type EtcdCluster } from '../support/etcd.js';
import { createSecret, FollowedWatch, startReplicas } from '../support/replicas.js';
import { request, type TestServer } from '../support/server.js';

describe('API server replicas on one etcd', () => {
  let etcd: EtcdCluster;
  let replicas: TestServer[] = [];
  const ns = 'replicas';

  before(async () => {
    etcd = await startEtcd();
    replicas = await startReplicas(etcd.servers, 3, `/replicas-${process.pid}`, ['--event-ttl', '2s']);
    const res = await request(replicas[0], '/api/v1/namespaces', { method: 'POST', body: { metadata: { name: ns } } });
    assert.equal(res.status, 201, res.body);
  });
  after(async () => {
    await Promise.all(replicas.map((r) => r.dispose()));
    await etcd?.dispose();
  });

  it('a write on any replica is seen by gets, lists and watches on every replica, in one order', async () => {
    const [a, b, c] = replicas;
    const listed = await request(b, `/api/v1/namespaces/${ns}/secrets`);
    assert.equal(listed.status, 200);
    const from = listed.json.metadata.resourceVersion as string;
    const watches = replicas.map((r) => new FollowedWatch(r, `/api/v1/namespaces/${ns}/secrets`, from));
    try {
      // each replica writes its own objects at the same time as the others
      const created = new Map<string, number>();
      const deleted = new Set<string>();
      await Promise.all(replicas.map(async (writer, w) => {
        for (let i = 0; i < 8; i++) {
          const name = `s${w}-${i}`;
          const res = await createSecret(writer, ns, name);
          assert.equal(res.status, 201, res.body);
          created.set(name, Number(res.json.metadata.resourceVersion));
          if (i % 3 === 2) {
            const gone = await request(writer, `/api/v1/namespaces/${ns}/secrets/${name}`, { method: 'DELETE' });
            assert.equal(gone.status, 200, gone.body);
            deleted.add(name);
          }
        }
      }));
      const changes = created.size + deleted.size;
      for (const watch of watches) await watch.waitFor((events) => events.length >= changes, 'every change');
      const [first] = watches;
      const rvs = first.events.map((e) => e.rv);
      assert.deepEqual(rvs, [...new Set(rvs)].sort((x, y) => x - y), 'one change per resourceVersion, in increasing order');
      assert.deepEqual(first.events.filter((e) => e.type === 'ADDED').map((e) => [e.name, e.rv]).sort(), [...created].sort());
      assert.deepEqual(first.events.filter((e) => e.type === 'DELETED').map((e) => e.name).sort(), [...deleted].sort());
      for (const watch of watches) {
        assert.deepEqual(watch.events, first.events, 'every replica watches the same changes in the same order');
        assert.deepEqual(watch.errors, []);
      }
      const alive = [...created.keys()].filter((n) => !deleted.has(n)).sort();
      for (const reader of [a, b, c]) {
        const list = await request(reader, `/api/v1/namespaces/${ns}/secrets`);
        assert.deepEqual(list.json.items.map((s: { metadata: { name: string } }) => s.metadata.name).sort(), alive);
        assert.ok(Number(list.json.metadata.resourceVersion) >= rvs[rvs.length - 1]);
        const one = await request(reader, `/api/v1/namespaces/${ns}/secrets/${alive[0]}`);
        assert.equal(one.json.metadata.resourceVersion, String(created.get(alive[0])));
      }
    } finally {
      for (const w of watches) w.close();
    }
  });

  it('Events expire through a shared etcd lease: every replica watches each deletion and lists none', async () => {
    const path = `/apis/events.orch.io/v1/namespaces/${ns}/events`;
    const listed = await request(replicas[1], path);
    const watches = replicas.map((r) => new FollowedWatch(r, path, listed.json.metadata.resourceVersion));
    try {
      const names = ['e0', 'e1', 'e2', 'e3', 'e4'];
      // created together, so they share one lease and expire at one revision
      const created = await Promise.all(names.map((name) => request(replicas[0], path, { method: 'POST', body: {
        apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: { name }, eventTime: '2024-05-01T10:00:00.123456Z',
        action: 'Testing', reason: 'Created', note: 'expires', reportingController: 'example.com/tester', reportingInstance: 'tester-1',
        type: 'Normal', regarding: { apiVersion: 'v1', kind: 'ServiceAccount', namespace: ns, name: 'default' },
      } })));
      for (const res of created) assert.equal(res.status, 201, res.body);
      for (const watch of watches) {
        await watch.waitFor((events) => events.filter((e) => e.type === 'DELETED').length === names.length, 'every expiry', 20_000);
        assert.deepEqual(watch.events.filter((e) => e.type === 'DELETED').map((e) => e.name).sort(), names);
        assert.deepEqual(watch.events, watches[0].events);
      }
      for (const r of replicas) assert.deepEqual((await request(r, path)).json.items, []);
    } finally {
      for (const w of watches) w.close();
    }
  });

  it('the same name created on two replicas at once: exactly one 201 and one 409', async () => {
    for (let i = 0; i < 10; i++) {
      const [x, y] = [replicas[i % 3], replicas[(i + 1) % 3]];
      const results = await Promise.all([createSecret(x, ns, `race-${i}`), createSecret(y, ns, `race-${i}`)]);
      assert.deepEqual(results.map((r) => r.status).sort(), [201, 409], results.map((r) => r.body).join('\n'));
      const conflict = results.find((r) => r.status === 409);
      assert.equal(conflict?.json.reason, 'AlreadyExists');
    }
  });

  it('a consistent list or get on one replica includes a write another just acknowledged', async () => {
    for (let i = 0; i < 20; i++) {
      const writer = replicas[i % 3];
      const reader = replicas[(i + 1) % 3];
      const name = `fresh-${i}`;
      const created = await createSecret(writer, ns, name);
      assert.equal(created.status, 201, created.body);
      const list = await request(reader, `/api/v1/namespaces/${ns}/secrets`);
      assert.ok(list.json.items.some((s: { metadata: { name: string } }) => s.metadata.name === name), `list on another replica lacks ${name}`);
      assert.ok(Number(list.json.metadata.resourceVersion) >= Number(created.json.metadata.resourceVersion));
      const deleted = await request(writer, `/api/v1/namespaces/${ns}/secrets/${name}`, { method: 'DELETE' });
      assert.equal(deleted.status, 200, deleted.body);
      const get = await request(reader, `/api/v1/namespaces/${ns}/secrets/${name}`);
      assert.equal(get.status, 404, `get on another replica still finds ${name}`);
    }
  });
});
