/**
 * The garbage collection flows every storage engine must pass, through HTTP with real
 * owner/dependent chains: background, foreground (with blocking dependents and chains),
 * orphaning, and a server restarted in the middle. Each engine's suite gives a harness that
 * starts servers on shared stored state.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createNamespace, expectStatus, type Obj } from './api.js';
import { until } from './replicas.js';
import { request, type TestServer } from './server.js';

export interface GcHarness {
  /** a server on the stored state named `state` (the same name later: the same objects) */
  start(state: string, args?: string[]): Promise<TestServer>;
  /** removes what `start` created */
  cleanup(): Promise<void>;
}

export const hold = 'example.com/hold';
export const saPath = (ns: string, name = '') => `/api/v1/namespaces/${ns}/serviceaccounts${name ? `/${name}` : ''}`;
export const secretPath = (ns: string, name = '') => `/api/v1/namespaces/${ns}/secrets${name ? `/${name}` : ''}`;

export interface RefOptions { controller?: boolean; blockOwnerDeletion?: boolean }

/** An ownerReference to `owner`, as a controller would write it. */
export function ownerRef(owner: Obj, o: RefOptions = {}): Obj {
  return { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid, ...o };
}

export async function create(server: TestServer, path: string, body: Obj): Promise<Obj> {
  const res = await request(server, path, { method: 'POST', body });
  expectStatus(res, 201, `create ${path} ${body.metadata?.name}`);
  return res.json;
}

export function sa(name: string, meta: Obj = {}): Obj {
  return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, ...meta } };
}

export function secret(name: string, meta: Obj = {}): Obj {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, ...meta }, stringData: { k: 'v' } };
}

/** The object now, or undefined once it is gone. */
export async function current(server: TestServer, path: string): Promise<Obj | undefined> {
  const res = await request(server, path);
  if (res.status === 404) return undefined;
  expectStatus(res, 200, `get ${path}`);
  return res.json;
}

export function gone(server: TestServer, path: string, timeoutMs?: number): Promise<true> {
  return until(async () => ((await current(server, path)) === undefined ? true : undefined), `${path} to be deleted`, timeoutMs);
}

/** Polls `path` until `test` holds for the object; answers it. */
export function eventually(server: TestServer, path: string, test: (o: Obj) => boolean, what: string): Promise<Obj> {
  return until(async () => {
    const o = await current(server, path);
    return o && test(o) ? o : undefined;
  }, `${path}: ${what}`);
}

/** Removes a finalizer with a PUT, retrying on conflict. */
export async function release(server: TestServer, path: string, finalizer = hold): Promise<void> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const o = await current(server, path);
    assert.ok(o, `${path} exists`);
    o.metadata.finalizers = (o.metadata.finalizers ?? []).filter((f: string) => f !== finalizer);
    const put = await request(server, path, { method: 'PUT', body: o });
    if (put.status === 409) continue;
    expectStatus(put, 200, `release ${path}`);
    return;
  }
  assert.fail(`releasing ${path} kept conflicting`);
}

export function del(server: TestServer, path: string, query = '', body?: Obj): ReturnType<typeof request> {
  return request(server, `${path}${query ? `?${query}` : ''}`, { method: 'DELETE', body });
}

const terminating = (o: Obj) => Boolean(o.metadata.deletionTimestamp);
const waitingInForeground = (o: Obj) => terminating(o) && (o.metadata.finalizers ?? []).includes('foregroundDeletion');

