/**
 * PartialObjectMetadata (as=PartialObjectMetadata / PartialObjectMetadataList): get, list, writes
 * and watch, in JSON, YAML and Protobuf (read by protoc --decode_raw), under both meta group names,
 * with kube-apiserver's 406 for a conversion the answer's shape does not allow.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fromYaml } from '../../src/codec/yaml.js';
import { createNamespace, createSA, expectStatus, update, type Obj } from '../support/api.js';
import { request, startServer, type TestServer } from '../support/server.js';
import { at, decodeRaw, protobufWatchEvents, raw, RawStream, type Raw } from '../support/wire.js';

const as = (kind: string, group = 'meta.k8s.io', type = 'application/json') => `${type};as=${kind};g=${group};v=v1`;
/** What client-go's metadata client sends (k8s.io/client-go/metadata). */
const metadataClient = (kind: string) => `${as(kind, 'meta.k8s.io', 'application/vnd.kubernetes.protobuf')},${as(kind)},application/json`;
const ns = 'partial';
const path = `/api/v1/namespaces/${ns}/serviceaccounts`;

/** The Unknown envelope of a protobuf body, past the magic. */
function envelope(body: Buffer): Raw {
  assert.deepEqual([...body.subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00]);
  return decodeRaw(body.subarray(4));
}

