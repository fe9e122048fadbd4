/**
 * The runtime API registry: a kind declared in this test and registered while the server runs is
 * served at once by every layer — CRUD, list, watch (JSON and Protobuf through the encoder pool),
 * server-side apply, Tables, discovery, OpenAPI, namespace deletion — and removed at runtime.
 */
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { allVerbs, builtinKind, defaultUnknownFieldLabelMessage, type KindDeclaration } from '../../src/api/kind.js';
import { typeAndMeta } from '../../src/api/meta.js';
import { ageColumn, nameColumn } from '../../src/api/printing.js';
import { s } from '../../src/api/schema/builtin-structural.js';
import { validateObjectMeta, validateObjectMetaUpdate } from '../../src/api/validation/names.js';
import { startInProcess, type InProcessServer } from '../support/in-process.js';
import { request, type TestServer } from '../support/server.js';
import { sleep } from '../support/api.js';

const widgetSpec = s.struct('WidgetSpec', { color: s.string('Color of the widget.'), size: s.int32('Size in units.') }, 'WidgetSpec is what a widget should be.', {
  proto: { color: 1, size: 2 },
});

const widgetKind: KindDeclaration = builtinKind({
  group: 'tests.orch.io', version: 'v1', kind: 'Widget', listKind: 'WidgetList',
  resource: 'widgets', singular: 'widget', shortNames: ['wd'], namespaced: true, verbs: allVerbs,
  structural: s.struct('Widget', typeAndMeta({ spec: widgetSpec }), 'Widget is a kind declared by a test.', { proto: { metadata: 1, spec: 2 } }),
  nameRule: 'dns1123Subdomain',
  table: [nameColumn, { name: 'Color', type: 'string', description: 'Color of the widget.', cell: (o) => (o.spec as { color?: string } | undefined)?.color ?? '' }, ageColumn],
  returnDeletedObject: true,
  allowCreateOnUpdate: false,
  fieldLabels: {},
  unknownFieldLabelMessage: defaultUnknownFieldLabelMessage,
  validate: (obj) => validateObjectMeta(obj.metadata, true, 'dns1123Subdomain'),
  validateUpdate: (obj, old) => [...validateObjectMeta(obj.metadata, true, 'dns1123Subdomain'), ...validateObjectMetaUpdate(obj.metadata, old.metadata)],
});

const base = '/apis/tests.orch.io/v1/namespaces/rt/widgets';
const widget = (name: string, color: string) => ({ apiVersion: 'tests.orch.io/v1', kind: 'Widget', metadata: { name }, spec: { color, size: 3 } });

/** Opens a watch and collects its raw bytes until `until` holds or the time runs out. */
function watchBytes(server: TestServer, path: string, accept: string, until: (bytes: Buffer) => boolean): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`${server.url}${path}`, { ca: server.admin.ca, cert: server.admin.cert, key: server.admin.key, headers: { accept }, agent: false }, (res) => {
      let got = Buffer.alloc(0);
      const timer = setTimeout(() => { req.destroy(); reject(new Error(`watch saw only ${got.length} bytes`)); }, 10_000);
      res.on('data', (c: Buffer) => {
        got = Buffer.concat([got, c]);
        if (until(got)) { clearTimeout(timer); req.destroy(); resolve(got); }
      });
    });
    req.on('error', () => { /* destroyed on purpose */ });
    req.end();
  });
}