export function describeGarbageCollection(engine: string, harness: GcHarness): void {
  describe(`garbage collection on ${engine}`, () => {
    let server: TestServer;
    let n = 0;
    /** a fresh namespace per test, so that tests do not see each other's objects */
    const namespace = async (): Promise<string> => {
      const ns = `gc-${engine}-${n++}`;
      await createNamespace(server, ns);
      return ns;
    };

    before(async () => { server = await harness.start('main'); });
    after(async () => {
      await server?.dispose();
      await harness.cleanup();
    });

    it('background: deleting the owner deletes its dependents; one with another owner left only loses the reference', async () => {
      const ns = await namespace();
      const owner = await create(server, saPath(ns), sa('owner'));
      const other = await create(server, saPath(ns), sa('other'));
      await create(server, secretPath(ns), secret('only-owned', { ownerReferences: [ownerRef(owner, { controller: true })] }));
      await create(server, secretPath(ns), secret('co-owned', { ownerReferences: [ownerRef(owner), ownerRef(other)] }));
      await create(server, secretPath(ns), secret('unowned'));

      const res = await del(server, saPath(ns, 'owner'));
      expectStatus(res, 200, 'delete the owner');
      assert.equal(res.json.metadata.finalizers, undefined, 'background adds no finalizer');
      assert.equal(await current(server, saPath(ns, 'owner')), undefined, 'the owner itself goes at once');

      await gone(server, secretPath(ns, 'only-owned'));
      const coOwned = await eventually(server, secretPath(ns, 'co-owned'), (o) => o.metadata.ownerReferences?.length === 1, 'the dangling reference removed');
      assert.deepEqual(coOwned.metadata.ownerReferences, [ownerRef(other)]);
      assert.ok(await current(server, secretPath(ns, 'unowned')));
    });

    it('foreground: the owner waits with foregroundDeletion until its blocking dependents are gone', async () => {
      const ns = await namespace();
      const owner = await create(server, saPath(ns), sa('owner'));
      await create(server, secretPath(ns), secret('blocker', { ownerReferences: [ownerRef(owner, { blockOwnerDeletion: true })], finalizers: [hold] }));
      await create(server, secretPath(ns), secret('free', { ownerReferences: [ownerRef(owner)] }));

      const res = await del(server, saPath(ns, 'owner'), 'propagationPolicy=Foreground');
      expectStatus(res, 200, 'delete the owner in the foreground');
      assert.ok(res.json.metadata.deletionTimestamp);
      assert.deepEqual(res.json.metadata.finalizers, ['foregroundDeletion']);

      // every dependent is deleted; the blocking one stays terminating on its own finalizer
      await gone(server, secretPath(ns, 'free'));
      await eventually(server, secretPath(ns, 'blocker'), terminating, 'terminating');
      const waiting = await current(server, saPath(ns, 'owner'));
      assert.ok(waiting && waitingInForeground(waiting), `the owner still waits: ${JSON.stringify(waiting?.metadata)}`);

      await release(server, secretPath(ns, 'blocker'));
      await gone(server, secretPath(ns, 'blocker'));
      await gone(server, saPath(ns, 'owner'));
    });

    it('foreground through a chain of three: each level waits for the one below it', async () => {
      const ns = await namespace();
      const top = await create(server, saPath(ns), sa('top'));
      const middle = await create(server, saPath(ns), sa('middle', { ownerReferences: [ownerRef(top, { controller: true, blockOwnerDeletion: true })] }));
      await create(server, secretPath(ns), secret('bottom', { ownerReferences: [ownerRef(middle, { controller: true, blockOwnerDeletion: true })], finalizers: [hold] }));

      // the options in a DeleteOptions body, as client libraries send them
      const res = await del(server, saPath(ns, 'top'), '', { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Foreground' });
      expectStatus(res, 200, 'delete the top in the foreground');

      // the middle has dependents of its own, so it goes in the foreground too
      await eventually(server, saPath(ns, 'middle'), waitingInForeground, 'waiting in the foreground');
      await eventually(server, secretPath(ns, 'bottom'), terminating, 'terminating');
      assert.ok(waitingInForeground(await current(server, saPath(ns, 'top'))), 'the top waits for the middle');

      await release(server, secretPath(ns, 'bottom'));
      await gone(server, secretPath(ns, 'bottom'));
      await gone(server, saPath(ns, 'middle'));
      await gone(server, saPath(ns, 'top'));
    });

    it('orphan: dependents stay, without the reference to the deleted owner', async () => {
      const ns = await namespace();
      const owner = await create(server, saPath(ns), sa('owner'));
      const keeper = await create(server, saPath(ns), sa('keeper'));
      await create(server, secretPath(ns), secret('alone', { ownerReferences: [ownerRef(owner, { blockOwnerDeletion: true })] }));
      await create(server, secretPath(ns), secret('shared', { ownerReferences: [ownerRef(owner), ownerRef(keeper)] }));

      const res = await del(server, saPath(ns, 'owner'), 'propagationPolicy=Orphan');
      expectStatus(res, 200, 'delete the owner, orphaning');
      assert.ok(res.json.metadata.deletionTimestamp);
      assert.deepEqual(res.json.metadata.finalizers, ['orphan']);

      await gone(server, saPath(ns, 'owner'));
      const alone = await current(server, secretPath(ns, 'alone'));
      assert.ok(alone, 'an orphaned dependent stays');
      assert.equal(alone.metadata.ownerReferences, undefined);
      const shared = await current(server, secretPath(ns, 'shared'));
      assert.deepEqual(shared.metadata.ownerReferences, [ownerRef(keeper)]);
    });

    it('orphanDependents: true in DeleteOptions orphans as propagationPolicy=Orphan does', async () => {
      const ns = await namespace();
      const owner = await create(server, saPath(ns), sa('owner'));
      await create(server, secretPath(ns), secret('dependent', { ownerReferences: [ownerRef(owner)] }));
      const res = await del(server, saPath(ns, 'owner'), '', { kind: 'DeleteOptions', apiVersion: 'v1', orphanDependents: true });
      expectStatus(res, 200, 'delete with orphanDependents');
      assert.deepEqual(res.json.metadata.finalizers, ['orphan']);
      await gone(server, saPath(ns, 'owner'));
      const dependent = await current(server, secretPath(ns, 'dependent'));
      assert.ok(dependent);
      assert.equal(dependent.metadata.ownerReferences, undefined);
    });

    it('collects, after a restart with the collector on, dependents whose owner went while it was off', async () => {
      let off: TestServer | undefined = await harness.start('restart-off', ['--enable-garbage-collector=false']);
      let on: TestServer | undefined;
      try {
        const ns = 'gc-restart-off';
        await createNamespace(off, ns);
        const owner = await create(off, saPath(ns), sa('owner'));
        await create(off, secretPath(ns), secret('dependent', { ownerReferences: [ownerRef(owner, { blockOwnerDeletion: true })] }));
        // without a collector the server adds no finalizer: even a foreground delete removes the owner at once
        const res = await del(off, saPath(ns, 'owner'), 'propagationPolicy=Foreground');
        expectStatus(res, 200, 'delete the owner');
        assert.equal(res.json.metadata.finalizers, undefined);
        assert.equal(await current(off, saPath(ns, 'owner')), undefined);
        assert.ok(await current(off, secretPath(ns, 'dependent')), 'nothing collects the dependent');
        await off.dispose();
        off = undefined;

        on = await harness.start('restart-off');
        await gone(on, secretPath(ns, 'dependent'));
      } finally {
        await off?.dispose();
        await on?.dispose();
      }
    });

    it('finishes a foreground deletion begun before the server was killed', async () => {
      let first: TestServer | undefined = await harness.start('restart-kill');
      let second: TestServer | undefined;
      try {
        const ns = 'gc-restart-kill';
        await createNamespace(first, ns);
        const owner = await create(first, saPath(ns), sa('owner'));
        await create(first, secretPath(ns), secret('blocker', { ownerReferences: [ownerRef(owner, { blockOwnerDeletion: true })], finalizers: [hold] }));
        expectStatus(await del(first, saPath(ns, 'owner'), 'propagationPolicy=Foreground'), 200, 'delete in the foreground');
        await eventually(first, secretPath(ns, 'blocker'), terminating, 'terminating');
        await first.kill();
        await first.dispose();
        first = undefined;

        second = await harness.start('restart-kill');
        assert.ok(waitingInForeground(await current(second, saPath(ns, 'owner'))), 'the owner still waits after the restart');
        await release(second, secretPath(ns, 'blocker'));
        await gone(second, secretPath(ns, 'blocker'));
        await gone(second, saPath(ns, 'owner'));
      } finally {
        await first?.kill();
        await first?.dispose();
        await second?.dispose();
      }
    });
  });
}
