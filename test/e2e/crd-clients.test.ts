/**
 * Custom resources through real clients: kubectl 1.32 applies a controller-gen-shaped CRD
 * (apiextensions.k8s.io/v1, x-kubernetes-* extensions) and custom resources, gets them by short
 * name and with -o wide, explains them from OpenAPI, deletes the CRD; the client-node
 * CustomObjectsApi does CRUD and a Watch sees the changes.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CustomObjectsApi, KubeConfig, Watch } from '@kubernetes/client-node';
import { dump as toYaml } from 'js-yaml';
import { createNamespace } from '../support/api.js';
import { waitEstablished, waitStatus, widgetCrd } from '../support/crds.js';
import { kubectlFor, kubectlMissingReason, rows } from '../support/kubectl.js';
import { request, startServer, type TestServer } from '../support/server.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const missing = kubectlMissingReason();

describe('custom resources through kubectl and client-node', () => {
  let server: TestServer;
  let work: string;
  before(async () => {
    server = await startServer();
    work = mkdtempSync(join(tmpdir(), 'orch-crd-clients-'));
    await createNamespace(server, 'toys');
  });
  after(async () => {
    await server?.dispose();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('kubectl applies a CRD and custom resources, gets them by short name, wide, and explains them', { skip: missing ?? false }, async () => {
    const kubectl = kubectlFor(server, work);
    writeFileSync(join(work, 'crd.yaml'), toYaml(widgetCrd()));
    assert.match(await kubectl.ok(['apply', '-f', join(work, 'crd.yaml')]), /customresourcedefinition.apiextensions.k8s.io\/widgets.stable.example.com created/);
    await kubectl.ok(['wait', '--for', 'condition=Established', 'crd/widgets.stable.example.com', '--timeout=30s']);
    // served under two group names, the definitions have one short name and one category between them
    const byShortName = await kubectl.run(['get', 'crd']);
    assert.equal(byShortName.code, 0, byShortName.stderr);
    assert.doesNotMatch(byShortName.stderr, /could also match/);
    const byCategory = await kubectl.ok(['get', 'api-extensions', '-o', 'name']);
    assert.deepEqual(byCategory.trim().split('\n'), ['customresourcedefinition.apiextensions.k8s.io/widgets.stable.example.com']);
    writeFileSync(join(work, 'widgets.yaml'), [
      { apiVersion: 'stable.example.com/v1', kind: 'Widget', metadata: { name: 'alpha', namespace: 'toys' }, spec: { color: 'red', replicas: 2, ports: [{ name: 'http', port: 80 }] } },
      { apiVersion: 'stable.example.com/v1', kind: 'Widget', metadata: { name: 'beta', namespace: 'toys' }, spec: { color: 'blue' } },
    ].map((o) => toYaml(o)).join('---\n'));
    assert.match(await kubectl.ok(['apply', '-f', join(work, 'widgets.yaml')]), /widget.stable.example.com\/alpha created/);

    const got = rows(await kubectl.ok(['get', 'wd', '-n', 'toys']));
    assert.deepEqual(got.map((r) => r.slice(0, 2)), [['alpha', 'red'], ['beta', 'blue']]);
    const wide = await kubectl.ok(['get', 'widgets', '-n', 'toys', '-o', 'wide']);
    assert.match(wide.split('\n')[0], /^NAME\s+COLOR\s+REPLICAS\s+AGE$/);
    assert.deepEqual(rows(wide).map((r) => r.slice(0, 3)), [['alpha', 'red', '2'], ['beta', 'blue', '1']]);

    // a second apply merges by the list-map key
    writeFileSync(join(work, 'alpha.yaml'), toYaml({ apiVersion: 'stable.example.com/v1', kind: 'Widget', metadata: { name: 'alpha', namespace: 'toys' }, spec: { color: 'green', replicas: 2, ports: [{ name: 'http', port: 8080 }] } }));
    assert.match(await kubectl.ok(['apply', '--server-side', '-f', join(work, 'alpha.yaml')]), /serverside-applied/);
    const alpha = JSON.parse(await kubectl.ok(['get', 'widget', 'alpha', '-n', 'toys', '-o', 'json']));
    assert.deepEqual(alpha.spec.ports, [{ name: 'http', port: 8080 }]);
    assert.equal(alpha.spec.color, 'green');

    // a client-side apply of a changed custom resource is a JSON merge patch: kubectl sends a
    // strategic one only where the OpenAPI document lists that type for the kind, and the server
    // takes none for custom resources (415)
    writeFileSync(join(work, 'beta.yaml'), toYaml({ apiVersion: 'stable.example.com/v1', kind: 'Widget', metadata: { name: 'beta', namespace: 'toys' }, spec: { color: 'red' } }));
    assert.match(await kubectl.ok(['apply', '-f', join(work, 'beta.yaml')]), /widget.stable.example.com\/beta configured/);
    assert.equal(JSON.parse(await kubectl.ok(['get', 'widget', 'beta', '-n', 'toys', '-o', 'json'])).spec.color, 'red');
    const v3 = (await request(server, '/openapi/v3/apis/stable.example.com/v1')).json;
    assert.deepEqual(Object.keys(v3.paths['/apis/stable.example.com/v1/namespaces/{namespace}/widgets/{name}'].patch.requestBody.content).sort(),
      ['application/apply-patch+yaml', 'application/json-patch+json', 'application/merge-patch+json']);
    const unchanged = await kubectl.run(['diff', '-f', join(work, 'beta.yaml')]);
    assert.equal(unchanged.code, 0, `kubectl diff after apply: ${unchanged.stdout}${unchanged.stderr}`);

    const explained = await kubectl.ok(['explain', 'widgets.spec']);
    assert.match(explained, /GROUP:\s+stable.example.com/);
    assert.match(explained, /WidgetSpec is what a widget should be/);
    assert.match(explained, /color\s+<string> -required-/);
    assert.match(explained, /enum: red, green, blue/);

    const invalid = await kubectl.run(['patch', 'widget', 'beta', '-n', 'toys', '--type=merge', '-p', '{"spec":{"replicas":500}}']);
    assert.notEqual(invalid.code, 0);
    assert.match(invalid.stderr, /spec.replicas: Invalid value: 500: spec.replicas in body should be less than or equal to 100/);

    assert.match(await kubectl.ok(['delete', 'crd', 'widgets.stable.example.com']), /deleted/);
    await waitStatus(server, '/apis/stable.example.com/v1/namespaces/toys/widgets', 404);
    const after = await kubectl.run(['get', 'widgets.stable.example.com', '-n', 'toys']);
    assert.notEqual(after.code, 0);
  });

  it('client-node CustomObjectsApi creates, reads, patches and deletes; a Watch sees each change', async () => {
    const crd = widgetCrd('apps.example.org');
    assert.equal((await request(server, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { method: 'POST', body: crd })).status, 201);
    await waitEstablished(server, 'widgets.apps.example.org');
    const kc = new KubeConfig();
    kc.loadFromFile(server.kubeconfig);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const coords = { group: 'apps.example.org', version: 'v1', namespace: 'toys', plural: 'widgets' };

    const seen: string[] = [];
    const watch = new Watch(kc);
    let sawDelete!: () => void;
    const deleted = new Promise<void>((resolve) => { sawDelete = resolve; });
    const req = await watch.watch('/apis/apps.example.org/v1/namespaces/toys/widgets', { resourceVersion: '0' }, (type, obj: any) => {
      seen.push(`${type} ${obj.metadata.name} ${obj.spec?.color}`);
      if (type === 'DELETED') sawDelete();
    }, () => { /* ended */ });

    const created: any = await custom.createNamespacedCustomObject({ ...coords, body: { apiVersion: 'apps.example.org/v1', kind: 'Widget', metadata: { name: 'gamma' }, spec: { color: 'red' } } });
    assert.equal(created.spec.replicas, 1);
    const read: any = await custom.getNamespacedCustomObject({ ...coords, name: 'gamma' });
    assert.equal(read.metadata.uid, created.metadata.uid);
    const listed: any = await custom.listNamespacedCustomObject(coords);
    assert.deepEqual(listed.items.map((i: any) => i.metadata.name), ['gamma']);
    const patched: any = await custom.patchNamespacedCustomObject({ ...coords, name: 'gamma', body: [{ op: 'replace', path: '/spec/color', value: 'blue' }] });
    assert.equal(patched.spec.color, 'blue');
    await custom.deleteNamespacedCustomObject({ ...coords, name: 'gamma' });
    await Promise.race([deleted, new Promise((_, reject) => setTimeout(() => reject(new Error(`no DELETED event; saw ${seen.join(', ')}`)), 10_000))]);
    req.abort();
    assert.deepEqual(seen, ['ADDED gamma red', 'MODIFIED gamma blue', 'DELETED gamma blue']);
  });
});
