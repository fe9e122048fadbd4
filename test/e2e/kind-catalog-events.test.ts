/**
 * core/v1 Events: a view of the events.orch.io/v1 Events in storage. Events written through either
 * API are read through both, converted field by field; the core API keeps Kubernetes' legacy
 * validation, its own field selectors and kubectl's columns; watches receive converted objects.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createNamespace, createSA, expectStatus, type Obj } from '../support/api.js';
import { watchUntil } from '../support/raw.js';
import { request, startServer, type TestServer } from '../support/server.js';

const ns = 'core-events';
const corePath = (name = '', namespace = ns) => `/api/v1/namespaces/${namespace}/events${name && `/${name}`}`;
const groupPath = (name = '', namespace = ns) => `/apis/events.orch.io/v1/namespaces/${namespace}/events${name && `/${name}`}`;

/** A core Event as client-go's recorder writes one: no eventTime, counted and timestamped. */
function coreEvent(name: string, fields: Obj = {}): Obj {
  return {
    apiVersion: 'v1', kind: 'Event', metadata: { name },
    involvedObject: { kind: 'ServiceAccount', namespace: ns, name: 'default', apiVersion: 'v1' },
    reason: 'Tested', message: 'hello from core', source: { component: 'core-test', host: 'node-1' },
    firstTimestamp: '2025-01-02T03:04:05Z', lastTimestamp: '2025-01-02T03:04:09Z', count: 3, type: 'Normal',
    ...fields,
  };
}

/** An events.orch.io Event with every field the new API requires. */
function groupEvent(name: string, fields: Obj = {}): Obj {
  return {
    apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: { name },
    eventTime: '2025-01-02T03:04:05.123456Z', action: 'Testing', reason: 'ByGroup', note: 'hello from events.orch.io',
    reportingController: 'example.com/tester', reportingInstance: 'tester-1', type: 'Warning',
    regarding: { kind: 'ServiceAccount', namespace: ns, name: 'default', apiVersion: 'v1' },
    ...fields,
  };
}

