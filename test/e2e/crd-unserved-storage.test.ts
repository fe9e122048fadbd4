/**
 * A CRD whose storage version is not served (`served: false`), as Kubernetes allows: objects are
 * written and read in the served version and kept at rest in the storage version; the unserved
 * version answers 404 and is not discovered; what works on stored objects whatever their version
 * (namespace deletion, the CRD's cleanup) still finds them.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { createNamespace, sleep } from '../support/api.js';
import { waitEstablished, waitStatus } from '../support/crds.js';
import { watchUntil } from '../support/raw.js';
import { request, startServer, type TestServer } from '../support/server.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const group = 'unserved.example.com';
const crdName = `gizmos.${group}`;
const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

function gizmoCrd(): any {
  const schema = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' }, shape: { type: 'string', default: 'round' } } } } } };
  return {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: crdName },
    spec: {
      group, scope: 'Namespaced', names: { plural: 'gizmos', kind: 'Gizmo' },
      versions: [
        { name: 'v1', served: false, storage: true, schema },
        { name: 'v2', served: true, storage: false, schema },
      ],
    },
  };
}

/** The apiVersion of an object as the server keeps it at rest (the newest row of its key in the SQLite log). */
function apiVersionAtRest(server: TestServer, name: string): string | undefined {
  const db = new Database(join(server.dataDir, 'state.db'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT key, deleted, value FROM log ORDER BY revision DESC').all() as { key: string; deleted: number; value: string | null }[];
    const row = rows.find((r) => r.key.includes(group) && r.key.endsWith(`/${name}`));
    return row && !row.deleted && row.value ? JSON.parse(row.value).apiVersion : undefined;
  } finally {
    db.close();
  }
}

describe('a CRD whose storage version is not served', () => {
  let server: TestServer;
  const v2 = `/apis/${group}/v2/namespaces/shop/gizmos`;
  before(async () => {
    server = await startServer();
    await createNamespace(server, 'shop');
    const res = await request(server, crdPath, { method: 'POST', body: gizmoCrd() });
    assert.equal(res.status, 201, res.body);
    const crd = await waitEstablished(server, crdName);
    assert.deepEqual(crd.status.storedVersions, ['v1']);
  });
  after(async () => { await server?.dispose(); });

  it('creates, gets, lists and watches in the served version, storing the storage version', async () => {
    const watch = watchUntil(server, `${v2}?watch=1&allowWatchBookmarks=false`, 'application/json', (b) => b.toString().includes('"ADDED"'));
    await watch.opened;
    const created = await request(server, v2, { method: 'POST', body: { apiVersion: `${group}/v2`, kind: 'Gizmo', metadata: { name: 'g1' }, spec: { size: 2 } } });
    assert.equal(created.status, 201, created.body);
    assert.deepEqual([created.json.apiVersion, created.json.spec], [`${group}/v2`, { size: 2, shape: 'round' }]);
    const got = await request(server, `${v2}/g1`);
    assert.equal(got.status, 200, got.body);
    assert.equal(got.json.apiVersion, `${group}/v2`);
    const listed = await request(server, v2);
    assert.equal(listed.status, 200, listed.body);
    assert.deepEqual(listed.json.items.map((i: any) => [i.apiVersion, i.metadata.name]), [[`${group}/v2`, 'g1']]);
    const event = JSON.parse((await watch.done).toString().split('\n')[0]);
    assert.deepEqual([event.type, event.object.apiVersion, event.object.metadata.name], ['ADDED', `${group}/v2`, 'g1']);
    assert.equal(apiVersionAtRest(server, 'g1'), `${group}/v1`);
    const patched = await request(server, `${v2}/g1`, { method: 'PATCH', body: { spec: { size: 3 } }, headers: { 'content-type': 'application/merge-patch+json' } });
    assert.equal(patched.status, 200, patched.body);
    assert.equal(patched.json.spec.size, 3);
    assert.equal(apiVersionAtRest(server, 'g1'), `${group}/v1`);
  });

  it('answers 404 for the unserved version and leaves it out of discovery', async () => {
    const res = await request(server, `/apis/${group}/v1/namespaces/shop/gizmos/g1`);
    assert.equal(res.status, 404, res.body);
    assert.equal((await request(server, `/apis/${group}/v1`)).status, 404);
    const discovered = await request(server, `/apis/${group}`);
    assert.equal(discovered.status, 200, discovered.body);
    assert.deepEqual(discovered.json.versions.map((v: any) => v.version), ['v2']);
    assert.equal(discovered.json.preferredVersion.version, 'v2');
  });

  it('deletes the objects with their namespace, and with the definition', async () => {
    await createNamespace(server, 'doomed');
    const created = await request(server, `/apis/${group}/v2/namespaces/doomed/gizmos`, { method: 'POST', body: { apiVersion: `${group}/v2`, kind: 'Gizmo', metadata: { name: 'g2' }, spec: {} } });
    assert.equal(created.status, 201, created.body);
    assert.equal((await request(server, '/api/v1/namespaces/doomed', { method: 'DELETE' })).status, 200);
    await waitStatus(server, '/api/v1/namespaces/doomed', 404);
    assert.equal(apiVersionAtRest(server, 'g2'), undefined);

    assert.equal((await request(server, `${crdPath}/${crdName}`, { method: 'DELETE' })).status, 200);
    await waitStatus(server, `${crdPath}/${crdName}`, 404);
    for (let i = 0; i < 100 && apiVersionAtRest(server, 'g1') !== undefined; i++) await sleep(20);
    assert.equal(apiVersionAtRest(server, 'g1'), undefined);
  });
});
