/**
 * The storage conformance suite: one set of tests run against both engines, directly (no
 * server). SQLite returns a batch's events from `apply`; etcd delivers them (and any other
 * process's) through `onChanges`; each engine's harness turns that into the same shape.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { StorageEngine } from '../../src/store/engine.js';
import { EtcdEngine } from '../../src/store/etcd-engine.js';
import { SqliteEngine } from '../../src/store/sqlite-engine.js';
import type { ChangeEvent, LoadedState, Mutation, MutationResult } from '../../src/store/storage.js';
import { startEtcd, type EtcdCluster } from '../support/etcd.js';

interface Harness {
  /** the state the engine loaded when opened */
  loaded: LoadedState;
  engine: StorageEngine;
  /** applies a batch; its results, and the changes it caused in revision order */
  apply(batch: Mutation[]): Promise<{ results: MutationResult[]; events: ChangeEvent[] }>;
  /** waits for `count` keys whose lease of `ttlMs` runs out; their DELETED events */
  expire(ttlMs: number, count: number): Promise<ChangeEvent[]>;
  /** compacts all history up to now; the new compact revision */
  compact(): Promise<number>;
  /** closes the engine and opens a new one on the same storage: a restart */
  reopen(): Promise<Harness>;
  close(): Promise<void>;
}

interface EngineKind { name: string; open(): Promise<Harness> }

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function sqliteKind(): EngineKind & { cleanup(): void } {
  const dirs: string[] = [];
  const openAt = async (dir: string): Promise<Harness> => {
    const engine = new SqliteEngine(dir);
    const loaded = await engine.load();
    return {
      loaded, engine,
      async apply(batch) { return engine.apply(batch, Date.now()); },
      async expire(ttlMs) {
        const { events } = await engine.maintain(Date.now() + ttlMs + 1, 3_600_000);
        return events;
      },
      async compact() { return (await engine.maintain(Date.now() + 1, 0)).compactRevision; },
      async reopen() { await engine.close(); return openAt(dir); },
      close: () => engine.close(),
    };
  };
  return {
    name: 'sqlite',
    open() {
      const dir = mkdtempSync(join(tmpdir(), 'orch-conformance-'));
      dirs.push(dir);
      return openAt(dir);
    },
    cleanup() { for (const d of dirs) rmSync(d, { recursive: true, force: true }); },
  };
}