describe('a kind registered at runtime', () => {
  let h: InProcessServer;
  let server: TestServer;
  before(async () => {
    h = await startInProcess();
    server = h.server;
    assert.equal((await request(server, '/api/v1/namespaces', { method: 'POST', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'rt' } } })).status, 201);
  });
  after(async () => { await h?.dispose(); });

  it('is not served before it is registered', async () => {
    assert.equal((await request(server, base)).status, 404);
    const groups = (await request(server, '/apis')).json.groups.map((g: { name: string }) => g.name);
    assert.ok(!groups.includes('tests.orch.io'));
  });

  it('is served at once once registered: discovery, OpenAPI and CRUD', async () => {
    const etagBefore = (await request(server, '/apis', { headers: { accept: 'application/json;g=apidiscovery.orch.io;v=v2;as=APIGroupDiscoveryList' } })).headers.etag;
    h.running.registry.add(widgetKind);

    const groups = (await request(server, '/apis')).json.groups.map((g: { name: string }) => g.name);
    assert.ok(groups.includes('tests.orch.io'));
    const resources = (await request(server, '/apis/tests.orch.io/v1')).json.resources;
    assert.deepEqual(resources.map((r: { name: string }) => r.name), ['widgets']);
    assert.deepEqual(resources[0].shortNames, ['wd']);
    const aggregated = await request(server, '/apis', { headers: { accept: 'application/json;g=apidiscovery.orch.io;v=v2;as=APIGroupDiscoveryList' } });
    assert.notEqual(aggregated.headers.etag, etagBefore, 'the aggregated discovery document changed');
    assert.ok(aggregated.json.items.some((g: { metadata: { name: string } }) => g.metadata.name === 'tests.orch.io'));

    const index = (await request(server, '/openapi/v3')).json;
    assert.ok(index.paths['apis/tests.orch.io/v1'], 'OpenAPI v3 lists the group-version');
    const doc = (await request(server, '/openapi/v3/apis/tests.orch.io/v1')).json;
    assert.ok(Object.keys(doc.components.schemas).some((k) => k.endsWith('.Widget')), Object.keys(doc.components.schemas).join());

    const created = await request(server, base, { method: 'POST', body: widget('one', 'red') });
    assert.equal(created.status, 201, created.body);
    assert.equal(created.json.apiVersion, 'tests.orch.io/v1');
    assert.equal((await request(server, `${base}/one`)).json.spec.color, 'red');
    const updated = await request(server, `${base}/one`, { method: 'PUT', body: { ...created.json, spec: { color: 'blue', size: 4 } } });
    assert.equal(updated.status, 200, updated.body);
    const listed = await request(server, base);
    assert.equal(listed.json.kind, 'WidgetList');
    assert.deepEqual(listed.json.items.map((i: { spec: { color: string } }) => i.spec.color), ['blue']);
  });

  it('is applied server-side and printed as a Table with its columns', async () => {
    const applied = await request(server, `${base}/two?fieldManager=test`, {
      method: 'PATCH', headers: { 'content-type': 'application/apply-patch+yaml' },
      body: 'apiVersion: tests.orch.io/v1\nkind: Widget\nmetadata:\n  name: two\nspec:\n  color: green\n',
    });
    assert.equal(applied.status, 201, applied.body);
    assert.equal(applied.json.metadata.managedFields[0].manager, 'test');
    assert.equal(applied.json.metadata.managedFields[0].operation, 'Apply');
    const table = await request(server, base, { headers: { accept: 'application/json;as=Table;g=meta.k8s.io;v=v1' } });
    assert.deepEqual(table.json.columnDefinitions.map((c: { name: string }) => c.name), ['Name', 'Color', 'Age']);
    assert.deepEqual(table.json.rows.map((r: { cells: unknown[] }) => r.cells.slice(0, 2)), [['one', 'blue'], ['two', 'green']]);
  });

  it('is watched in JSON and in Protobuf, the encoder pool learning its schema at runtime', async () => {
    const rv = (await request(server, base)).json.metadata.resourceVersion;
    const json = watchBytes(server, `${base}?watch=1&resourceVersion=${rv}`, 'application/json', (b) => b.includes('"three"'));
    const proto = watchBytes(server, `${base}?watch=1&resourceVersion=${rv}`, 'application/vnd.kubernetes.protobuf;type=watch, application/vnd.kubernetes.protobuf', (b) => b.includes('three') && b.includes('yellow'));
    await sleep(200);
    assert.equal((await request(server, base, { method: 'POST', body: widget('three', 'yellow') })).status, 201);
    const line = JSON.parse((await json).toString().trim().split('\n')[0]);
    assert.equal(line.type, 'ADDED');
    assert.equal(line.object.spec.color, 'yellow');
    const frame = await proto;
    // a length-prefixed WatchEvent whose object is a k8s\0 envelope naming the runtime kind
    assert.ok(frame.includes(Buffer.from('tests.orch.io/v1')) && frame.includes(Buffer.from('Widget')));
  });

  it('is emptied with its namespace, the namespace controller reading the registry', async () => {
    assert.equal((await request(server, '/api/v1/namespaces/rt', { method: 'DELETE' })).status, 200);
    // emptied 5 s after the deletion at the earliest, as Kubernetes' namespace controller waits
    for (let i = 0; i < 600; i++) {
      if ((await request(server, '/api/v1/namespaces/rt')).status === 404) break;
      await sleep(50);
    }
    assert.equal((await request(server, '/api/v1/namespaces/rt')).status, 404, 'the namespace went, so its widgets went first');
    assert.equal((await request(server, '/apis/tests.orch.io/v1/widgets')).json.items.length, 0);
  });

  it('is no longer served once removed', async () => {
    h.running.registry.remove(widgetKind);
    assert.equal((await request(server, '/apis/tests.orch.io/v1/widgets')).status, 404);
    assert.equal((await request(server, '/apis/tests.orch.io/v1')).status, 404);
    const groups = (await request(server, '/apis')).json.groups.map((g: { name: string }) => g.name);
    assert.ok(!groups.includes('tests.orch.io'));
    assert.equal((await request(server, '/openapi/v3')).json.paths['apis/tests.orch.io/v1'], undefined);
  });
});
