/**
 * What only the etcd engine does: share storage with other processes, prove its read model
 * current for consistent reads, share leases, talk TLS, and keep its watch whole across member
 * failures (or say that it could not).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import { ensurePki } from '../../src/auth/pki.js';
import { EtcdEngine } from '../../src/store/etcd-engine.js';
import type { ChangeEvent, EtcdSettings, Mutation } from '../../src/store/storage.js';
import { startEtcd, type EtcdCluster } from '../support/etcd.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let nextId = 1;
const create = (key: string, value = '{}', ttlMs?: number): Mutation => ({ id: nextId++, op: 'create', key, value, ttlMs });
let prefixes = 0;
const freshPrefix = () => `/engine-${process.pid}-${prefixes++}`;

async function until(done: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** An engine with every change it reported, as the writer worker would hold it. */
async function open(settings: Partial<EtcdSettings> & { servers: string[]; prefix: string }) {
  const engine = new EtcdEngine({ compactionIntervalMs: 0, ...settings });
  const events: ChangeEvent[] = [];
  const failures: string[] = [];
  engine.onChanges((batch) => { events.push(...batch); });
  engine.onFailure((message) => { failures.push(message); });
  const loaded = await engine.load();
  return { engine, events, failures, loaded };
}

describe('etcd engine: one member', () => {
  let etcd: EtcdCluster;
  before(async () => { etcd = await startEtcd({ progressNotifyInterval: '300ms' }); });
  after(async () => { await etcd.dispose(); });

  it("reports another process's writes in revision order, exactly once", async () => {
    const prefix = freshPrefix();
    const a = await open({ servers: [etcd.servers], prefix });
    const b = await open({ servers: [etcd.servers], prefix });
    try {
      const revisions: number[] = [];
      for (let i = 0; i < 5; i++) {
        const { results } = await a.engine.apply(Array.from({ length: 10 }, (_, j) => create(`widgets/ns/w${i}-${j}`)));
        for (const r of results) revisions.push(r.ok ? r.revision : -1);
      }
      revisions.sort((x, y) => x - y);
      await until(() => b.events.length >= revisions.length, 'every change on the other engine');
      await sleep(100); // and nothing more
      assert.deepEqual(b.events.map((e) => e.revision), revisions);
      assert.deepEqual(a.events.map((e) => e.revision), revisions, 'its own writes arrive through the watch too');
    } finally {
      await a.engine.close();
      await b.engine.close();
    }
  });

  it('a consistent read is served from the read model only when it holds every acknowledged write', async () => {
    const prefix = freshPrefix();
    const writer = await open({ servers: [etcd.servers], prefix });
    const reader = await open({ servers: [etcd.servers], prefix });
    const paths = { cache: 0, storage: 0 };
    try {
      for (let i = 0; i < 40; i++) {
        const key = `widgets/ns/c${i}`;
        // alternate creates and deletes: a deletion is as much a change as a write
        const m: Mutation = i % 4 === 3 ? { id: nextId++, op: 'delete', key: `widgets/ns/c${i - 1}` } : create(key);
        const [result] = (await writer.engine.apply([m])).results;
        assert.ok(result.ok);
        const seenBefore = reader.events.length;
        const current = await reader.engine.currentRevision('widgets/');
        assert.ok(current.revision >= result.revision);
        if (current.cacheCurrent) {
          paths.cache++;
          // the read model had the change before the answer was sent
          assert.ok(reader.events.slice(0, seenBefore).some((e) => e.revision === result.revision),
            `cache declared current without revision ${result.revision}`);
        } else {
          paths.storage++;
          const items = await reader.engine.readAt('widgets/', current.revision);
          const present = items?.some((item) => item.key === m.key);
          assert.equal(present, m.op === 'create');
        }
        if (i % 2 === 1) await until(() => reader.events.some((e) => e.revision === result.revision), 'the change');
      }
      const settled = await reader.engine.currentRevision('widgets/');
      assert.equal(settled.cacheCurrent, true, 'a read model that has every change is current');
      assert.ok(paths.cache > 0, JSON.stringify(paths));
    } finally {
      await writer.engine.close();
      await reader.engine.close();
    }
  });

  it("follows etcd's timed progress notifications past revisions written elsewhere", async () => {
    const quiet = await open({ servers: [etcd.servers], prefix: freshPrefix() });
    const busy = await open({ servers: [etcd.servers], prefix: freshPrefix() });
    const progress: number[] = [];
    quiet.engine.onChanges((events, revision) => {
      quiet.events.push(...events);
      if (events.length === 0) progress.push(revision);
    });
    try {
      const [r] = (await busy.engine.apply([create('widgets/ns/elsewhere')])).results;
      assert.ok(r.ok);
      await until(() => progress.some((p) => p >= r.revision), 'a progress notification past the other prefix\'s write', 5000);
      assert.deepEqual(quiet.events, []);
      const current = await quiet.engine.currentRevision('widgets/');
      assert.equal(current.cacheCurrent, true);
    } finally {
      await quiet.engine.close();
      await busy.engine.close();
    }
  });

  it('shares one lease among many keys with the same TTL', async () => {
    const client = new Etcd3({ hosts: etcd.servers });
    const prefix = freshPrefix();
    const a = await open({ servers: [etcd.servers], prefix });
    try {
      for (let round = 0; round < 4; round++) {
        const { results } = await a.engine.apply(Array.from({ length: 250 }, (_, i) => create(`events/ns/e${round}-${i}`, '{}', 3_600_000)));
        assert.ok(results.every((r) => r.ok));
      }
      // the leases the keys carry (counting etcd's leases would count other tests' too)
      const { kvs } = await client.getAll().prefix(prefix).exec();
      assert.equal(kvs.length, 1000);
      const leases = new Set(kvs.map((kv) => String(kv.lease)));
      assert.ok(!leases.has('0'), 'every key has a lease');
      assert.equal(leases.size, 1, `1,000 Events took ${leases.size} leases`);
    } finally {
      await a.engine.close();
      client.close();
    }
  });

  it('answers quickly and correctly after etcd restarts', async () => {
    const prefix = freshPrefix();
    const a = await open({ servers: [etcd.servers], prefix });
    try {
      const [first] = (await a.engine.apply([create('widgets/ns/before')])).results;
      assert.ok(first.ok);
      await etcd.members[0].stop();
      await assert.rejects(a.engine.ping());
      etcd.members[0].start();
      await etcd.waitHealthy();
      const [second] = (await a.engine.apply([create('widgets/ns/after')])).results;
      assert.ok(second.ok, JSON.stringify(second));
      await until(() => a.events.some((e) => e.revision === second.revision), 'the write after the restart');
      assert.deepEqual(a.events.map((e) => e.key), ['widgets/ns/before', 'widgets/ns/after']);
      await a.engine.ping();
    } finally {
      await a.engine.close();
    }
  });
});

