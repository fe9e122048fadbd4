/** Server-side printing: Tables on get, list (paged) and watch, under both meta group names. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { request as httpsRequest } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { request, startServer, type TestServer } from '../support/server.js';

const asTable = (group: string) => `application/json;as=Table;v=v1;g=${group}`;

describe('Table output', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await request(server, '/api/v1/namespaces', { method: 'POST', body: { metadata: { name: 'tables' } } });
    for (let i = 0; i < 5; i++) {
      await request(server, '/api/v1/namespaces/tables/serviceaccounts', { method: 'POST', body: { metadata: { name: `sa-${i}` }, secrets: Array.from({ length: i }, (_, j) => ({ name: `s${j}` })) } });
    }
    await request(server, '/api/v1/namespaces/tables/secrets', { method: 'POST', body: { metadata: { name: 'creds' }, type: 'orch.io/basic-auth', stringData: { username: 'u', password: 'p' } } });
  });
  after(async () => { await server.dispose(); });

  for (const group of ['meta.orch.io', 'meta.k8s.io']) {
    it(`lists as a Table in ${group}`, async () => {
      const r = await request(server, '/api/v1/namespaces/tables/serviceaccounts', { headers: { accept: asTable(group) } });
      assert.equal(r.status, 200);
      // the serializer's type, as kube-apiserver names it: the conversion is not repeated
      assert.equal(r.headers['content-type'], 'application/json');
      assert.equal(r.json.kind, 'Table');
      assert.equal(r.json.apiVersion, `${group}/v1`);
      assert.deepEqual(r.json.columnDefinitions.map((c: { name: string }) => c.name), ['Name', 'Secrets', 'Age']);
      const byName = Object.fromEntries(r.json.rows.map((row: { cells: unknown[] }) => [row.cells[0], row.cells[1]]));
      assert.equal(byName['sa-3'], 3);
      assert.equal(byName.default, 0);
      assert.equal(r.json.rows[0].object.kind, 'PartialObjectMetadata');
      assert.ok(r.json.metadata.resourceVersion);
    });
  }

  it('prints a single object, secrets and namespaces with their own columns', async () => {
    const one = await request(server, '/api/v1/namespaces/tables/secrets/creds', { headers: { accept: asTable('meta.k8s.io') } });
    assert.deepEqual(one.json.columnDefinitions.map((c: { name: string }) => c.name), ['Name', 'Type', 'Data', 'Age']);
    assert.deepEqual(one.json.rows[0].cells.slice(0, 3), ['creds', 'orch.io/basic-auth', 2]);
    const ns = await request(server, '/api/v1/namespaces/tables', { headers: { accept: asTable('meta.k8s.io') } });
    assert.deepEqual(ns.json.rows[0].cells.slice(0, 2), ['tables', 'Active']);
  });

  it('pages a Table with limit and continue, and honours includeObject', async () => {
    const first = await request(server, '/api/v1/namespaces/tables/serviceaccounts?limit=4&includeObject=Object', { headers: { accept: asTable('meta.orch.io') } });
    assert.equal(first.json.rows.length, 4);
    assert.equal(first.json.rows[0].object.kind, 'ServiceAccount');
    assert.ok(first.json.metadata.continue);
    assert.equal(first.json.metadata.remainingItemCount, 2);
    const rest = await request(server, `/api/v1/namespaces/tables/serviceaccounts?limit=4&includeObject=None&continue=${first.json.metadata.continue}`, { headers: { accept: asTable('meta.orch.io') } });
    assert.equal(rest.json.rows.length, 2);
    assert.equal('object' in rest.json.rows[0], false);
    const bad = await request(server, '/api/v1/namespaces/tables/serviceaccounts?includeObject=All', { headers: { accept: asTable('meta.orch.io') } });
    assert.equal(bad.status, 400);
  });

  it('answers a Table in YAML, and falls back to JSON when a client also accepts it', async () => {
    const y = await request(server, '/api/v1/namespaces/tables/serviceaccounts/sa-1', { headers: { accept: 'application/yaml;as=Table;v=v1;g=meta.orch.io' } });
    assert.match(y.body, /^apiVersion: meta.orch.io\/v1\ncolumnDefinitions:/);
    const fallback = await request(server, '/api/v1/namespaces/tables/serviceaccounts/sa-1', { headers: { accept: 'application/json;as=Table;v=v9;g=meta.orch.io,application/json' } });
    assert.equal(fallback.json.kind, 'ServiceAccount');
    const none = await request(server, '/api/v1/namespaces/tables/serviceaccounts/sa-1', { headers: { accept: 'application/json;as=Table;v=v9;g=meta.orch.io' } });
    assert.equal(none.status, 406);
  });

  it('watches as Tables: each event object a Table of one row', async () => {
    const lines: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const req = httpsRequest(`${server.url}/api/v1/namespaces/tables/serviceaccounts?watch=1&timeoutSeconds=1`, {
        ca: server.admin.ca, cert: server.admin.cert, key: server.admin.key, headers: { accept: asTable('meta.k8s.io') },
      }, (res) => {
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => { buf += c; });
        res.on('end', () => { lines.push(...buf.trim().split('\n')); resolve(); });
      });
      req.on('error', reject);
      req.end();
    });
    const events = lines.map((l) => JSON.parse(l));
    assert.equal(events.length, 6);
    for (const e of events) {
      assert.equal(e.type, 'ADDED');
      assert.equal(e.object.kind, 'Table');
      assert.equal(e.object.rows.length, 1);
    }
  });

  it('makes kubectl print Kubernetes\' columns', (t) => {
    const probe = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
    if (probe.error) {
      if (process.env.CI) assert.fail('kubectl is required in CI');
      t.skip('kubectl is not installed');
      return;
    }
    const run = (...args: string[]) => spawnSync('kubectl', ['--kubeconfig', server.kubeconfig, ...args], { encoding: 'utf8' }).stdout;
    assert.match(run('get', 'sa', '-n', 'tables'), /^NAME\s+SECRETS\s+AGE\n/);
    assert.match(run('get', 'ns'), /^NAME\s+STATUS\s+AGE\n/);
    assert.match(run('get', 'secrets', '-n', 'tables'), /^NAME\s+TYPE\s+DATA\s+AGE\ncreds\s+orch.io\/basic-auth\s+2\s+/);
  });
});
