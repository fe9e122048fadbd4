/**
 * The kind catalog over HTTP: core/v1 ConfigMaps and coordination Leases (under both group names)
 * with Kubernetes' validation messages, Tables and field selectors, and Protobuf get, list, watch
 * and create for ConfigMaps, Leases and core/v1 Events, as client-go speaks it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { leaseKind } from '../../src/api/coordination/lease.js';
import { configMapKind } from '../../src/api/core/config-map.js';
import { coreEventKind } from '../../src/api/core/event.js';
import type { KindDeclaration } from '../../src/api/kind.js';
import { listSchemaOf } from '../../src/api/meta.js';
import { decodeEnvelope } from '../../src/codec/proto/decode.js';
import { encodeEnvelope } from '../../src/codec/proto/encode.js';
import { createNamespace, expectStatus, type Obj } from '../support/api.js';
import { protobufFrames, raw, watchEventOf, watchUntil } from '../support/raw.js';
import { request, startServer, type TestServer } from '../support/server.js';

const ns = 'catalog';
const cmPath = (name = '') => `/api/v1/namespaces/${ns}/configmaps${name && `/${name}`}`;
const leasePath = (group: string, name = '') => `/apis/${group}/v1/namespaces/${ns}/leases${name && `/${name}`}`;
const asTable = { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' };
const protobuf = 'application/vnd.kubernetes.protobuf';

describe('kind catalog: ConfigMaps and Leases', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await createNamespace(server, ns);
  });
  after(async () => { await server?.dispose(); });

  const post = (path: string, body: Obj) => request(server, path, { method: 'POST', body });
  const put = (path: string, body: Obj) => request(server, path, { method: 'PUT', body });

  describe('core/v1 ConfigMaps', () => {
    it('are created, read, listed, replaced and deleted (a Success Status)', async () => {
      const created = await post(cmPath(), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app' }, data: { 'app.properties': 'a=b' }, binaryData: { logo: Buffer.from([0, 255]).toString('base64') } });
      expectStatus(created, 201, 'create');
      assert.equal(created.json.kind, 'ConfigMap');
      assert.equal(created.json.apiVersion, 'v1');
      assert.deepEqual(created.json.data, { 'app.properties': 'a=b' });
      assert.deepEqual(created.json.binaryData, { logo: 'AP8=' });
      assert.deepEqual((await request(server, cmPath('app'))).json, created.json);
      const list = await request(server, cmPath());
      assert.equal(list.json.kind, 'ConfigMapList');
      assert.deepEqual(list.json.items.map((i: Obj) => i.metadata.name), ['app']);
      const replaced = await put(cmPath('app'), { ...created.json, data: { 'app.properties': 'a=c' } });
      expectStatus(replaced, 200, 'replace');
      assert.equal(replaced.json.data['app.properties'], 'a=c');
      // PUT of a missing ConfigMap does not create it
      expectStatus(await put(cmPath('absent'), { metadata: { name: 'absent' } }), 404, 'put missing');
      const deleted = await request(server, cmPath('app'), { method: 'DELETE' });
      expectStatus(deleted, 200, 'delete');
      assert.equal(deleted.json.kind, 'Status');
      assert.deepEqual(deleted.json.details, { name: 'app', kind: 'configmaps', uid: created.json.metadata.uid });
    });

    it('refuses bad keys, a key in both maps, and more than 1 MiB, with Kubernetes\' messages', async () => {
      const badKey = await post(cmPath(), { metadata: { name: 'bad-key' }, data: { 'a b': 'x', '..hidden': 'y' } });
      expectStatus(badKey, 422, 'bad key');
      assert.equal(badKey.json.message, 'ConfigMap "bad-key" is invalid: [data[a b]: Invalid value: "a b": a valid config key must consist of alphanumeric characters, \'-\', \'_\' or \'.\' (e.g. \'key.name\',  or \'KEY_NAME\',  or \'key-name\', regex used for validation is \'[-._a-zA-Z0-9]+\'), data[..hidden]: Invalid value: "..hidden": must not start with \'..\']');
      assert.deepEqual(badKey.json.details.causes.map((c: Obj) => c.field), ['data[a b]', 'data[..hidden]']);

      const duplicate = await post(cmPath(), { metadata: { name: 'dup' }, data: { k: 'x' }, binaryData: { k: 'eA==' } });
      expectStatus(duplicate, 422, 'duplicate key');
      assert.equal(duplicate.json.message, 'ConfigMap "dup" is invalid: data[k]: Invalid value: "k": duplicate of key present in binaryData');

      const big = await post(cmPath(), { metadata: { name: 'big' }, data: { a: 'x'.repeat(600 * 1024) }, binaryData: { b: Buffer.alloc(500 * 1024).toString('base64') } });
      expectStatus(big, 422, 'too big');
      assert.equal(big.json.message, 'ConfigMap "big" is invalid: : Too long: may not be more than 1048576 bytes');
      assert.deepEqual(big.json.details.causes, [{ reason: 'FieldValueTooLong', message: 'Too long: may not be more than 1048576 bytes', field: '' }]);
      expectStatus(await request(server, cmPath('big')), 404, 'nothing stored');
    });

    it('keeps an immutable ConfigMap\'s data and immutability, but lets its metadata change', async () => {
      const created = await post(cmPath(), { metadata: { name: 'frozen' }, data: { a: '1' }, immutable: true });
      expectStatus(created, 201, 'create');
      const changed = await put(cmPath('frozen'), { ...created.json, data: { a: '2' }, binaryData: { b: 'eA==' } });
      expectStatus(changed, 422, 'data change');
      assert.equal(changed.json.message, 'ConfigMap "frozen" is invalid: [data: Forbidden: field is immutable when `immutable` is set, binaryData: Forbidden: field is immutable when `immutable` is set]');
      const unset = await put(cmPath('frozen'), { ...created.json, immutable: false });
      expectStatus(unset, 422, 'immutable unset');
      assert.equal(unset.json.message, 'ConfigMap "frozen" is invalid: immutable: Forbidden: field is immutable when `immutable` is set');
      const relabelled = await put(cmPath('frozen'), { ...created.json, metadata: { ...created.json.metadata, labels: { tier: 'web' } } });
      expectStatus(relabelled, 200, 'metadata change');
      // no data is an empty map, as Kubernetes defaults it
      const empty = await post(cmPath(), { metadata: { name: 'frozen-empty' }, immutable: true });
      expectStatus(await put(cmPath('frozen-empty'), { ...empty.json, data: {} }), 200, 'empty data is no data');
      // a mutable ConfigMap may become immutable
      const open = await post(cmPath(), { metadata: { name: 'thawed' }, data: { a: '1' } });
      expectStatus(await put(cmPath('thawed'), { ...open.json, data: { a: '2' }, immutable: true }), 200, 'freeze');
    });

    it('stores no empty optional map or list, as Go\'s omitempty serializes none', async () => {
      const created = await post(cmPath(), {
        metadata: { name: 'empties', labels: {}, annotations: {}, finalizers: [], ownerReferences: [] },
        data: {}, binaryData: {},
      });
      expectStatus(created, 201, 'create');
      for (const got of [created.json, (await request(server, cmPath('empties'))).json]) {
        assert.deepEqual(Object.keys(got).sort(), ['apiVersion', 'kind', 'metadata']);
        for (const field of ['labels', 'annotations', 'finalizers', 'ownerReferences']) assert.equal(got.metadata[field], undefined, field);
      }
      const patched = await request(server, cmPath('empties'), { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json' }, body: { metadata: { annotations: {} }, data: {} } });
      expectStatus(patched, 200, 'patch');
      assert.equal(patched.json.metadata.annotations, undefined);
      assert.equal(patched.json.metadata.resourceVersion, created.json.metadata.resourceVersion, 'a patch of empty maps changes nothing');
    });

    it('prints NAME DATA AGE, counting both maps, and selects only by metadata fields', async () => {
      await post(cmPath(), { metadata: { name: 'printed' }, data: { a: '1', b: '2' }, binaryData: { c: 'eA==' } });
      const table = await request(server, cmPath('printed'), { headers: asTable });
      assert.deepEqual(table.json.columnDefinitions.map((c: Obj) => [c.name, c.type]), [['Name', 'string'], ['Data', 'string'], ['Age', 'string']]);
      assert.deepEqual(table.json.rows[0].cells.slice(0, 2), ['printed', 3]);
      const byName = await request(server, `${cmPath()}?fieldSelector=metadata.name%3Dprinted`);
      assert.deepEqual(byName.json.items.map((i: Obj) => i.metadata.name), ['printed']);
      const unknown = await request(server, `${cmPath()}?fieldSelector=data.a%3D1`);
      expectStatus(unknown, 400, 'unknown field');
      assert.equal(unknown.json.message, '"data.a" is not a known field selector: only "metadata.name", "metadata.namespace"');
    });
  });

  describe('coordination Leases', () => {
    const lease = (name: string, spec: Obj = {}, apiVersion = 'coordination.orch.io/v1') => ({ apiVersion, kind: 'Lease', metadata: { name }, spec });

    it('are one set of objects under coordination.orch.io and coordination.k8s.io, each answering in the group asked', async () => {
      const created = await post(leasePath('coordination.k8s.io'), lease('shared', { holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 0, renewTime: '2025-01-02T03:04:05.123Z' }, 'coordination.k8s.io/v1'));
      expectStatus(created, 201, 'create under coordination.k8s.io');
      assert.equal(created.json.apiVersion, 'coordination.k8s.io/v1');
      assert.deepEqual(created.json.spec, { holderIdentity: 'a', leaseDurationSeconds: 15, renewTime: '2025-01-02T03:04:05.123000Z', leaseTransitions: 0 });
      const ours = await request(server, leasePath('coordination.orch.io', 'shared'));
      assert.equal(ours.json.apiVersion, 'coordination.orch.io/v1');
      assert.equal(ours.json.metadata.resourceVersion, created.json.metadata.resourceVersion);
      const renewed = await put(leasePath('coordination.orch.io', 'shared'), { ...ours.json, spec: { ...ours.json.spec, renewTime: '2025-01-02T03:04:15.000001Z' } });
      expectStatus(renewed, 200, 'renew');
      assert.equal((await request(server, leasePath('coordination.k8s.io', 'shared'))).json.spec.renewTime, '2025-01-02T03:04:15.000001Z');
      const deleted = await request(server, leasePath('coordination.k8s.io', 'shared'), { method: 'DELETE' });
      assert.equal(deleted.json.kind, 'Status');
      assert.deepEqual(deleted.json.details, { name: 'shared', group: 'coordination.k8s.io', kind: 'leases', uid: created.json.metadata.uid });
    });

    it('must be replaced with the resourceVersion it replaces; PUT of a missing Lease creates it', async () => {
      const created = await put(leasePath('coordination.orch.io', 'upserted'), lease('upserted', { holderIdentity: 'a' }));
      expectStatus(created, 201, 'create on update');
      const { resourceVersion, ...meta } = created.json.metadata;
      const blind = await put(leasePath('coordination.orch.io', 'upserted'), { ...created.json, metadata: meta, spec: { holderIdentity: 'b' } });
      expectStatus(blind, 422, 'update without resourceVersion');
      assert.equal(blind.json.message, 'leases.coordination.orch.io "upserted" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update');
      assert.deepEqual(blind.json.details, {
        name: 'upserted', group: 'coordination.orch.io', kind: 'leases',
        causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: 0x0: must be specified for an update', field: 'metadata.resourceVersion' }],
      });
      const stale = await put(leasePath('coordination.orch.io', 'upserted'), { ...created.json, metadata: { ...meta, resourceVersion: '1' }, spec: { holderIdentity: 'b' } });
      expectStatus(stale, 409, 'stale resourceVersion');
      assert.ok(resourceVersion);
      // a patch needs no resourceVersion: it applies to the current object
      const patched = await request(server, leasePath('coordination.orch.io', 'upserted'), { method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json' }, body: { spec: { holderIdentity: 'c' } } });
      expectStatus(patched, 200, 'patch');
      assert.equal(patched.json.spec.holderIdentity, 'c');
    });

    it('validates the spec with Kubernetes\' messages and drops the alpha coordinated-election fields', async () => {
      const invalid = await post(leasePath('coordination.orch.io'), lease('invalid', { leaseDurationSeconds: 0, leaseTransitions: -1 }));
      expectStatus(invalid, 422, 'invalid spec');
      assert.equal(invalid.json.message, 'Lease.coordination.orch.io "invalid" is invalid: [spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0, spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0]');
      const viaK8s = await post(leasePath('coordination.k8s.io'), lease('invalid', { leaseDurationSeconds: -5 }, 'coordination.k8s.io/v1'));
      assert.equal(viaK8s.json.message, 'Lease.coordination.k8s.io "invalid" is invalid: spec.leaseDurationSeconds: Invalid value: -5: must be greater than 0');
      const badName = await post(leasePath('coordination.orch.io'), lease('Not_A_Name'));
      expectStatus(badName, 422, 'bad name');
      // CoordinatedLeaderElection is alpha in 1.32 and off: strategy and preferredHolder are not kept
      const gated = await post(leasePath('coordination.orch.io'), lease('gated', { holderIdentity: 'a', strategy: 'OldestEmulationVersion', preferredHolder: 'b' }));
      expectStatus(gated, 201, 'gated fields');
      assert.deepEqual(gated.json.spec, { holderIdentity: 'a' });
    });

    it('prints NAME HOLDER AGE and selects only by metadata fields', async () => {
      await post(leasePath('coordination.orch.io'), lease('held', { holderIdentity: 'node-1' }));
      await post(leasePath('coordination.orch.io'), lease('free'));
      const table = await request(server, leasePath('coordination.k8s.io'), { headers: asTable });
      assert.deepEqual(table.json.columnDefinitions.map((c: Obj) => c.name), ['Name', 'Holder', 'Age']);
      const rows = new Map(table.json.rows.map((r: Obj) => [r.cells[0], r.cells[1]]));
      assert.equal(rows.get('held'), 'node-1');
      assert.equal(rows.get('free'), '');
      const unknown = await request(server, `${leasePath('coordination.orch.io')}?fieldSelector=spec.holderIdentity%3Dnode-1`);
      expectStatus(unknown, 400, 'unknown field');
      assert.equal(unknown.json.message, '"spec.holderIdentity" is not a known field selector: only "metadata.name", "metadata.namespace"');
    });
  });

  describe('Protobuf, as client-go speaks it', () => {
    const cases: Array<{ kind: KindDeclaration; collection: string; apiVersion: string; body: Obj; check(object: Obj): void; numbers: Array<[number[], string]> }> = [
      {
        kind: configMapKind, collection: cmPath(), apiVersion: 'v1',
        body: { metadata: { name: 'pb-cm' }, data: { a: 'b' }, binaryData: { bin: Buffer.from([1, 2]).toString('base64') }, immutable: true },
        check: (o) => { assert.deepEqual(o.data, { a: 'b' }); assert.deepEqual(o.binaryData, { bin: 'AQI=' }); assert.equal(o.immutable, true); },
        // ConfigMap.data = 2 (entry key 1, value 2), immutable = 4
        numbers: [[[2, 1], 'a'], [[2, 2], 'b'], [[4], '1']],
      },
      {
        kind: leaseKind, collection: leasePath('coordination.k8s.io'), apiVersion: 'coordination.k8s.io/v1',
        body: { metadata: { name: 'pb-lease' }, spec: { holderIdentity: 'me', leaseDurationSeconds: 10, leaseTransitions: 0 } },
        check: (o) => assert.deepEqual(o.spec, { holderIdentity: 'me', leaseDurationSeconds: 10, leaseTransitions: 0 }),
        // Lease.spec = 2: holderIdentity = 1, leaseDurationSeconds = 2, leaseTransitions = 5 (a set zero)
        numbers: [[[2, 1], 'me'], [[2, 2], '10'], [[2, 5], '0']],
      },
      {
        kind: coreEventKind, collection: `/api/v1/namespaces/${ns}/events`, apiVersion: 'v1',
        body: {
          metadata: { name: 'pb-event' }, involvedObject: { kind: 'ConfigMap', namespace: ns, name: 'pb-cm' }, reason: 'Created',
          message: 'made by protobuf', source: { component: 'kubelet' }, count: 2, type: 'Normal',
          firstTimestamp: '2025-01-02T03:04:05Z', lastTimestamp: '2025-01-02T03:04:06Z',
        },
        check: (o) => { assert.equal(o.message, 'made by protobuf'); assert.equal(o.involvedObject.name, 'pb-cm'); assert.equal(o.count, 2); },
        // Event.involvedObject = 2 (name = 3), message = 4, source = 5 (component = 1), count = 8
        numbers: [[[2, 3], 'pb-cm'], [[4], 'made by protobuf'], [[5, 1], 'kubelet'], [[8], '2']],
      },
    ];

    for (const c of cases) {
      it(`${c.kind.kind}: created, read, listed and watched in Protobuf with Kubernetes' field numbers`, async () => {
        const typeMeta = { apiVersion: c.apiVersion, kind: c.kind.kind };
        const rv = (await request(server, c.collection)).json.metadata.resourceVersion;
        const watch = watchUntil(server, `${c.collection}?watch=1&resourceVersion=${rv}`, `${protobuf};stream=watch`, (b) => protobufFrames(b).length >= 1);
        await watch.opened;
        const created = await raw(server, c.collection, { 'content-type': protobuf, accept: protobuf }, 'POST', encodeEnvelope({ ...typeMeta, ...c.body }, c.kind.schema, typeMeta));
        assert.equal(created.status, 201, created.body.toString('latin1'));
        assert.equal(created.headers['content-type'], protobuf);
        const answer = decodeEnvelope(created.body, c.kind.schema);
        assert.equal(answer.apiVersion, c.apiVersion);
        c.check(answer.object);

        const got = await raw(server, `${c.collection}/${c.body.metadata.name}`, { accept: protobuf });
        c.check(decodeEnvelope(got.body, c.kind.schema).object);
        // field numbers read by an independent decoder
        const fields = decodeRaw(got.body.subarray(4));
        for (const [path, value] of c.numbers) assert.equal(at(fields, 2, ...path), value, `field ${path.join('.')}`);

        const list = decodeEnvelope((await raw(server, c.collection, { accept: protobuf })).body, listSchemaOf(c.kind.schema));
        assert.equal(list.kind, c.kind.listKind);
        const listed = (list.object.items as Obj[]).find((i) => i.metadata.name === c.body.metadata.name);
        assert.ok(listed);
        c.check(listed);

        const [frame] = protobufFrames(await watch.done);
        const event = watchEventOf(frame);
        assert.equal(event.type, 'ADDED');
        const watched = decodeEnvelope(event.raw, c.kind.schema);
        assert.equal(watched.apiVersion, c.apiVersion);
        c.check(watched.object);
      });
    }
  });
});

/** protoc --decode_raw as a nested map of field number → values. */
type Raw = Map<number, Array<string | Raw>>;
function decodeRaw(bytes: Buffer): Raw {
  const out = spawnSync('protoc', ['--decode_raw'], { input: bytes });
  assert.equal(out.status, 0, String(out.stderr));
  const root: Raw = new Map();
  const stack: Raw[] = [root];
  const push = (top: Raw, n: number, v: string | Raw) => { if (!top.has(n)) top.set(n, []); top.get(n)!.push(v); };
  for (const line of String(out.stdout).split('\n').map((l) => l.trim()).filter(Boolean)) {
    const top = stack[stack.length - 1];
    let m;
    if ((m = /^(\d+) \{$/.exec(line))) {
      const child: Raw = new Map();
      push(top, Number(m[1]), child);
      stack.push(child);
    } else if (line === '}') {
      stack.pop();
    } else if ((m = /^(\d+): (.*)$/.exec(line))) {
      // quoted strings as protoc prints them; bytes keep protoc's escapes
      push(top, Number(m[1]), m[2].startsWith('"') ? m[2].slice(1, -1) : m[2]);
    }
  }
  return root;
}

function at(r: Raw, ...path: number[]): string | Raw | undefined {
  let cur: string | Raw | undefined = r;
  for (const n of path) cur = cur instanceof Map ? cur.get(n)?.[0] : undefined;
  return cur;
}