describe('etcd engine: TLS', () => {
  let etcd: EtcdCluster;
  let dir: string;
  let settings: Pick<EtcdSettings, 'caFile' | 'certFile' | 'keyFile'>;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-etcd-tls-'));
    const pki = await ensurePki(dir);
    const f = pki.files;
    etcd = await startEtcd({ tls: { caFile: f.caCert, certFile: f.servingCert, keyFile: f.servingKey, clientCertFile: f.adminCert, clientKeyFile: f.adminKey } });
    settings = { caFile: f.caCert, certFile: f.adminCert, keyFile: f.adminKey };
  });
  after(async () => {
    await etcd.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes, watches and reads over TLS with a client certificate', async () => {
    const prefix = freshPrefix();
    const a = await open({ servers: [etcd.servers], prefix, ...settings });
    try {
      const [r] = (await a.engine.apply([create('widgets/ns/secure', '{"tls":true}')])).results;
      assert.ok(r.ok);
      await until(() => a.events.length === 1, 'the change');
      await a.engine.ping();
    } finally {
      await a.engine.close();
    }
    const again = await open({ servers: [etcd.servers], prefix, ...settings });
    await again.engine.close();
    assert.deepEqual(again.loaded.items.map((i) => i.value), ['{"tls":true}']);
  });
});