function etcdKind(servers: () => string): EngineKind {
  let n = 0;
  const openAt = async (prefix: string): Promise<Harness> => {
    // compacting every call to maintain, so that two calls compact (kube-apiserver's compactor
    // compacts, each interval, to what it observed the interval before)
    const engine = new EtcdEngine({ servers: servers().split(','), prefix, compactionIntervalMs: 1 });
    const received: ChangeEvent[] = [];
    let seen = 0;
    engine.onChanges((events) => { received.push(...events); });
    const loaded = await engine.load();
    const waitFor = async (done: () => boolean, what: string, timeoutMs = 10_000) => {
      const deadline = Date.now() + timeoutMs;
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; received ${JSON.stringify(received.slice(seen))}`);
        await sleep(10);
      }
    };
    let clock = Date.now();
    return {
      loaded, engine,
      async apply(batch) {
        const { events, results } = await engine.apply(batch);
        assert.deepEqual(events, [], 'etcd reports changes through its watch only');
        const last = Math.max(0, ...results.map((r) => (r.ok ? r.revision : 0)));
        if (last === 0) return { results, events: [] };
        await waitFor(() => received.length > seen && received[received.length - 1].revision >= last, `revision ${last}`);
        const out = received.slice(seen);
        seen = received.length;
        return { results, events: out.filter((e) => e.revision <= last) };
      },
      async expire(ttlMs, count) {
        await waitFor(() => received.length - seen >= count, `${count} expiries`, ttlMs + 15_000);
        const out = received.slice(seen);
        seen = received.length;
        return out;
      },
      async compact() {
        await engine.maintain((clock += 10));
        return (await engine.maintain((clock += 10))).compactRevision;
      },
      async reopen() { await engine.close(); return openAt(prefix); },
      close: () => engine.close(),
    };
  };
  return { name: 'etcd', open: () => openAt(`/conformance-${process.pid}-${n++}`) };
}

const mutation = (m: Omit<Mutation, 'id'>): Mutation => ({ id: nextId++, ...m });
let nextId = 1;
const ok = (r: MutationResult): number => {
  assert.ok(r.ok, `expected success, got ${JSON.stringify(r)}`);
  return r.revision;
};
const failure = (r: MutationResult) => (r.ok ? 'ok' : r.failure);
const shape = (events: ChangeEvent[]) => events.map((e) => [e.type, e.key, e.value]);

let etcd: EtcdCluster | undefined;
const sqlite = sqliteKind();
const kinds: EngineKind[] = [sqlite, etcdKind(() => (etcd as EtcdCluster).servers)];

before(async () => { etcd = await startEtcd(); });
after(async () => {
  sqlite.cleanup();
  await etcd?.dispose();
});

for (const kind of kinds) {
  describe(`storage conformance: ${kind.name}`, () => {
    it('creates, updates and deletes, each change at a new revision', async () => {
      const h = await kind.open();
      try {
        const c = await h.apply([mutation({ op: 'create', key: 'widgets/ns/a', value: '{"v":1}' })]);
        const r1 = ok(c.results[0]);
        assert.ok(r1 > h.loaded.revision);
        assert.deepEqual(shape(c.events), [['ADDED', 'widgets/ns/a', '{"v":1}']]);
        assert.equal(c.events[0].revision, r1);

        const u = await h.apply([mutation({ op: 'update', key: 'widgets/ns/a', value: '{"v":2}', expectedRevision: r1 })]);
        const r2 = ok(u.results[0]);
        assert.ok(r2 > r1);
        assert.deepEqual(shape(u.events), [['MODIFIED', 'widgets/ns/a', '{"v":2}']]);
        assert.equal(u.events[0].revision, r2);

        const d = await h.apply([mutation({ op: 'delete', key: 'widgets/ns/a', expectedRevision: r2 })]);
        const r3 = ok(d.results[0]);
        assert.ok(r3 > r2);
        assert.deepEqual(shape(d.events), [['DELETED', 'widgets/ns/a', undefined]]);
        assert.equal(d.events[0].revision, r3);
      } finally {
        await h.close();
      }
    });

    it('checks preconditions: exists, notFound, conflict; a failed mutation fails alone', async () => {
      const h = await kind.open();
      try {
        const r1 = ok((await h.apply([mutation({ op: 'create', key: 'widgets/ns/a', value: '{"v":1}' })])).results[0]);
        const r2 = ok((await h.apply([mutation({ op: 'update', key: 'widgets/ns/a', value: '{"v":2}' })])).results[0]); // unconditional
        assert.ok(r2 > r1);
        const b = await h.apply([
          mutation({ op: 'create', key: 'widgets/ns/a', value: '{"v":0}' }),
          mutation({ op: 'update', key: 'widgets/ns/missing', value: '{}' }),
          mutation({ op: 'delete', key: 'widgets/ns/missing' }),
          mutation({ op: 'update', key: 'widgets/ns/missing', value: '{}', expectedRevision: r1 }),
          mutation({ op: 'create', key: 'widgets/ns/b', value: '{"v":1}' }),
        ]);
        assert.deepEqual(b.results.map(failure), ['exists', 'notFound', 'notFound', 'notFound', 'ok']);
        assert.deepEqual(shape(b.events), [['ADDED', 'widgets/ns/b', '{"v":1}']]);
        const stale = await h.apply([
          mutation({ op: 'update', key: 'widgets/ns/a', value: '{"v":3}', expectedRevision: r1 }),
          mutation({ op: 'delete', key: 'widgets/ns/b', expectedRevision: r1 }),
        ]);
        assert.deepEqual(stale.results.map(failure), ['conflict', 'conflict']);
        assert.deepEqual(stale.events, []);
      } finally {
        await h.close();
      }
    });

    it('assigns increasing revisions, and reports changes in revision order', async () => {
      const h = await kind.open();
      try {
        let floor = h.loaded.revision;
        for (let round = 0; round < 3; round++) {
          const batch = Array.from({ length: 20 }, (_, i) => mutation({ op: 'create', key: `widgets/ns/r${round}-${i}`, value: `{"i":${i}}` }));
          const { results, events } = await h.apply(batch);
          const revisions = results.map(ok);
          assert.equal(new Set(revisions).size, revisions.length, 'each change has its own revision');
          assert.ok(Math.min(...revisions) > floor, 'a later batch commits at later revisions');
          assert.deepEqual(events.map((e) => e.revision), [...revisions].sort((a, b) => a - b));
          for (const e of events) assert.equal(e.revision, revisions[batch.findIndex((m) => m.key === e.key)]);
          floor = Math.max(...revisions);
        }
      } finally {
        await h.close();
      }
    });

    it('applies several mutations of one key in one batch in order', async () => {
      const h = await kind.open();
      try {
        const key = 'widgets/ns/k';
        const b = await h.apply([
          mutation({ op: 'create', key, value: '{"v":1}' }),
          mutation({ op: 'update', key, value: '{"v":2}' }),
          mutation({ op: 'delete', key }),
          mutation({ op: 'create', key, value: '{"v":3}' }),
        ]);
        const revisions = b.results.map(ok);
        assert.deepEqual(revisions, [...revisions].sort((x, y) => x - y));
        assert.deepEqual(shape(b.events), [['ADDED', key, '{"v":1}'], ['MODIFIED', key, '{"v":2}'], ['DELETED', key, undefined], ['ADDED', key, '{"v":3}']]);
        const last = revisions[3];
        const race = await h.apply([
          mutation({ op: 'update', key, value: '{"v":4}', expectedRevision: last }),
          mutation({ op: 'update', key, value: '{"v":5}', expectedRevision: last }),
        ]);
        assert.deepEqual(race.results.map(failure), ['ok', 'conflict']);
        assert.deepEqual(shape(race.events), [['MODIFIED', key, '{"v":4}']]);
      } finally {
        await h.close();
      }
    });

    it('reads history at past revisions', async () => {
      const h = await kind.open();
      try {
        const r1 = ok((await h.apply([mutation({ op: 'create', key: 'widgets/ns/a', value: '{"v":1}' })])).results[0]);
        const r2 = ok((await h.apply([mutation({ op: 'update', key: 'widgets/ns/a', value: '{"v":2}' })])).results[0]);
        const r3 = ok((await h.apply([mutation({ op: 'create', key: 'widgets/ns/b', value: '{"v":1}' })])).results[0]);
        const r4 = ok((await h.apply([mutation({ op: 'delete', key: 'widgets/ns/a' })])).results[0]);
        await h.apply([mutation({ op: 'create', key: 'gadgets/ns/a', value: '{}' })]);
        assert.deepEqual(await h.engine.readAt('widgets/', r1), [{ key: 'widgets/ns/a', revision: r1, value: '{"v":1}' }]);
        assert.deepEqual(await h.engine.readAt('widgets/', r2), [{ key: 'widgets/ns/a', revision: r2, value: '{"v":2}' }]);
        assert.deepEqual(await h.engine.readAt('widgets/', r3), [
          { key: 'widgets/ns/a', revision: r2, value: '{"v":2}' },
          { key: 'widgets/ns/b', revision: r3, value: '{"v":1}' },
        ]);
        assert.deepEqual(await h.engine.readAt('widgets/', r4), [{ key: 'widgets/ns/b', revision: r3, value: '{"v":1}' }]);
        assert.deepEqual(await h.engine.readAt('widgets/ns/a', r2), [{ key: 'widgets/ns/a', revision: r2, value: '{"v":2}' }]);
      } finally {
        await h.close();
      }
    });

    it('compacts history: reads below the compact revision are gone, the current state stays', async () => {
      let h = await kind.open();
      try {
        const r1 = ok((await h.apply([mutation({ op: 'create', key: 'widgets/ns/a', value: '{"v":1}' })])).results[0]);
        const r2 = ok((await h.apply([mutation({ op: 'update', key: 'widgets/ns/a', value: '{"v":2}' })])).results[0]);
        const compactRevision = await h.compact();
        assert.ok(compactRevision >= r2, `compacted to ${compactRevision}, below ${r2}`);
        assert.equal(await h.engine.readAt('widgets/', r1), undefined);
        const r3 = ok((await h.apply([mutation({ op: 'create', key: 'widgets/ns/b', value: '{"v":1}' })])).results[0]);
        assert.deepEqual(await h.engine.readAt('widgets/', r3), [
          { key: 'widgets/ns/a', revision: r2, value: '{"v":2}' },
          { key: 'widgets/ns/b', revision: r3, value: '{"v":1}' },
        ]);
        h = await h.reopen();
        assert.equal(h.loaded.compactRevision, compactRevision, 'the compact revision survives a restart');
      } finally {
        await h.close();
      }
    });

    it('expires keys with a lease and reports their deletion', async () => {
      let h = await kind.open();
      try {
        const ttlMs = 1000;
        const b = await h.apply([
          mutation({ op: 'create', key: 'events/ns/e1', value: '{"n":1}', ttlMs }),
          mutation({ op: 'create', key: 'events/ns/e2', value: '{"n":2}', ttlMs }),
          mutation({ op: 'create', key: 'widgets/ns/kept', value: '{}' }),
        ]);
        b.results.map(ok);
        const expired = await h.expire(ttlMs, 2);
        assert.deepEqual(expired.map((e) => [e.type, e.key]).sort(), [['DELETED', 'events/ns/e1'], ['DELETED', 'events/ns/e2']]);
        for (const e of expired) assert.ok(e.revision > Math.max(...b.results.map(ok)));
        h = await h.reopen();
        assert.deepEqual(h.loaded.items.map((i) => i.key), ['widgets/ns/kept']);
      } finally {
        await h.close();
      }
    });

    it('reports every change after the loaded revision: load plus changes is what storage reads', async () => {
      let h = await kind.open();
      try {
        (await h.apply([
          mutation({ op: 'create', key: 'widgets/ns/a', value: '{"v":1}' }),
          mutation({ op: 'create', key: 'widgets/ns/b', value: '{"v":1}' }),
        ])).results.map(ok);
        h = await h.reopen();
        const state = new Map(h.loaded.items.map((item) => [item.key, item]));
        const { results, events } = await h.apply([
          mutation({ op: 'update', key: 'widgets/ns/a', value: '{"v":2}' }),
          mutation({ op: 'delete', key: 'widgets/ns/b' }),
          mutation({ op: 'create', key: 'gadgets/c', value: '{"v":1}' }),
        ]);
        const last = Math.max(...results.map(ok));
        for (const e of events) {
          assert.ok(e.revision > h.loaded.revision);
          if (e.type === 'DELETED') state.delete(e.key);
          else state.set(e.key, { key: e.key, revision: e.revision, value: e.value as string });
        }
        const expected = [...state.values()].sort((x, y) => (x.key < y.key ? -1 : 1));
        assert.deepEqual(await h.engine.readAt('', last), expected);
      } finally {
        await h.close();
      }
    });

    it('loads the same state after a restart', async () => {
      let h = await kind.open();
      try {
        const { results } = await h.apply([
          mutation({ op: 'create', key: 'widgets/ns/a', value: '{"v":1}' }),
          mutation({ op: 'create', key: 'widgets/ns/b', value: '{"v":1}' }),
          mutation({ op: 'create', key: 'gadgets/c', value: '{"v":1}' }),
        ]);
        const [ra, rb, rc] = results.map(ok);
        const rb2 = ok((await h.apply([mutation({ op: 'update', key: 'widgets/ns/b', value: '{"v":2}' })])).results[0]);
        ok((await h.apply([mutation({ op: 'delete', key: 'widgets/ns/a' })])).results[0]);
        h = await h.reopen();
        const { loaded } = h;
        assert.ok(loaded.revision >= Math.max(ra, rb, rc, rb2));
        assert.deepEqual(loaded.items, [
          { key: 'gadgets/c', revision: rc, value: '{"v":1}' },
          { key: 'widgets/ns/b', revision: rb2, value: '{"v":2}' },
        ]);
        // and it goes on from there
        const next = ok((await h.apply([mutation({ op: 'create', key: 'widgets/ns/a', value: '{"v":3}' })])).results[0]);
        assert.ok(next > loaded.revision);
      } finally {
        await h.close();
      }
    });
  });
}
