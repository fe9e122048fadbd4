/**
 * CustomResourceDefinitions over HTTP: the definition (apiextensions.k8s.io/v1 and
 * apiextensions.orch.io/v1) validated with Kubernetes' messages, its status, and the custom
 * resources it serves at once: CRUD, pruning, defaulting, schema validation (422 with causes),
 * fieldValidation, Protobuf refused, strategic merge refused, the status subresource and
 * generation, Tables from printer columns, selectable fields, a deprecated version, a second
 * version converted with strategy None, discovery and OpenAPI, and deletion with cleanup.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createNamespace } from '../support/api.js';
import { waitEstablished, waitStatus, widgetCrd } from '../support/crds.js';
import { startInProcess, type InProcessServer } from '../support/in-process.js';
import { watchUntil } from '../support/raw.js';
import { request, type TestServer } from '../support/server.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const base = '/apis/stable.example.com/v1/namespaces/crd/widgets';
const widget = (name: string, spec: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  ({ apiVersion: 'stable.example.com/v1', kind: 'Widget', metadata: { name }, spec, ...extra });

describe('CustomResourceDefinitions', () => {
  let h: InProcessServer;
  let server: TestServer;
  before(async () => {
    h = await startInProcess();
    server = h.server;
    await createNamespace(server, 'crd');
  });
  after(async () => { await h?.dispose(); });

  it('refuses invalid definitions with Kubernetes\' causes', async () => {
    const bad = widgetCrd();
    bad.metadata.name = 'wrong.stable.example.com';
    bad.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.color = { description: 'no type' };
    bad.spec.versions[1].storage = true;
    delete bad.spec.versions[1].schema;
    bad.spec.scope = 'Galaxy';
    const res = await request(server, crdPath, { method: 'POST', body: bad });
    assert.equal(res.status, 422, res.body);
    assert.equal(res.json.reason, 'Invalid');
    const causes = res.json.details.causes.map((c: any) => `${c.field}: ${c.message}`);
    for (const expected of [
      'metadata.name: Invalid value: "wrong.stable.example.com": must be spec.names.plural+"."+spec.group',
      'spec.scope: Unsupported value: "Galaxy": supported values: "Cluster", "Namespaced"',
      'spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[color].type: Required value: must not be empty for specified object fields',
      'spec.versions[1].schema.openAPIV3Schema: Required value: schemas are required',
    ]) assert.ok(causes.includes(expected), `${expected}\nin\n${causes.join('\n')}`);
    assert.ok(causes.some((c: string) => c.startsWith('spec.versions: Invalid value') && c.endsWith('must have exactly one version marked as storage version')), causes.join('\n'));
    assert.match(res.json.message, /^CustomResourceDefinition.apiextensions.k8s.io "wrong.stable.example.com" is invalid: /);

    const badDefault = widgetCrd();
    badDefault.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.replicas.default = 'many';
    const res2 = await request(server, crdPath, { method: 'POST', body: badDefault });
    assert.equal(res2.status, 422, res2.body);
    // both versions share the schema object, so both report it
    assert.deepEqual(res2.json.details.causes.map((c: any) => `${c.field}: ${c.message}`), [0, 1].map((i) =>
      `spec.versions[${i}].schema.openAPIV3Schema.properties[spec].properties[replicas].default: Invalid value: "string": default in body must be of type integer: "string"`));
  });

  it('creates a definition under apiextensions.k8s.io/v1 and reports its names and stored versions', async () => {
    const res = await request(server, crdPath, { method: 'POST', body: widgetCrd() });
    assert.equal(res.status, 201, res.body);
    assert.equal(res.json.apiVersion, 'apiextensions.k8s.io/v1');
    assert.equal(res.json.spec.names.listKind, 'WidgetList', 'listKind defaulted');
    assert.deepEqual(res.json.status.storedVersions, ['v1']);
    const crd = await waitEstablished(server, 'widgets.stable.example.com');
    const conditions = Object.fromEntries(crd.status.conditions.map((c: any) => [c.type, c]));
    assert.equal(conditions.NamesAccepted.status, 'True');
    assert.equal(conditions.NamesAccepted.reason, 'NoConflicts');
    assert.equal(conditions.Established.reason, 'InitialNamesAccepted');
    assert.deepEqual(crd.status.acceptedNames, { plural: 'widgets', singular: 'widget', shortNames: ['wd'], kind: 'Widget', listKind: 'WidgetList', categories: ['all', 'toys'] });
    const orch = await request(server, '/apis/apiextensions.orch.io/v1/customresourcedefinitions/widgets.stable.example.com');
    assert.equal(orch.json.apiVersion, 'apiextensions.orch.io/v1');
  });

  it('reports a name conflict within the group', async () => {
    const other = widgetCrd();
    other.metadata.name = 'gadgets.stable.example.com';
    other.spec.names = { plural: 'gadgets', kind: 'Gadget', shortNames: ['wd'] };
    assert.equal((await request(server, crdPath, { method: 'POST', body: other })).status, 201);
    let crd: any;
    for (let i = 0; i < 100; i++) {
      crd = (await request(server, `${crdPath}/gadgets.stable.example.com`)).json;
      if (crd.status?.conditions?.length) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    const accepted = crd.status.conditions.find((c: any) => c.type === 'NamesAccepted');
    assert.deepEqual([accepted.status, accepted.reason, accepted.message], ['False', 'ShortNamesConflict', '"wd" is already in use']);
    assert.equal(crd.status.conditions.find((c: any) => c.type === 'Established').status, 'False');
    assert.equal((await request(server, '/apis/stable.example.com/v1/gadgets')).status, 404);
    assert.equal((await request(server, `${crdPath}/gadgets.stable.example.com`, { method: 'DELETE' })).status, 200);
  });

  it('is discovered with short names, categories and singular name, the GA version preferred', async () => {
    const group = (await request(server, '/apis/stable.example.com')).json;
    assert.deepEqual(group.versions.map((v: any) => v.version), ['v1', 'v1beta1']);
    assert.equal(group.preferredVersion.version, 'v1');
    const resources = (await request(server, '/apis/stable.example.com/v1')).json.resources;
    const widgets = resources.find((r: any) => r.name === 'widgets');
    assert.deepEqual([widgets.kind, widgets.singularName, widgets.shortNames, widgets.categories, widgets.namespaced], ['Widget', 'widget', ['wd'], ['all', 'toys'], true]);
    assert.ok(resources.some((r: any) => r.name === 'widgets/status'));
  });

  it('creates custom resources: pruned, defaulted, unknown fields warned', async () => {
    const res = await request(server, base, { method: 'POST', body: widget('one', { color: 'red', bogus: 1, extra: { anything: { goes: true } } }) });
    assert.equal(res.status, 201, res.body);
    assert.equal(res.json.spec.replicas, 1, 'defaulted');
    assert.equal(res.json.spec.bogus, undefined, 'pruned');
    assert.deepEqual(res.json.spec.extra, { anything: { goes: true } }, 'preserved');
    // an unstructured object: the create added spec itself (its own member, `.`), not only its fields
    const ownedSpec = res.json.metadata.managedFields[0].fieldsV1['f:spec'];
    assert.deepEqual([ownedSpec['.'], ownedSpec['f:color'], ownedSpec['f:replicas']], [{}, {}, {}]);
    assert.equal(res.json.metadata.generation, 1);
    assert.equal(res.headers.warning, '299 - "unknown field \\"spec.bogus\\""');
    const strict = await request(server, `${base}?fieldValidation=Strict`, { method: 'POST', body: widget('two', { color: 'red', bogus: 1 }) });
    assert.equal(strict.status, 400, strict.body);
    assert.equal(strict.json.message, 'Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.bogus"');
    const got = await request(server, `${base}/one`);
    assert.equal(got.json.kind, 'Widget');
    // items of unstructured lists keep their kind and apiVersion, as Kubernetes' do
    const listed = await request(server, base);
    assert.deepEqual([listed.json.kind, listed.json.items[0].kind, listed.json.items[0].apiVersion], ['WidgetList', 'Widget', 'stable.example.com/v1']);
  });

  it('refuses objects that violate the schema with 422 and causes', async () => {
    const res = await request(server, base, { method: 'POST', body: widget('bad', { color: 'pink', replicas: 200, size: true }) });
    assert.equal(res.status, 422, res.body);
    assert.deepEqual(res.json.details.causes.map((c: any) => `${c.field}: ${c.message}`).sort(), [
      'spec.color: Unsupported value: "pink": supported values: "red", "green", "blue"',
      'spec.replicas: Invalid value: 200: spec.replicas in body should be less than or equal to 100',
      'spec.size: Invalid value: "boolean": spec.size in body must be of type integer,string: "boolean"',
    ]);
    assert.match(res.json.message, /^Widget.stable.example.com "bad" is invalid: /);
    const missing = await request(server, base, { method: 'POST', body: widget('bad', {}) });
    assert.equal(missing.status, 422);
    assert.equal(missing.json.details.causes[0].field, 'spec.color');
    assert.equal(missing.json.details.causes[0].reason, 'FieldValueRequired');
  });

  it('refuses Protobuf as Kubernetes does, and strategic merge patches', async () => {
    const accept = await request(server, `${base}/one`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    assert.equal(accept.status, 406, accept.body);
    const fallback = await request(server, `${base}/one`, { headers: { accept: 'application/vnd.kubernetes.protobuf, application/json' } });
    assert.equal(fallback.status, 200);
    assert.equal(fallback.headers['content-type'], 'application/json');
    const body = await request(server, base, { method: 'POST', body: Buffer.from([0x6b, 0x38, 0x73, 0]), headers: { 'content-type': 'application/vnd.kubernetes.protobuf' } });
    assert.equal(body.status, 415, body.body);
    const smp = await request(server, `${base}/one`, { method: 'PATCH', body: { spec: { color: 'blue' } }, headers: { 'content-type': 'application/strategic-merge-patch+json' } });
    assert.equal(smp.status, 415, smp.body);
    const merge = await request(server, `${base}/one`, { method: 'PATCH', body: { spec: { color: 'blue' } }, headers: { 'content-type': 'application/merge-patch+json' } });
    assert.equal(merge.status, 200, merge.body);
    assert.equal(merge.json.spec.color, 'blue');
    assert.equal(merge.json.metadata.generation, 2, 'a spec change moves the generation');
  });

  it('serves the status subresource: status ignored on the main resource, generation on spec changes only', async () => {
    const current = (await request(server, `${base}/one`)).json;
    const withStatus = await request(server, `${base}/one`, { method: 'PUT', body: { ...current, status: { ready: true } } });
    assert.equal(withStatus.status, 200);
    assert.equal(withStatus.json.status, undefined, 'status is the status subresource\'s');
    assert.equal(withStatus.json.metadata.generation, 2);
    const status = await request(server, `${base}/one/status`, { method: 'PUT', body: { ...current, spec: { color: 'green' }, status: { ready: true, replicas: 1 } } });
    assert.equal(status.status, 200, status.body);
    assert.deepEqual(status.json.status, { ready: true, replicas: 1 });
    assert.equal(status.json.spec.color, 'blue', 'spec is the main resource\'s');
    assert.equal(status.json.metadata.generation, 2, 'a status change does not move the generation');
    const patched = await request(server, `${base}/one/status`, { method: 'PATCH', body: { status: { replicas: 2 } }, headers: { 'content-type': 'application/merge-patch+json' } });
    assert.equal(patched.json.status.replicas, 2);
  });

  it('applies to the status subresource: status only, owned by an entry that names the subresource', async () => {
    const applyStatus = (name: string, manager: string, body: Record<string, unknown>) => request(server, `${base}/${name}/status?fieldManager=${manager}`, {
      method: 'PATCH', headers: { 'content-type': 'application/apply-patch+yaml' },
      body: { apiVersion: 'stable.example.com/v1', kind: 'Widget', metadata: { name }, ...body },
    });
    const created = await request(server, base, { method: 'POST', body: widget('applied-status', { color: 'red' }) });
    assert.equal(created.status, 201, created.body);
    const applied = await applyStatus('applied-status', 'status-controller', { spec: { color: 'blue' }, status: { ready: true, replicas: 3 } });
    assert.equal(applied.status, 200, applied.body);
    assert.deepEqual(applied.json.status, { ready: true, replicas: 3 });
    assert.equal(applied.json.spec.color, 'red', 'spec is the main resource\'s');
    const entry = applied.json.metadata.managedFields.find((e: any) => e.manager === 'status-controller');
    assert.deepEqual([entry.operation, entry.subresource, entry.fieldsV1], ['Apply', 'status', { 'f:status': { 'f:ready': {}, 'f:replicas': {} } }]);
    // another manager's apply of an owned status field conflicts, naming the subresource
    const conflict = await applyStatus('applied-status', 'other', { status: { replicas: 4 } });
    assert.equal(conflict.status, 409, conflict.body);
    assert.match(conflict.json.message, /conflict with "status-controller" with subresource "status": \.status\.replicas/);
    // a patch through the subresource records it too
    const patched = await request(server, `${base}/applied-status/status?fieldManager=patcher`, { method: 'PATCH', body: { status: { ready: false } }, headers: { 'content-type': 'application/merge-patch+json' } });
    assert.deepEqual(patched.json.metadata.managedFields.find((e: any) => e.manager === 'patcher').subresource, 'status');
    assert.equal((await applyStatus('no-such-widget', 'status-controller', { status: { ready: true } })).status, 404);
    assert.equal((await request(server, `${base}/applied-status`, { method: 'DELETE' })).status, 200);
  });

  it('serves the scale subresource as autoscaling/v1 Scale: get, update, patch', async () => {
    await request(server, `${base}/one/status`, { method: 'PATCH', body: { status: { replicas: 1, selector: 'app=one' } }, headers: { 'content-type': 'application/merge-patch+json' } });
    const scale = await request(server, `${base}/one/scale`);
    assert.equal(scale.status, 200, scale.body);
    const before = (await request(server, `${base}/one`)).json;
    assert.deepEqual(scale.json, {
      kind: 'Scale', apiVersion: 'autoscaling/v1',
      metadata: { name: 'one', namespace: 'crd', uid: before.metadata.uid, resourceVersion: before.metadata.resourceVersion, creationTimestamp: before.metadata.creationTimestamp },
      spec: { replicas: 1 }, status: { replicas: 1, selector: 'app=one' },
    });
    const put = await request(server, `${base}/one/scale`, { method: 'PUT', body: { ...scale.json, spec: { replicas: 5 } } });
    assert.equal(put.status, 200, put.body);
    assert.equal(put.json.spec.replicas, 5);
    const after = (await request(server, `${base}/one`)).json;
    assert.equal(after.spec.replicas, 5);
    assert.equal(after.metadata.generation, before.metadata.generation + 1);
    const stale = await request(server, `${base}/one/scale`, { method: 'PUT', body: { ...scale.json, spec: { replicas: 6 } } });
    assert.equal(stale.status, 409, 'the Scale\'s resourceVersion is a precondition');
    const patched = await request(server, `${base}/one/scale`, { method: 'PATCH', body: { spec: { replicas: 7 } }, headers: { 'content-type': 'application/merge-patch+json' } });
    assert.equal(patched.status, 200, patched.body);
    assert.equal(patched.json.spec.replicas, 7);
    // scaled to zero: ScaleSpec.replicas has omitempty, ScaleStatus.replicas not
    const zero = await request(server, `${base}/one/scale`, { method: 'PATCH', body: { spec: { replicas: 0 } }, headers: { 'content-type': 'application/merge-patch+json' } });
    assert.equal(zero.status, 200, zero.body);
    assert.deepEqual([zero.json.spec, (await request(server, `${base}/one`)).json.spec.replicas], [{}, 0]);
    const invalid = await request(server, `${base}/one/scale`, { method: 'PATCH', body: { spec: { replicas: -1 } }, headers: { 'content-type': 'application/merge-patch+json' } });
    assert.equal(invalid.status, 422, invalid.body);
    const discovery = (await request(server, '/apis/stable.example.com/v1')).json.resources.find((r: any) => r.name === 'widgets/scale');
    assert.deepEqual([discovery.group, discovery.version, discovery.kind, discovery.verbs], ['autoscaling', 'v1', 'Scale', ['get', 'patch', 'update']]);
    const restored = await request(server, `${base}/one`, { method: 'PATCH', body: { spec: { replicas: 1 } }, headers: { 'content-type': 'application/merge-patch+json' } });
    assert.equal(restored.status, 200, restored.body);
  });

  it('keeps the fields x-kubernetes-preserve-unknown-fields preserves, at the root and beside declared properties', async () => {
    const crd = (plural: string, kind: string, openAPIV3Schema: Record<string, unknown>, subresources?: Record<string, unknown>) => ({
      apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `${plural}.loose.example.com` },
      spec: {
        group: 'loose.example.com', scope: 'Namespaced', names: { plural, kind },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema }, ...(subresources ? { subresources } : {}) }],
      },
    });
    // everything preserved: the whole body is kept, and the scale subresource reads and writes it
    const pools = crd('pools', 'Pool', { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      { scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } });
    assert.equal((await request(server, crdPath, { method: 'POST', body: pools })).status, 201);
    // declared properties and the rest preserved beside them
    const boats = crd('boats', 'Boat', {
      type: 'object',
      properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { size: { type: 'integer' } } } },
    });
    assert.equal((await request(server, crdPath, { method: 'POST', body: boats })).status, 201);
    await waitEstablished(server, 'pools.loose.example.com');
    await waitEstablished(server, 'boats.loose.example.com');

    const poolPath = '/apis/loose.example.com/v1/namespaces/crd/pools';
    const pool = { apiVersion: 'loose.example.com/v1', kind: 'Pool', metadata: { name: 'p' }, spec: { replicas: 1 }, other: { x: [1] } };
    const created = await request(server, poolPath, { method: 'POST', body: pool });
    assert.equal(created.status, 201, created.body);
    assert.deepEqual([created.json.spec, created.json.other], [{ replicas: 1 }, { x: [1] }]);
    // undeclared objects are added as themselves too, with their entries
    assert.deepEqual(created.json.metadata.managedFields[0].fieldsV1, { 'f:other': { '.': {}, 'f:x': {} }, 'f:spec': { '.': {}, 'f:replicas': {} } });
    assert.deepEqual((await request(server, `${poolPath}/p/scale`)).json.spec, { replicas: 1 });
    const scaled = await request(server, `${poolPath}/p/scale`, { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json' }, body: { spec: { replicas: 3 } } });
    assert.equal(scaled.status, 200, scaled.body);
    assert.deepEqual((await request(server, `${poolPath}/p`)).json.spec, { replicas: 3 });

    // server-side apply takes the undeclared fields as values it tracks whole
    const boatPath = '/apis/loose.example.com/v1/namespaces/crd/boats/b';
    const apply = (spec: Record<string, unknown>, manager: string) => request(server, `${boatPath}?fieldManager=${manager}`, {
      method: 'PATCH', headers: { 'content-type': 'application/apply-patch+yaml' },
      body: { apiVersion: 'loose.example.com/v1', kind: 'Boat', metadata: { name: 'b' }, spec },
    });
    const applied = await apply({ size: 1, extra: { deep: [1, 2] }, more: 'x' }, 'one');
    assert.equal(applied.status, 201, applied.body);
    assert.deepEqual(applied.json.spec, { size: 1, extra: { deep: [1, 2] }, more: 'x' });
    // (deduced as structured-merge-diff deduces them: objects are granular maps, lists atomic)
    assert.deepEqual(applied.json.metadata.managedFields[0].fieldsV1, { 'f:spec': { 'f:extra': { '.': {}, 'f:deep': {} }, 'f:more': {}, 'f:size': {} } });
    const conflict = await apply({ more: 'y' }, 'two');
    assert.equal(conflict.status, 409, conflict.body);
    assert.match(conflict.json.message, /conflict with "one": \.spec\.more/);
    const dropped = await apply({ size: 1 }, 'one');
    assert.equal(dropped.status, 200, dropped.body);
    assert.deepEqual(dropped.json.spec, { size: 1 }, 'fields the manager no longer applies are removed');
  });

  it('prints Tables with the printer columns and selects by selectable fields', async () => {
    assert.equal((await request(server, base, { method: 'POST', body: widget('two', { color: 'green', replicas: 5 }) })).status, 201);
    const table = await request(server, base, { headers: { accept: 'application/json;as=Table;g=meta.k8s.io;v=v1' } });
    assert.deepEqual(table.json.columnDefinitions.map((c: any) => [c.name, c.type, c.priority]), [['Name', 'string', 0], ['Color', 'string', 0], ['Replicas', 'integer', 1], ['Age', 'date', 0]]);
    assert.deepEqual(table.json.rows.map((r: any) => r.cells.slice(0, 3)), [['one', 'blue', 1], ['two', 'green', 5]]);
    const selected = await request(server, `${base}?fieldSelector=spec.color%3Dgreen`);
    assert.deepEqual(selected.json.items.map((i: any) => i.metadata.name), ['two']);
    const unknown = await request(server, `${base}?fieldSelector=spec.replicas%3D5`);
    assert.equal(unknown.status, 400);
    assert.match(unknown.json.message, /field label not supported: spec.replicas/);
  });

  it('serves a second version converted with strategy None, with the deprecation warning', async () => {
    const beta = '/apis/stable.example.com/v1beta1/namespaces/crd/widgets';
    const res = await request(server, `${beta}/two`);
    assert.equal(res.status, 200);
    assert.equal(res.json.apiVersion, 'stable.example.com/v1beta1');
    assert.equal(res.headers.warning, '299 - "stable.example.com/v1beta1 Widget is deprecated"');
    const created = await request(server, beta, { method: 'POST', body: { apiVersion: 'stable.example.com/v1beta1', kind: 'Widget', metadata: { name: 'three' }, spec: { color: 'red' } } });
    assert.equal(created.status, 201, created.body);
    const asV1 = await request(server, `${base}/three`);
    assert.equal(asV1.json.apiVersion, 'stable.example.com/v1');
    assert.equal(asV1.json.spec.replicas, 1);
    assert.equal((await request(server, `${base}/three`)).headers.warning, undefined, 'v1 is not deprecated');
  });

  it('publishes OpenAPI v3 from the schema', async () => {
    const doc = (await request(server, '/openapi/v3/apis/stable.example.com/v1')).json;
    const schema = doc.components.schemas['com.example.stable.v1.Widget'];
    assert.ok(schema, Object.keys(doc.components.schemas).join());
    assert.deepEqual(schema['x-kubernetes-group-version-kind'], [{ group: 'stable.example.com', kind: 'Widget', version: 'v1' }]);
    assert.deepEqual(schema.properties.spec.properties.color.enum, ['red', 'green', 'blue']);
    assert.equal(schema.properties.spec.properties.tags['x-kubernetes-list-type'], 'set');
    assert.equal(schema.properties.metadata.allOf[0].$ref, '#/components/schemas/io.orch.apimachinery.pkg.apis.meta.v1.ObjectMeta');
    const v2 = (await request(server, '/openapi/v2')).json;
    assert.ok(v2.definitions['com.example.stable.v1.Widget']);
  });

  it('validates CEL rules: refused when they do not compile or cost too much, enforced on create and update', async () => {
    const gizmos = (rules: unknown[], replicas: Record<string, unknown> = { type: 'integer' }) => ({
      apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'gizmos.cel.example.com' },
      spec: {
        group: 'cel.example.com', scope: 'Cluster', names: { plural: 'gizmos', kind: 'Gizmo' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: {
          type: 'object', 'x-kubernetes-validations': rules,
          properties: { replicas, min: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } },
        } } } } }],
      },
    });
    const broken = await request(server, crdPath, { method: 'POST', body: gizmos([{ rule: 'self.replicas >' }, { rule: 'self.tags.all(a, self.tags.all(b, a != b))' }]) });
    assert.equal(broken.status, 422, broken.body);
    const causes = broken.json.details.causes.map((c: any) => `${c.field}: ${c.message}`);
    assert.match(causes[0], /^spec.versions\[0\].schema.openAPIV3Schema.properties\[spec\].x-kubernetes-validations\[0\].rule: Invalid value: "self.replicas >": compilation failed: ERROR: /);
    assert.match(causes[1], /x-kubernetes-validations\[1\].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x/);

    const ok = await request(server, crdPath, { method: 'POST', body: gizmos([
      { rule: 'self.replicas >= self.min', messageExpression: '"replicas must be at least " + string(self.min)' },
      { rule: 'self.replicas >= oldSelf.replicas', message: 'replicas may not shrink', reason: 'FieldValueForbidden', fieldPath: '.replicas' },
    ]) });
    assert.equal(ok.status, 201, ok.body);
    await waitEstablished(server, 'gizmos.cel.example.com');
    const path = '/apis/cel.example.com/v1/gizmos';
    const gizmo = (replicas: number, extra: Record<string, unknown> = {}) => ({ apiVersion: 'cel.example.com/v1', kind: 'Gizmo', metadata: { name: 'g', ...extra }, spec: { replicas, min: 2 } });
    const low = await request(server, path, { method: 'POST', body: gizmo(1) });
    assert.equal(low.status, 422, low.body);
    assert.equal(low.json.message, 'Gizmo.cel.example.com "g" is invalid: spec: Invalid value: "object": replicas must be at least 2');
    const created = await request(server, path, { method: 'POST', body: gizmo(5) });
    assert.equal(created.status, 201, created.body);
    const shrink = await request(server, `${path}/g`, { method: 'PUT', body: gizmo(3, { resourceVersion: created.json.metadata.resourceVersion }) });
    assert.equal(shrink.status, 422, shrink.body);
    assert.deepEqual(shrink.json.details.causes, [{ reason: 'FieldValueForbidden', message: 'Forbidden: replicas may not shrink', field: 'spec.replicas' }]);
    const grow = await request(server, `${path}/g`, { method: 'PUT', body: gizmo(6, { resourceVersion: created.json.metadata.resourceVersion }) });
    assert.equal(grow.status, 200, grow.body);
    const typeError = await request(server, `${path}/g`, { method: 'PUT', body: { ...gizmo(6), spec: { replicas: 'six', min: 2 } } });
    assert.equal(typeError.status, 422);
    assert.deepEqual(typeError.json.details.causes.map((c: any) => c.message), [
      'Invalid value: "string": spec.replicas in body must be of type integer: "string"',
      'Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    ]);
    assert.equal((await request(server, `${crdPath}/gizmos.cel.example.com`, { method: 'DELETE' })).status, 200);
  });

  it('watches definitions in JSON and as Tables, under both group names', async () => {
    // the encoder pool does not load the CRD kind (its CEL validation): it encodes these events
    // from the kind's schema sent with the task, and the front thread converts the views
    const list = await request(server, crdPath);
    const name = 'widgets.watched.example.com';
    // only this definition: one the tests before deleted may still be going (its finalizer runs after
    // the delete's answer), and its DELETED event would come first
    const from = `watch=1&resourceVersion=${list.json.metadata.resourceVersion}&timeoutSeconds=10&fieldSelector=metadata.name%3D${name}`;
    const has = (bytes: Buffer) => bytes.includes(name);
    const watches = [
      watchUntil(server, `${crdPath}?${from}`, 'application/json', has),
      watchUntil(server, `/apis/apiextensions.orch.io/v1/customresourcedefinitions?${from}`, 'application/json', has),
      watchUntil(server, `${crdPath}?${from}`, 'application/json;as=Table;v=v1;g=meta.k8s.io', has),
    ];
    await Promise.all(watches.map((w) => w.opened));
    const res = await request(server, crdPath, { method: 'POST', body: widgetCrd('watched.example.com') });
    assert.equal(res.status, 201, res.body);
    const [k8sJson, orchJson, table] = await Promise.all(watches.map((w) => w.done));
    for (const [bytes, apiVersion] of [[k8sJson, 'apiextensions.k8s.io/v1'], [orchJson, 'apiextensions.orch.io/v1']] as const) {
      const event = JSON.parse(bytes.toString().split('\n')[0]);
      assert.equal(event.type, 'ADDED');
      assert.equal(event.object.apiVersion, apiVersion);
      assert.equal(event.object.kind, 'CustomResourceDefinition');
      assert.equal(event.object.metadata.name, name);
    }
    const row = JSON.parse(table.toString().split('\n')[0]);
    assert.equal(row.object.kind, 'Table');
    assert.equal(row.object.rows[0].cells[0], name);
  });

  it('deletes every custom resource before the definition goes, then answers 404', async () => {
    const res = await request(server, `${crdPath}/widgets.stable.example.com`, { method: 'DELETE' });
    assert.equal(res.status, 200, res.body);
    await waitStatus(server, `${crdPath}/widgets.stable.example.com`, 404);
    assert.equal((await request(server, base)).status, 404);
    assert.equal((await request(server, '/apis/stable.example.com/v1')).status, 404);
    const groups = (await request(server, '/apis')).json.groups.map((g: any) => g.name);
    assert.ok(!groups.includes('stable.example.com'));
    // created again, the definition serves an empty collection: its objects went with it
    assert.equal((await request(server, crdPath, { method: 'POST', body: widgetCrd() })).status, 201);
    await waitEstablished(server, 'widgets.stable.example.com');
    assert.deepEqual((await request(server, base)).json.items, []);
  });
});