describe('etcd engine: three members', () => {
  let etcd: EtcdCluster;
  before(async () => { etcd = await startEtcd({ members: 3 }); });
  after(async () => { await etcd.dispose(); });

  it('keeps its watch whole across a member restart: no change missed or repeated', async () => {
    const prefix = freshPrefix();
    const urls = etcd.members.map((m) => m.clientUrl);
    // the watcher's watch starts on the first member listed; the writer never talks to it
    const watcher = await open({ servers: urls, prefix });
    const writer = await open({ servers: urls.slice(1), prefix });
    try {
      const acknowledged: number[] = [];
      const write = async (n: number) => {
        for (let i = 0; i < n; i++) {
          const [r] = (await writer.engine.apply([create(`widgets/ns/k${acknowledged.length}-${i}`)])).results;
          if (r.ok) acknowledged.push(r.revision);
        }
      };
      await write(20);
      await etcd.members[0].stop();
      await write(20);
      etcd.members[0].start();
      await etcd.waitHealthy();
      await write(20);
      assert.equal(acknowledged.length, 60);
      await until(() => watcher.events.length >= acknowledged.length, 'every acknowledged change');
      await sleep(100);
      assert.deepEqual(watcher.events.map((e) => e.revision), acknowledged);
      assert.deepEqual(watcher.failures, []);
    } finally {
      await watcher.engine.close();
      await writer.engine.close();
    }
  });

  it('reports a watch that cannot resume because etcd compacted what it missed', async () => {
    const prefix = freshPrefix();
    const urls = etcd.members.map((m) => m.clientUrl);
    const cut = etcd.members[2];
    const watcher = await open({ servers: [cut.clientUrl], prefix });
    const writer = await open({ servers: urls.slice(0, 2), prefix, compactionIntervalMs: 1 });
    try {
      await cut.stop();
      for (let i = 0; i < 3; i++) {
        const [r] = (await writer.engine.apply([create(`widgets/ns/gone${i}`)])).results;
        assert.ok(r.ok, JSON.stringify(r));
      }
      // two compactor rounds: the second compacts to what the first observed
      await writer.engine.maintain(Date.now() + 10);
      const { compactRevision } = await writer.engine.maintain(Date.now() + 20);
      assert.ok(compactRevision > watcher.loaded.revision);
      cut.start();
      await until(() => watcher.failures.length > 0, 'the failure report');
      assert.match(watcher.failures[0], /compacted/);
      assert.deepEqual(watcher.events, [], 'no partial history was reported');
    } finally {
      await watcher.engine.close();
      await writer.engine.close();
    }
  });

  it('fails writes as unavailable without quorum, and serves again when it returns', async () => {
    const prefix = freshPrefix();
    const a = await open({ servers: etcd.members.map((m) => m.clientUrl), prefix });
    try {
      await etcd.waitHealthy(etcd.members);
      const [down1, down2] = etcd.members.slice(1);
      await Promise.all([down1.stop(), down2.stop()]);
      await assert.rejects(a.engine.ping());
      const [lost] = (await a.engine.apply([create('widgets/ns/no-quorum')])).results;
      assert.equal(lost.ok ? 'ok' : lost.failure, 'unavailable');
      down1.start();
      down2.start();
      await etcd.waitHealthy(etcd.members);
      const [r] = (await a.engine.apply([create('widgets/ns/quorum')])).results;
      assert.ok(r.ok, JSON.stringify(r));
      await until(() => a.events.some((e) => e.key === 'widgets/ns/quorum'), 'the write after quorum returned');
      await a.engine.ping();
    } finally {
      await a.engine.close();
    }
  });
});
