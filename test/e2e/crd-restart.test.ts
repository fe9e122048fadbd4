/**
 * Custom resources across a restart and in the audit log: definitions and their objects are
 * served again as soon as the server is ready (the controller registers stored definitions before
 * readiness), and a request to a deprecated version carries the `orch.io/deprecated` annotation.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createNamespace } from '../support/api.js';
import { readJsonLines, tempDir, writePolicy } from '../support/audit.js';
import { waitEstablished, widgetCrd } from '../support/crds.js';
import { request, startServer, type TestServer } from '../support/server.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

describe('custom resources across a restart, audited', () => {
  let server: TestServer;
  let dir: string;
  let args: string[];
  before(async () => {
    dir = tempDir('orch-crd-restart-');
    args = ['--audit-policy-file', writePolicy(dir, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n'), '--audit-log-path', join(dir, 'audit.log')];
    server = await startServer({ args });
    await createNamespace(server, 'keep');
  });
  after(async () => { await server?.dispose(); });

  it('annotates requests to a deprecated version', async () => {
    assert.equal((await request(server, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { method: 'POST', body: widgetCrd() })).status, 201);
    await waitEstablished(server, 'widgets.stable.example.com');
    const res = await request(server, '/apis/stable.example.com/v1beta1/namespaces/keep/widgets', { method: 'POST', body: { apiVersion: 'stable.example.com/v1beta1', kind: 'Widget', metadata: { name: 'w' }, spec: { color: 'red' } } });
    assert.equal(res.status, 201, res.body);
    assert.equal(res.headers.warning, '299 - "stable.example.com/v1beta1 Widget is deprecated"');
    let events: any[] = [];
    for (let i = 0; i < 100 && events.length === 0; i++) {
      events = readJsonLines(join(dir, 'audit.log')).filter((e) => e.requestURI === '/apis/stable.example.com/v1beta1/namespaces/keep/widgets' && e.stage === 'ResponseComplete');
      if (events.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(events[0]?.annotations?.['orch.io/deprecated'], 'true', JSON.stringify(events[0]));
    const plain = readJsonLines(join(dir, 'audit.log')).find((e) => e.requestURI === '/apis/apiextensions.k8s.io/v1/customresourcedefinitions' && e.verb === 'create');
    assert.equal(plain?.annotations?.['orch.io/deprecated'], undefined);
    // and the gauge operators join with apiserver_request_total
    const metrics = (await request(server, '/metrics')).body;
    assert.match(metrics, /^apiserver_requested_deprecated_apis\{group="stable\.example\.com",version="v1beta1",resource="widgets",subresource="",removed_release=""\} 1$/m);
    assert.doesNotMatch(metrics, /apiserver_requested_deprecated_apis\{[^}]*version="v1",resource="widgets"/);
  });

  it('serves definitions and objects again after a restart', async () => {
    const dataDir = server.dataDir;
    await server.stop();
    server = await startServer({ dataDir, args });
    const got = await request(server, '/apis/stable.example.com/v1/namespaces/keep/widgets/w');
    assert.equal(got.status, 200, got.body);
    assert.equal(got.json.spec.color, 'red');
    assert.equal(got.json.spec.replicas, 1);
    const groups = (await request(server, '/apis')).json.groups.map((g: any) => g.name);
    assert.ok(groups.includes('stable.example.com'));
  });
});
