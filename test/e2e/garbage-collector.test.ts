/**
 * Deletion propagation and the garbage collector on the embedded SQLite store: the shared flows
 * (background, foreground, orphan, restarts), and what the API validates and answers about
 * owner references, propagation options and finalizers, with Kubernetes' codes and messages.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createNamespace, expectStatus } from '../support/api.js';
import {
  create, current, del, describeGarbageCollection, eventually, gone, hold, ownerRef, release, sa, saPath, secret, secretPath,
} from '../support/garbage-collection.js';
import { request, startServer, type TestServer } from '../support/server.js';

const dataDirs = new Map<string, string>();
describeGarbageCollection('sqlite', {
  start(state, args = []) {
    let dataDir = dataDirs.get(state);
    if (!dataDir) dataDirs.set(state, dataDir = mkdtempSync(join(tmpdir(), `orch-gc-${state}-`)));
    return startServer({ dataDir, args });
  },
  async cleanup() {
    for (const dir of dataDirs.values()) rmSync(dir, { recursive: true, force: true });
  },
});

describe('owner references, propagation options and finalizers', () => {
  let server: TestServer;
  const ns = 'gc-rules';
  before(async () => {
    server = await startServer();
    await createNamespace(server, ns);
  });
  after(async () => { await server?.dispose(); });

  it('requires apiVersion, kind, name and uid in each reference (422, fields named without an index)', async () => {
    const res = await request(server, secretPath(ns), { method: 'POST', body: secret('incomplete', { ownerReferences: [{ name: 'x' }] }) });
    expectStatus(res, 422, 'incomplete reference');
    assert.equal(res.json.message, 'Secret "incomplete" is invalid: [metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty, '
      + 'metadata.ownerReferences.kind: Invalid value: "": kind must not be empty, metadata.ownerReferences.uid: Invalid value: "": uid must not be empty]');
    assert.deepEqual(res.json.details.causes.map((c: { field: string }) => c.field),
      ['metadata.ownerReferences.apiVersion', 'metadata.ownerReferences.kind', 'metadata.ownerReferences.uid']);
    const badVersion = await request(server, secretPath(ns), { method: 'POST', body: secret('bad-version', { ownerReferences: [{ apiVersion: 'a/b/c', kind: 'K', name: 'n', uid: 'u' }] }) });
    expectStatus(badVersion, 422, 'unparseable apiVersion');
    assert.equal(badVersion.json.message, 'Secret "bad-version" is invalid: metadata.ownerReferences.apiVersion: Invalid value: "a/b/c": version must not be empty');
  });

  it('allows at most one controller reference', async () => {
    const refs = [
      ownerRef(await create(server, saPath(ns), sa('a')), { controller: true }),
      ownerRef(await create(server, saPath(ns), sa('b')), { controller: false }),
      ownerRef(await create(server, saPath(ns), sa('c')), { controller: true }),
    ];
    const res = await request(server, secretPath(ns), { method: 'POST', body: secret('two-controllers', { ownerReferences: refs }) });
    expectStatus(res, 422, 'two controllers');
    assert.equal(res.json.message, `Secret "two-controllers" is invalid: metadata.ownerReferences: Invalid value: ${JSON.stringify(refs)}: `
      + 'Only one reference can have Controller set to true. Found "true" in references for ServiceAccount/a and ServiceAccount/c');
    // the same on update
    const one = await create(server, secretPath(ns), secret('one-controller', { ownerReferences: [refs[0]] }));
    one.metadata.ownerReferences = refs;
    expectStatus(await request(server, secretPath(ns, 'one-controller'), { method: 'PUT', body: one }), 422, 'a second controller by update');
  });

  it('refuses the core Event as an owner', async () => {
    const ref = { apiVersion: 'v1', kind: 'Event', name: 'e', uid: 'u' };
    const res = await request(server, saPath(ns), { method: 'POST', body: sa('event-owned', { ownerReferences: [ref] }) });
    expectStatus(res, 422, 'an Event owner');
    assert.equal(res.json.message, `ServiceAccount "event-owned" is invalid: metadata.ownerReferences: Invalid value: ${JSON.stringify(ref)}: /v1, Kind=Event is disallowed from being an owner`);
  });

  it('refuses orphan and foregroundDeletion together', async () => {
    const res = await request(server, saPath(ns), { method: 'POST', body: sa('both', { finalizers: ['orphan', 'foregroundDeletion'] }) });
    expectStatus(res, 422, 'both propagation finalizers');
    assert.equal(res.json.message, 'ServiceAccount "both" is invalid: metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion"}: finalizer orphan and foregroundDeletion cannot be both set');
  });

  it('validates DeleteOptions: orphanDependents with propagationPolicy, unknown policies', async () => {
    await create(server, saPath(ns), sa('kept'));
    const both = await del(server, saPath(ns, 'kept'), 'orphanDependents=true&propagationPolicy=Foreground');
    expectStatus(both, 422, 'both options');
    assert.equal(both.json.message, 'DeleteOptions.meta.orch.io "" is invalid: propagationPolicy: Invalid value: "Foreground": orphanDependents and deletionPropagation cannot be both set');
    const bodyBoth = await del(server, saPath(ns, 'kept'), '', { orphanDependents: false, propagationPolicy: 'Orphan' });
    expectStatus(bodyBoth, 422, 'both options in the body');
    const unknown = await del(server, saPath(ns, 'kept'), 'propagationPolicy=Sideways');
    expectStatus(unknown, 422, 'an unknown policy');
    assert.equal(unknown.json.message, 'DeleteOptions.meta.orch.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"');
    assert.ok(await current(server, saPath(ns, 'kept')), 'nothing was deleted');
  });

  it('answers 202 when orphanDependents=false leaves the object terminating, 200 otherwise', async () => {
    await create(server, secretPath(ns), secret('held-202', { finalizers: [hold] }));
    const accepted = await del(server, secretPath(ns, 'held-202'), 'orphanDependents=false');
    expectStatus(accepted, 202, 'cascading delete of a held object');
    assert.deepEqual(accepted.json.metadata.finalizers, [hold], 'orphanDependents=false is background for a Secret: no GC finalizer');
    await release(server, secretPath(ns, 'held-202'));
    await create(server, secretPath(ns), secret('free-200'));
    expectStatus(await del(server, secretPath(ns, 'free-200'), 'orphanDependents=false'), 200, 'deleted at once');
  });

  it('a DELETE of a terminating object may change its propagation; with nothing to change it writes nothing', async () => {
    await create(server, secretPath(ns), secret('again', { finalizers: [hold] }));
    const first = await del(server, secretPath(ns, 'again'));
    expectStatus(first, 200, 'first delete');
    assert.equal(first.json.kind, 'Secret', 'a Secret that stays answers itself, not a Status');
    const orphaning = await del(server, secretPath(ns, 'again'), 'propagationPolicy=Orphan');
    expectStatus(orphaning, 200, 'second delete, orphaning');
    assert.deepEqual(orphaning.json.metadata.finalizers, [hold, 'orphan']);
    assert.equal(orphaning.json.metadata.deletionTimestamp, first.json.metadata.deletionTimestamp, 'the deletion keeps its first timestamp');
    // no dependents to orphan: the collector just removes its finalizer
    const settled = await eventually(server, secretPath(ns, 'again'), (o) => o.metadata.finalizers.length === 1, 'orphan finalizer removed');
    const third = await del(server, secretPath(ns, 'again'));
    expectStatus(third, 200, 'third delete');
    assert.equal(third.json.kind, 'Secret');
    assert.equal(third.json.metadata.resourceVersion, settled.metadata.resourceVersion, 'nothing written');
    await release(server, secretPath(ns, 'again'));
    await gone(server, secretPath(ns, 'again'));
  });

  it('namespaced dependents may have a cluster-scoped owner; a namespaced owner in another namespace counts as absent', async () => {
    const ownerNs = 'gc-owner-namespace';
    await createNamespace(server, ownerNs);
    const namespaceOwner = await current(server, `/api/v1/namespaces/${ownerNs}`);
    const elsewhere = await create(server, saPath(ownerNs), sa('elsewhere'));
    await create(server, secretPath(ns), secret('namespace-owned', { ownerReferences: [ownerRef(namespaceOwner)] }));
    // Kubernetes looks the owner up in the dependent's namespace, where there is no such object
    await create(server, secretPath(ns), secret('cross-namespace', { ownerReferences: [ownerRef(elsewhere)] }));
    await gone(server, secretPath(ns, 'cross-namespace'));
    assert.ok(await current(server, saPath(ownerNs, 'elsewhere')), 'the object in the other namespace is untouched');
    assert.ok(await current(server, secretPath(ns, 'namespace-owned')), 'its cluster-scoped owner exists');

    expectStatus(await del(server, `/api/v1/namespaces/${ownerNs}`), 200, 'delete the owning namespace');
    await gone(server, `/api/v1/namespaces/${ownerNs}`);
    await gone(server, secretPath(ns, 'namespace-owned'));
  });

  it('a namespace deleted with propagationPolicy=Orphan orphans its dependents elsewhere', async () => {
    const ownerNs = 'gc-orphaning-namespace';
    await createNamespace(server, ownerNs);
    const namespaceOwner = await current(server, `/api/v1/namespaces/${ownerNs}`);
    await create(server, secretPath(ns), secret('outlives-namespace', { ownerReferences: [ownerRef(namespaceOwner)] }));
    const res = await del(server, `/api/v1/namespaces/${ownerNs}`, 'propagationPolicy=Orphan');
    expectStatus(res, 200, 'delete the namespace, orphaning');
    assert.deepEqual(res.json.metadata.finalizers, ['orphan']);
    assert.equal(res.json.status.phase, 'Terminating');
    await gone(server, `/api/v1/namespaces/${ownerNs}`);
    const orphan = await current(server, secretPath(ns, 'outlives-namespace'));
    assert.ok(orphan);
    assert.equal(orphan.metadata.ownerReferences, undefined);
  });

  it('leaves alone dependents whose owner kind is not served, and cluster-scoped objects with a namespaced owner', async () => {
    // a reference to a kind this server does not serve cannot be decided: the dependent stays
    await create(server, secretPath(ns), secret('unknown-kind-owner', { ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', uid: 'w1' }] }));
    const clusterScoped = await create(server, '/api/v1/namespaces', {
      apiVersion: 'v1', kind: 'Namespace',
      metadata: { name: 'gc-namespaced-owner', ownerReferences: [{ apiVersion: 'v1', kind: 'ServiceAccount', name: 'gone', uid: 'gone-uid' }] },
    });
    // a later dependent with an absent owner is collected: the ones above were decided by then
    await create(server, secretPath(ns), secret('sync-point', { ownerReferences: [{ apiVersion: 'v1', kind: 'ServiceAccount', name: 'gone', uid: 'gone-uid' }] }));
    await gone(server, secretPath(ns, 'sync-point'));
    assert.ok(await current(server, secretPath(ns, 'unknown-kind-owner')));
    assert.ok(await current(server, `/api/v1/namespaces/${clusterScoped.metadata.name}`));
  });
});