describe('PartialObjectMetadata', () => {
  let server: TestServer;
  let sa: Obj;
  before(async () => {
    server = await startServer();
    await createNamespace(server, ns);
    sa = await createSA(server, ns, 'meta-only', { labels: { app: 'web' }, annotations: { note: 'x' } });
    await request(server, `${path}/meta-only`, { method: 'PUT', body: { ...sa, secrets: [{ name: 'not-in-metadata' }] } });
    sa = (await request(server, `${path}/meta-only`)).json;
  });
  after(async () => { await server?.dispose(); });

  for (const group of ['meta.k8s.io', 'meta.orch.io']) {
    it(`get in JSON under ${group}: the whole ObjectMeta and nothing else`, async () => {
      const r = await request(server, `${path}/meta-only`, { headers: { accept: as('PartialObjectMetadata', group) } });
      expectStatus(r, 200, 'get');
      assert.equal(r.headers['content-type'], 'application/json');
      assert.deepEqual(r.json, { kind: 'PartialObjectMetadata', apiVersion: `${group}/v1`, metadata: sa.metadata });
    });
  }

  it('list in JSON: every item a PartialObjectMetadata, list metadata kept across pages', async () => {
    const first = await request(server, `${path}?limit=1`, { headers: { accept: as('PartialObjectMetadataList') } });
    expectStatus(first, 200, 'list');
    assert.equal(first.json.kind, 'PartialObjectMetadataList');
    assert.equal(first.json.apiVersion, 'meta.k8s.io/v1');
    assert.ok(first.json.metadata.resourceVersion);
    assert.ok(first.json.metadata.continue);
    assert.equal(first.json.metadata.remainingItemCount, 1);
    assert.deepEqual(first.json.items, [{ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: (await request(server, `${path}/default`)).json.metadata }]);
    const rest = await request(server, `${path}?limit=1&continue=${encodeURIComponent(first.json.metadata.continue)}`, { headers: { accept: as('PartialObjectMetadataList') } });
    assert.deepEqual(rest.json.items.map((i: Obj) => i.metadata.name), ['meta-only']);
    assert.equal(rest.json.items[0].secrets, undefined);
  });

  it('in YAML', async () => {
    const r = await request(server, `${path}/meta-only`, { headers: { accept: as('PartialObjectMetadata', 'meta.k8s.io', 'application/yaml') } });
    assert.equal(r.headers['content-type'], 'application/yaml');
    assert.deepEqual(fromYaml(r.body), { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: sa.metadata });
  });

  it('get in Protobuf, as the metadata client asks: PartialObjectMetadata {metadata = 1}', async () => {
    const r = await raw(server, `${path}/meta-only`, { accept: metadataClient('PartialObjectMetadata') });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/vnd.kubernetes.protobuf');
    const unknown = envelope(r.body);
    assert.equal(at(unknown, 1, 1), 'meta.k8s.io/v1');
    assert.equal(at(unknown, 1, 2), 'PartialObjectMetadata');
    const message = at(unknown, 2) as Raw;
    assert.deepEqual([...message.keys()], [1], 'only the metadata field');
    assert.equal(at(message, 1, 1), 'meta-only');
    assert.equal(at(message, 1, 3), ns);
    assert.equal(at(message, 1, 5), sa.metadata.uid);
    assert.equal(at(message, 1, 11, 1), 'app');
  });

  it('list in Protobuf: PartialObjectMetadataList {metadata = 1, items = 2}', async () => {
    const r = await raw(server, path, { accept: metadataClient('PartialObjectMetadataList') });
    assert.equal(r.status, 200);
    const unknown = envelope(r.body);
    assert.equal(at(unknown, 1, 2), 'PartialObjectMetadataList');
    const list = at(unknown, 2) as Raw;
    assert.ok(at(list, 1, 2), 'ListMeta.resourceVersion');
    assert.deepEqual((list.get(2) ?? []).map((item) => at(item as Raw, 1, 1)), ['default', 'meta-only']);
  });

  it('applies to what writes answer with', async () => {
    const r = await request(server, path, { method: 'POST', body: { metadata: { name: 'made' } }, headers: { accept: as('PartialObjectMetadata') } });
    expectStatus(r, 201, 'create');
    assert.equal(r.json.kind, 'PartialObjectMetadata');
    assert.equal(r.json.metadata.name, 'made');
    const del = await request(server, `${path}/made`, { method: 'DELETE', headers: { accept: as('PartialObjectMetadata') } });
    assert.equal(del.json.kind, 'PartialObjectMetadata');
  });

  it('406 when the answer\'s shape is not the one asked for, with kube-apiserver\'s message', async () => {
    const list = await request(server, path, { headers: { accept: as('PartialObjectMetadata') } });
    assert.equal(list.status, 406);
    assert.equal(list.json.reason, 'NotAcceptable');
    assert.equal(list.json.message, 'you requested PartialObjectMetadata, but the requested object is a list (*core.ServiceAccountList)');
    const one = await request(server, `${path}/meta-only`, { headers: { accept: as('PartialObjectMetadataList') } });
    assert.equal(one.status, 406);
    assert.equal(one.json.message, 'you requested PartialObjectMetadataList, but the requested object is not a list (*core.ServiceAccount)');
    const events = await request(server, `/apis/events.orch.io/v1/namespaces/${ns}/events`, { headers: { accept: as('PartialObjectMetadata') } });
    assert.equal(events.json.message, 'you requested PartialObjectMetadata, but the requested object is a list (*core.EventList)');
    const watch = await request(server, `${path}?watch=1`, { headers: { accept: as('PartialObjectMetadataList') } });
    assert.equal(watch.status, 406);
    // negotiation takes the first clause it can serve; the conversion fails after it, as in kube-apiserver
    const later = await request(server, path, { headers: { accept: `${as('PartialObjectMetadata')}, application/json` } });
    assert.equal(later.status, 406);
  });

  it('watch in JSON: every event object, bookmarks included, is a PartialObjectMetadata; the watch-list blueprint is a PartialObjectMetadataList', async () => {
    const w = new RawStream(server, `${path}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`, { accept: as('PartialObjectMetadata') });
    try {
      const lines = () => w.body.toString().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Obj);
      await w.waitFor(() => lines().some((e) => e.type === 'BOOKMARK'), 'the initial-events-end bookmark');
      assert.equal(w.headers['content-type'], 'application/json');
      await update(server, `${path}/meta-only`, (o) => { o.metadata.labels.app = 'api'; });
      await w.waitFor(() => lines().some((e) => e.type === 'MODIFIED'), 'the MODIFIED event');
      const events = lines();
      for (const e of events) {
        assert.equal(e.object.kind, 'PartialObjectMetadata', JSON.stringify(e));
        assert.equal(e.object.apiVersion, 'meta.k8s.io/v1');
        assert.equal(e.object.secrets, undefined);
      }
      assert.deepEqual(events.map((e) => e.type), ['ADDED', 'ADDED', 'BOOKMARK', 'MODIFIED']);
      const annotations = events[2].object.metadata.annotations;
      assert.equal(annotations['k8s.io/initial-events-end'], 'true');
      assert.equal(annotations['orch.io/initial-events-end'], 'true');
      assert.equal(Buffer.from(annotations['kubernetes.io/initial-events-list-blueprint'], 'base64').toString(),
        '{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{},"items":null}\n');
      assert.equal(events[3].object.metadata.labels.app, 'api');
    } finally {
      w.destroy();
    }
  });

  it('watch in Protobuf, as the metadata client asks: PartialObjectMetadata frames, a Protobuf list blueprint', async () => {
    const w = new RawStream(server, `${path}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`, { accept: metadataClient('PartialObjectMetadata') });
    try {
      await w.waitFor(() => protobufWatchEvents(w.body).some((e) => e.type === 'BOOKMARK'), 'the initial-events-end bookmark');
      assert.equal(w.headers['content-type'], 'application/vnd.kubernetes.protobuf;stream=watch');
      await update(server, `${path}/meta-only`, (o) => { o.metadata.labels.app = 'proto'; });
      await w.waitFor(() => protobufWatchEvents(w.body).some((e) => e.type === 'MODIFIED'), 'the MODIFIED event');
      const events = protobufWatchEvents(w.body);
      assert.deepEqual(events.map((e) => e.type), ['ADDED', 'ADDED', 'BOOKMARK', 'MODIFIED']);
      for (const e of events) {
        const unknown = envelope(e.object);
        assert.equal(at(unknown, 1, 1), 'meta.k8s.io/v1');
        assert.equal(at(unknown, 1, 2), 'PartialObjectMetadata');
        assert.deepEqual([...(at(unknown, 2) as Raw).keys()], [1]);
      }
      const bookmark = at(envelope(events[2].object), 2, 1) as Raw;
      const annotations = new Map((bookmark.get(12) ?? []).map((entry) => [at(entry as Raw, 1), at(entry as Raw, 2)]));
      assert.equal(annotations.get('k8s.io/initial-events-end'), 'true');
      const blueprint = envelope(Buffer.from(String(annotations.get('kubernetes.io/initial-events-list-blueprint')), 'base64'));
      assert.equal(at(blueprint, 1, 1), 'meta.k8s.io/v1');
      assert.equal(at(blueprint, 1, 2), 'PartialObjectMetadataList');
      assert.equal((at(blueprint, 2) as Raw).get(2), undefined, 'no items');
      assert.equal(at(envelope(events[3].object), 2, 1, 11, 2), 'proto');
    } finally {
      w.destroy();
    }
  });
});