describe('core/v1 Events, a view of events.orch.io/v1', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await createNamespace(server, ns);
  });
  after(async () => { await server?.dispose(); });

  const post = (path: string, body: Obj) => request(server, path, { method: 'POST', body });
  const put = (path: string, body: Obj) => request(server, path, { method: 'PUT', body });

  it('stores a core Event without eventTime and serves it through both APIs, converted', async () => {
    const created = await post(corePath(), coreEvent('legacy'));
    expectStatus(created, 201, 'create through core');
    assert.equal(created.json.apiVersion, 'v1');
    assert.equal(created.json.kind, 'Event');
    // core/v1's Go type writes eventTime (a MicroTime held by value) and the reporting fields (no omitempty) unset
    assert.deepEqual(Object.keys(created.json), ['kind', 'apiVersion', 'metadata', 'involvedObject', 'reason', 'message', 'source', 'firstTimestamp', 'lastTimestamp', 'count', 'type', 'eventTime', 'reportingComponent', 'reportingInstance']);
    assert.deepEqual([created.json.eventTime, created.json.reportingComponent, created.json.reportingInstance], [null, '', '']);
    assert.equal(created.json.metadata.managedFields[0].apiVersion, 'v1');

    const viaGroup = await request(server, groupPath('legacy'));
    expectStatus(viaGroup, 200, 'read through events.orch.io');
    assert.equal(viaGroup.json.apiVersion, 'events.orch.io/v1');
    assert.equal(viaGroup.json.metadata.resourceVersion, created.json.metadata.resourceVersion);
    assert.equal(viaGroup.json.metadata.uid, created.json.metadata.uid);
    assert.deepEqual(viaGroup.json.regarding, created.json.involvedObject);
    assert.equal(viaGroup.json.note, 'hello from core');
    assert.deepEqual(viaGroup.json.deprecatedSource, { component: 'core-test', host: 'node-1' });
    assert.equal(viaGroup.json.deprecatedFirstTimestamp, '2025-01-02T03:04:05Z');
    assert.equal(viaGroup.json.deprecatedLastTimestamp, '2025-01-02T03:04:09Z');
    assert.equal(viaGroup.json.deprecatedCount, 3);
    assert.equal(viaGroup.json.eventTime, null, 'an old-style event has no eventTime');
    // and the events.k8s.io alias serves it too
    assert.equal((await request(server, `/apis/events.k8s.io/v1/namespaces/${ns}/events/legacy`)).json.note, 'hello from core');
    const listed = await request(server, groupPath());
    assert.ok(listed.json.items.some((i: Obj) => i.metadata.name === 'legacy'));
  });

  it('serves an events.orch.io Event through core/v1 with the core field names', async () => {
    const created = await post(groupPath(), groupEvent('modern', { series: { count: 2, lastObservedTime: '2025-01-02T03:04:07.000001Z' }, related: { kind: 'Node', name: 'n1' } }));
    expectStatus(created, 201, 'create through events.orch.io');
    const core = await request(server, corePath('modern'));
    expectStatus(core, 200, 'read through core');
    assert.equal(core.json.apiVersion, 'v1');
    assert.deepEqual(core.json.involvedObject, created.json.regarding);
    assert.equal(core.json.message, 'hello from events.orch.io');
    assert.equal(core.json.reportingComponent, 'example.com/tester');
    assert.equal(core.json.reportingInstance, 'tester-1');
    assert.equal(core.json.eventTime, '2025-01-02T03:04:05.123456Z');
    assert.equal(core.json.action, 'Testing');
    assert.deepEqual(core.json.series, { count: 2, lastObservedTime: '2025-01-02T03:04:07.000001Z' });
    assert.deepEqual(core.json.related, { kind: 'Node', name: 'n1' });
    assert.equal(core.json.note, undefined);
    const list = await request(server, corePath());
    assert.equal(list.json.kind, 'EventList');
    assert.equal(list.json.apiVersion, 'v1');
    assert.deepEqual(list.json.items.map((i: Obj) => i.metadata.name).sort(), ['legacy', 'modern']);
    const everywhere = await request(server, '/api/v1/events');
    assert.ok(everywhere.json.items.some((i: Obj) => i.metadata.name === 'modern' && i.message === 'hello from events.orch.io'));
  });

  it('round-trips: a core PUT of what it read changes nothing, and a real change is visible through both APIs', async () => {
    const read = (await request(server, corePath('legacy'))).json;
    const same = await put(corePath('legacy'), read);
    expectStatus(same, 200, 'no-op update');
    assert.equal(same.json.metadata.resourceVersion, read.metadata.resourceVersion, 'a no-op update writes nothing');
    const modern = (await request(server, corePath('modern'))).json;
    const unchanged = await put(corePath('modern'), modern);
    assert.equal(unchanged.json.metadata.resourceVersion, modern.metadata.resourceVersion);
    // a change through core keeps the entry the events.orch.io writer has, at its version
    const labelled = await put(corePath('modern'), { ...modern, metadata: { ...modern.metadata, labels: { seen: 'yes' } } });
    expectStatus(labelled, 200, 'label through core');
    assert.deepEqual(labelled.json.metadata.managedFields.map((e: Obj) => e.apiVersion).sort(), ['events.orch.io/v1', 'v1']);
    // core/v1 has no immutable fields: the recorder bumps count and lastTimestamp on the same event
    const bumped = await put(corePath('legacy'), { ...read, count: 4, lastTimestamp: '2025-01-02T03:05:00Z', message: 'again' });
    expectStatus(bumped, 200, 'update through core');
    const viaGroup = (await request(server, groupPath('legacy'))).json;
    assert.equal(viaGroup.deprecatedCount, 4);
    assert.equal(viaGroup.note, 'again');
    assert.equal(viaGroup.metadata.resourceVersion, bumped.json.metadata.resourceVersion);
    // while events.orch.io keeps them immutable
    const refused = await put(groupPath('legacy'), { ...viaGroup, note: 'changed' });
    expectStatus(refused, 422, 'immutable through events.orch.io');
    assert.match(refused.json.message, /message: Invalid value: "changed": field is immutable/);
  });

  it('creates on PUT (201) and deletes with a Success Status naming the core resource', async () => {
    const created = await put(corePath('upserted'), coreEvent('upserted'));
    expectStatus(created, 201, 'create on update');
    const deleted = await request(server, corePath('upserted'), { method: 'DELETE' });
    expectStatus(deleted, 200, 'delete');
    assert.equal(deleted.json.kind, 'Status');
    assert.deepEqual(deleted.json.details, { name: 'upserted', kind: 'events', uid: created.json.metadata.uid });
    expectStatus(await request(server, groupPath('upserted')), 404, 'gone from storage');
    const missing = await request(server, corePath('upserted'));
    assert.equal(missing.json.message, 'events "upserted" not found');
  });

  describe('legacy validation (ValidateEventCreate for core/v1)', () => {
    it('accepts names that are only path segments, and events about cluster objects in default', async () => {
      expectStatus(await post(corePath(), coreEvent('Recorder_Name.17f9a')), 201, 'non-DNS name');
      const nodeEvent = coreEvent('node-event', { involvedObject: { kind: 'Node', name: 'n1' } });
      expectStatus(await post(corePath('', 'default'), nodeEvent), 201, 'cluster object in default');
    });

    it('requires the involved object\'s namespace to match', async () => {
      const other = await post(corePath(), coreEvent('elsewhere', { involvedObject: { kind: 'ServiceAccount', namespace: 'other', name: 'x' } }));
      expectStatus(other, 422, 'namespace mismatch');
      assert.equal(other.json.message, 'Event "elsewhere" is invalid: involvedObject.namespace: Invalid value: "other": does not match event.namespace');
      const clusterScoped = await post(corePath(), coreEvent('cluster', { involvedObject: { kind: 'Node', name: 'n1' } }));
      assert.equal(clusterScoped.json.message, 'Event "cluster" is invalid: involvedObject.namespace: Invalid value: "": does not match event.namespace');
    });

    it('holds events with eventTime to the new API\'s rules, under the internal field names', async () => {
      const bare = await post(corePath(), { metadata: { name: 'half-new' }, eventTime: '2025-01-02T03:04:05.000000Z', involvedObject: { kind: 'Pod', namespace: ns, name: 'p' } });
      expectStatus(bare, 422, 'new-style without reporter');
      assert.equal(bare.json.message, 'Event "half-new" is invalid: [reportingController: Required value, reportingController: Invalid value: "": name part must be non-empty, '
        // IsQualifiedName matches the pattern against an empty name part too
        + 'reportingController: Invalid value: "": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character '
        + '(e.g. \'MyName\',  or \'my.name\',  or \'123-abc\', regex used for validation is \'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\'), '
        + 'reportingInstance: Required value, action: Required value, reason: Required value]');
      const complete = await post(corePath(), {
        metadata: { name: 'new-style' }, eventTime: '2025-01-02T03:04:05.000000Z', involvedObject: { kind: 'Pod', namespace: ns, name: 'p' },
        reportingComponent: 'example.com/ctl', reportingInstance: 'ctl-1', action: 'Check', reason: 'Checked', type: 'Custom',
      });
      // core/v1 does not check the type, as Kubernetes checks it only for events.k8s.io
      expectStatus(complete, 201, 'new-style with reporter');
    });
  });

  it('selects by Kubernetes\' core field labels; source falls back to the reporting controller', async () => {
    const names = async (selector: string) => {
      const res = await request(server, `${corePath()}?fieldSelector=${encodeURIComponent(selector)}`);
      expectStatus(res, 200, selector);
      return res.json.items.map((i: Obj) => i.metadata.name).sort();
    };
    assert.deepEqual(await names('involvedObject.kind=Pod'), ['new-style']);
    assert.deepEqual(await names('involvedObject.name=default,involvedObject.namespace=core-events,involvedObject.apiVersion=v1'), ['Recorder_Name.17f9a', 'legacy', 'modern']);
    assert.deepEqual(await names('source=core-test'), ['Recorder_Name.17f9a', 'legacy']);
    assert.deepEqual(await names('source=example.com/tester'), ['modern']);
    assert.deepEqual(await names('reportingComponent=example.com/tester'), ['modern']);
    assert.deepEqual(await names('type=Warning'), ['modern']);
    assert.deepEqual(await names('reason=Checked,metadata.name=new-style'), ['new-style']);
    const unknown = await request(server, `${corePath()}?fieldSelector=regarding.name%3Dx`);
    expectStatus(unknown, 400, 'an events.orch.io label on core');
    assert.equal(unknown.json.message, 'field label not supported: regarding.name');
  });

  it('prints kubectl\'s event columns for both representations alike', async () => {
    const table = async (path: string) => (await request(server, path, { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } })).json;
    const core = await table(corePath('modern'));
    assert.deepEqual(core.columnDefinitions.map((c: Obj) => c.name), ['Last Seen', 'Type', 'Reason', 'Object', 'Subobject', 'Source', 'Message', 'First Seen', 'Count', 'Name']);
    assert.deepEqual(core.columnDefinitions.map((c: Obj) => c.priority), [0, 0, 0, 0, 1, 1, 0, 1, 1, 1]);
    const cells = core.rows[0].cells;
    assert.deepEqual([cells[1], cells[2], cells[3], cells[5], cells[6], cells[8], cells[9]],
      ['Warning', 'ByGroup', 'serviceaccount/default', 'example.com/tester, tester-1', 'hello from events.orch.io', 2, 'modern']);
    const stored = await table(groupPath('modern'));
    assert.deepEqual(stored.rows[0].cells.slice(1), cells.slice(1));
    const legacy = (await table(corePath('legacy'))).rows[0].cells;
    assert.deepEqual([legacy[5], legacy[8]], ['core-test, node-1', 4]);
  });

  it('watches deliver converted objects: core/v1 Events for events written through either API', async () => {
    const rv = (await request(server, corePath())).json.metadata.resourceVersion;
    const watch = watchUntil(server, `${corePath()}?watch=1&resourceVersion=${rv}`, 'application/json', (b) => b.toString().includes('"watched-group"'));
    await watch.opened;
    expectStatus(await post(corePath(), coreEvent('watched-core')), 201, 'core create');
    expectStatus(await post(groupPath(), groupEvent('watched-group')), 201, 'group create');
    const events = (await watch.done).toString().trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(events.map((e: Obj) => `${e.type} ${e.object.metadata.name}`), ['ADDED watched-core', 'ADDED watched-group']);
    for (const e of events) {
      assert.equal(e.object.apiVersion, 'v1');
      assert.equal(e.object.involvedObject.name, 'default');
      assert.equal(e.object.regarding, undefined);
    }
    assert.equal(events[1].object.message, 'hello from events.orch.io');
  });

  it('watches with a core field selector', async () => {
    const rv = (await request(server, corePath())).json.metadata.resourceVersion;
    const watch = watchUntil(server, `${corePath()}?watch=1&resourceVersion=${rv}&fieldSelector=source%3Dselected`, 'application/json', (b) => b.toString().includes('"selected-2"'));
    await watch.opened;
    await post(corePath(), coreEvent('ignored', { source: { component: 'other' } }));
    await post(groupPath(), groupEvent('selected-2', { reportingController: 'selected' }));
    const names = (await watch.done).toString().trim().split('\n').map((l) => JSON.parse(l).object.metadata.name);
    assert.deepEqual(names, ['selected-2']);
  });

  it('is emptied with its namespace once (the view is not a second store)', async () => {
    const doomed = 'core-events-doomed';
    await createNamespace(server, doomed);
    await createSA(server, doomed, 'sa');
    expectStatus(await post(corePath('', doomed), coreEvent('e1', { involvedObject: { kind: 'ServiceAccount', namespace: doomed, name: 'sa' } })), 201, 'event');
    expectStatus(await request(server, `/api/v1/namespaces/${doomed}`, { method: 'DELETE' }), 200, 'delete namespace');
    for (let i = 0; i < 600 && (await request(server, `/api/v1/namespaces/${doomed}`)).status !== 404; i++) await new Promise((r) => setTimeout(r, 50));
    expectStatus(await request(server, `/api/v1/namespaces/${doomed}`), 404, 'namespace gone');
    assert.deepEqual((await request(server, corePath('', doomed))).json.items, []);
  });
});
