/**
 * CRUD over HTTPS for namespaces, serviceaccounts, secrets and events.orch.io/v1 events, checked
 * against kube-apiserver 1.32's observable behaviour: status codes, Status bodies (reason, code,
 * message, details), metadata, finalizers, namespace lifecycle, managedFields, dry runs, TTL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request, startServer, type HttpResponse, type TestServer } from '../support/server.js';

// ---------------------------------------------------------------------------------------------
// helpers

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const uidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const timePattern = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
const microTimePattern = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

let seq = 0;
/** a DNS-label-safe unique name */
function uniq(prefix: string): string {
  seq++;
  return `${prefix}-${seq}-${Math.random().toString(36).slice(2, 7)}`;
}

const nsPath = (name?: string) => `/api/v1/namespaces${name ? `/${name}` : ''}`;
const saPath = (ns: string, name?: string) => `/api/v1/namespaces/${ns}/serviceaccounts${name ? `/${name}` : ''}`;
const secretPath = (ns: string, name?: string) => `/api/v1/namespaces/${ns}/secrets${name ? `/${name}` : ''}`;
const evPath = (ns: string, name?: string) => `/apis/events.orch.io/v1/namespaces/${ns}/events${name ? `/${name}` : ''}`;

function sa(name: string, metadata: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, ...metadata }, ...extra };
}

function secret(name: string, fields: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, ...metadata }, ...fields };
}

function event(ns: string, name: string, fields: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) {
  return {
    apiVersion: 'events.orch.io/v1',
    kind: 'Event',
    metadata: { name, ...metadata },
    eventTime: '2024-05-01T10:00:00.123456Z',
    action: 'Testing',
    reason: 'Created',
    note: 'an event for the test suite',
    reportingController: 'example.com/tester',
    reportingInstance: 'tester-1',
    type: 'Normal',
    regarding: { apiVersion: 'v1', kind: 'ServiceAccount', namespace: ns, name: 'default' },
    ...fields,
  };
}

/**
 * A DELETE carrying DeleteOptions. Node sends a DELETE body without Content-Length unless told,
 * which no HTTP/1.1 server can frame, so the length is given explicitly.
 */
function deleteWith(server: TestServer, path: string, options: object): Promise<HttpResponse> {
  const body = JSON.stringify(options);
  return request(server, path, { method: 'DELETE', body, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } });
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

async function eventually<T>(what: string, fn: () => Promise<T | undefined | false | null>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false && v !== null) return v as T;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

function expectStatus(res: HttpResponse, code: number, reason: string | undefined, message?: string): void {
  assert.equal(res.status, code, `expected HTTP ${code}, got ${res.status}: ${res.body}`);
  assert.equal(res.json?.kind, 'Status', res.body);
  assert.equal(res.json.apiVersion, 'v1');
  assert.equal(res.json.status, 'Failure');
  assert.equal(res.json.code, code);
  assert.equal(res.json.reason, reason);
  if (message !== undefined) assert.equal(res.json.message, message);
}

interface Cause { field?: string; reason?: string; message?: string }
function findCause(res: HttpResponse, field: string, reason?: string): Cause {
  const causes: Cause[] = res.json?.details?.causes ?? [];
  const found = causes.find((c) => c.field === field && (reason === undefined || c.reason === reason));
  assert.ok(found, `no cause for field ${field}${reason ? ` (${reason})` : ''} in ${res.body}`);
  return found;
}

// ---------------------------------------------------------------------------------------------

describe('CRUD of namespaces, serviceaccounts, secrets and events', () => {
  let server: TestServer;
  before(async () => { server = await startServer(); });
  after(async () => { await server?.dispose(); });

  async function mkns(prefix = 'ns'): Promise<string> {
    const name = uniq(prefix);
    const res = await request(server, nsPath(), { method: 'POST', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
    assert.equal(res.status, 201, res.body);
    return name;
  }

  async function post(path: string, body: unknown, query = ''): Promise<HttpResponse> {
    return request(server, `${path}${query}`, { method: 'POST', body: body as object });
  }

  async function listRv(path = '/api/v1/serviceaccounts'): Promise<number> {
    const res = await request(server, path);
    assert.equal(res.status, 200, res.body);
    return Number(res.json.metadata.resourceVersion);
  }

  /** waits until no writes happen for a while (controllers of earlier tests are done) */
  async function quiesce(): Promise<number> {
    let last = await listRv();
    for (let i = 0; i < 100; i++) {
      await sleep(300);
      const now = await listRv();
      if (now === last) return now;
      last = now;
    }
    throw new Error('the server never became quiet');
  }

  // ---- namespaces ------------------------------------------------------------------------------

  describe('namespaces', () => {
    it('creates a namespace with uid, timestamps, numeric resourceVersion, the name label and the orch finalizer', async () => {
      const name = uniq('nsc');
      const res = await post(nsPath(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
      assert.equal(res.status, 201, res.body);
      assert.equal(res.headers['content-type'], 'application/json');
      assert.equal(res.json.kind, 'Namespace');
      assert.equal(res.json.apiVersion, 'v1');
      assert.equal(res.json.metadata.name, name);
      assert.equal(res.json.metadata.namespace, undefined);
      assert.match(res.json.metadata.uid, uidPattern);
      assert.match(res.json.metadata.creationTimestamp, timePattern);
      assert.match(res.json.metadata.resourceVersion, /^[1-9]\d*$/);
      assert.deepEqual(res.json.metadata.labels, { 'orch.io/metadata.name': name });
      assert.deepEqual(res.json.spec, { finalizers: ['orch'] });
      assert.deepEqual(res.json.status, { phase: 'Active' });
      // the writer owns what it sent and what defaulting set (the name label), not the finalizer the strategy added
      assert.deepEqual(res.json.metadata.managedFields.map((e: { fieldsV1: unknown }) => e.fieldsV1), [{ 'f:metadata': { 'f:labels': { '.': {}, 'f:orch.io/metadata.name': {} } } }]);

      const got = await request(server, nsPath(name));
      assert.equal(got.status, 200);
      assert.deepEqual(got.json, res.json);
    });

    it('clears metadata.namespace on a cluster-scoped object instead of failing', async () => {
      const name = uniq('nsx');
      const res = await post(nsPath(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name, namespace: 'default' } });
      assert.equal(res.status, 201, res.body);
      assert.equal(res.json.metadata.namespace, undefined);
    });

    it('answers 409 AlreadyExists for a second namespace of the same name', async () => {
      const name = await mkns();
      const res = await post(nsPath(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
      expectStatus(res, 409, 'AlreadyExists', `namespaces "${name}" already exists`);
      assert.deepEqual(res.json.details, { name, kind: 'namespaces' });
    });

    it('answers 404 NotFound for a missing namespace', async () => {
      const res = await request(server, nsPath('no-such-ns'));
      expectStatus(res, 404, 'NotFound', 'namespaces "no-such-ns" not found');
      assert.deepEqual(res.json.details, { name: 'no-such-ns', kind: 'namespaces' });
    });

    it('gives every new namespace a default ServiceAccount', async () => {
      const ns = await mkns();
      const got = await eventually('the default ServiceAccount', async () => {
        const r = await request(server, saPath(ns, 'default'));
        return r.status === 200 ? r : undefined;
      });
      assert.equal(got.json.kind, 'ServiceAccount');
      assert.equal(got.json.metadata.name, 'default');
      assert.equal(got.json.metadata.namespace, ns);
    });

    it('refuses to delete the immortal namespaces with 403 Forbidden', async () => {
      for (const name of ['default', 'orch-system', 'orch-public']) {
        const res = await request(server, nsPath(name), { method: 'DELETE' });
        expectStatus(res, 403, 'Forbidden', `namespaces "${name}" is forbidden: this namespace may not be deleted`);
        assert.deepEqual(res.json.details, { name, kind: 'namespaces' });
        const still = await request(server, nsPath(name));
        assert.equal(still.status, 200);
        assert.equal(still.json.metadata.deletionTimestamp, undefined);
      }
    });

    it('refuses creation in a missing namespace with 404 namespaces "x" not found', async () => {
      const missing = uniq('gone');
      for (const [path, body] of [
        [saPath(missing), sa('a')],
        [secretPath(missing), secret('a')],
        [evPath(missing), event(missing, 'a')],
      ] as const) {
        const res = await post(path, body);
        expectStatus(res, 404, 'NotFound', `namespaces "${missing}" not found`);
        assert.deepEqual(res.json.details, { name: missing, kind: 'namespaces' });
      }
    });

    it('lists a missing namespace as empty and gets from it as a plain NotFound of the resource', async () => {
      const missing = uniq('gone');
      const list = await request(server, saPath(missing));
      assert.equal(list.status, 200, list.body);
      assert.equal(list.json.kind, 'ServiceAccountList');
      assert.deepEqual(list.json.items, []);
      const get = await request(server, saPath(missing, 'x'));
      expectStatus(get, 404, 'NotFound', 'serviceaccounts "x" not found');
    });

    it('deletes a namespace: 200 Terminating, 403 NamespaceTerminating for new content, then everything is gone', async () => {
      const ns = await mkns('term');
      // a ServiceAccount with a finalizer keeps the namespace terminating until the test lets go
      assert.equal((await post(saPath(ns), sa('held', { finalizers: ['example.com/hold'] }))).status, 201);
      assert.equal((await post(secretPath(ns), secret('content', { stringData: { a: 'b' } }))).status, 201);
      assert.equal((await post(evPath(ns), event(ns, 'content'))).status, 201);

      const del = await request(server, nsPath(ns), { method: 'DELETE' });
      assert.equal(del.status, 200, del.body);
      assert.equal(del.json.kind, 'Namespace');
      assert.equal(del.json.metadata.name, ns);
      assert.equal(del.json.status.phase, 'Terminating');
      assert.match(del.json.metadata.deletionTimestamp, timePattern);
      assert.deepEqual(del.json.spec.finalizers, ['orch']);

      const got = await request(server, nsPath(ns));
      assert.equal(got.status, 200);
      assert.equal(got.json.status.phase, 'Terminating');

      // creating anything in a terminating namespace is Forbidden with a NamespaceTerminating cause
      const cases: Array<[string, object, string, string | undefined]> = [
        [saPath(ns), sa('late'), 'serviceaccounts', undefined],
        [secretPath(ns), secret('late'), 'secrets', undefined],
        [evPath(ns), event(ns, 'late'), 'events', 'events.orch.io'],
      ];
      for (const [path, body, resource, group] of cases) {
        const res = await post(path, body);
        const qualified = group ? `${resource}.${group}` : resource;
        expectStatus(res, 403, 'Forbidden', `${qualified} "late" is forbidden: unable to create new content in namespace ${ns} because it is being terminated`);
        assert.deepEqual(res.json.details, {
          name: 'late',
          ...(group ? { group } : {}),
          kind: resource,
          causes: [{ reason: 'NamespaceTerminating', message: `namespace ${ns} is being terminated`, field: 'metadata.namespace' }],
        });
      }

      // the namespace controller removes the content; the held ServiceAccount only gets a deletionTimestamp
      await eventually('the secret to be removed by the namespace controller', async () => (await request(server, secretPath(ns, 'content'))).status === 404);
      await eventually('the event to be removed by the namespace controller', async () => (await request(server, evPath(ns, 'content'))).status === 404);
      const held = await eventually('the held ServiceAccount to be terminating', async () => {
        const r = await request(server, saPath(ns, 'held'));
        return r.status === 200 && r.json.metadata.deletionTimestamp ? r : undefined;
      });
      assert.equal((await request(server, nsPath(ns))).json.status.phase, 'Terminating');

      // an update of existing content in a terminating namespace is allowed; removing the last finalizer frees it
      const freed = { ...held.json, metadata: { ...held.json.metadata, finalizers: [] } };
      const put = await request(server, saPath(ns, 'held'), { method: 'PUT', body: freed });
      assert.equal(put.status, 200, put.body);

      await eventually('the namespace to be removed', async () => (await request(server, nsPath(ns))).status === 404);
      const gone = await request(server, nsPath(ns));
      expectStatus(gone, 404, 'NotFound', `namespaces "${ns}" not found`);
      const left = await request(server, saPath(ns));
      assert.deepEqual(left.json.items, []);
      const leftEvents = await request(server, evPath(ns));
      assert.deepEqual(leftEvents.json.items, []);
    });

    it('removes an empty namespace after DELETE within a few seconds', async () => {
      const ns = await mkns('quick');
      assert.equal((await post(secretPath(ns), secret('s1'))).status, 201);
      const del = await request(server, nsPath(ns), { method: 'DELETE' });
      assert.equal(del.status, 200, del.body);
      assert.equal(del.json.status.phase, 'Terminating');
      await eventually('the namespace to be removed', async () => (await request(server, nsPath(ns))).status === 404);
      assert.equal((await request(server, secretPath(ns, 's1'))).status, 404);
    });
  });

  // ---- serviceaccounts ------------------------------------------------------------------------

  describe('serviceaccounts', () => {
    it('creates with 201, uid, creationTimestamp and increasing numeric resourceVersions; GET returns the same object', async () => {
      const ns = await mkns();
      const first = await post(saPath(ns), sa('first', {}, { automountServiceAccountToken: false }));
      assert.equal(first.status, 201, first.body);
      assert.equal(first.headers['content-type'], 'application/json');
      assert.equal(first.json.kind, 'ServiceAccount');
      assert.equal(first.json.apiVersion, 'v1');
      assert.equal(first.json.metadata.name, 'first');
      assert.equal(first.json.metadata.namespace, ns);
      assert.match(first.json.metadata.uid, uidPattern);
      assert.match(first.json.metadata.creationTimestamp, timePattern);
      assert.match(first.json.metadata.resourceVersion, /^[1-9]\d*$/);
      assert.equal(first.json.metadata.generation, undefined);
      assert.equal(first.json.automountServiceAccountToken, false);

      const second = await post(saPath(ns), sa('second'));
      assert.equal(second.status, 201);
      assert.ok(Number(second.json.metadata.resourceVersion) > Number(first.json.metadata.resourceVersion),
        `resourceVersion ${second.json.metadata.resourceVersion} should be above ${first.json.metadata.resourceVersion}`);
      assert.notEqual(second.json.metadata.uid, first.json.metadata.uid);

      const got = await request(server, saPath(ns, 'first'));
      assert.equal(got.status, 200);
      assert.deepEqual(got.json, first.json);
    });

    it('answers 409 AlreadyExists for a duplicate name', async () => {
      const ns = await mkns();
      assert.equal((await post(saPath(ns), sa('dup'))).status, 201);
      const res = await post(saPath(ns), sa('dup'));
      expectStatus(res, 409, 'AlreadyExists', 'serviceaccounts "dup" already exists');
      assert.deepEqual(res.json.details, { name: 'dup', kind: 'serviceaccounts' });
    });

    it('answers 404 NotFound for a missing name', async () => {
      const ns = await mkns();
      const res = await request(server, saPath(ns, 'nope'));
      expectStatus(res, 404, 'NotFound', 'serviceaccounts "nope" not found');
      assert.deepEqual(res.json.details, { name: 'nope', kind: 'serviceaccounts' });
    });

    it('validates the name: 422 Invalid for a bad name and for none at all', async () => {
      const ns = await mkns();
      const bad = await post(saPath(ns), sa('Bad_Name'));
      assert.equal(bad.status, 422, bad.body);
      assert.equal(bad.json.reason, 'Invalid');
      assert.equal(bad.json.code, 422);
      assert.match(bad.json.message, /^ServiceAccount "Bad_Name" is invalid: metadata\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of/);
      assert.equal(bad.json.details.name, 'Bad_Name');
      assert.equal(bad.json.details.kind, 'ServiceAccount');
      assert.equal(bad.json.details.group, undefined);
      const c = findCause(bad, 'metadata.name', 'FieldValueInvalid');
      assert.match(c.message ?? '', /^Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters/);

      const none = await post(saPath(ns), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: {} });
      expectStatus(none, 422, 'Invalid', 'ServiceAccount "" is invalid: metadata.name: Required value: name or generateName is required');
      assert.deepEqual(none.json.details.causes, [{ reason: 'FieldValueRequired', message: 'Required value: name or generateName is required', field: 'metadata.name' }]);
    });

    it('lists in a namespace and across namespaces as ServiceAccountList, ordered by namespace and name', async () => {
      const nsA = await mkns('lista');
      const nsB = await mkns('listb');
      for (const [ns, name] of [[nsA, 'zeta'], [nsA, 'alpha'], [nsB, 'mid']]) {
        assert.equal((await post(saPath(ns), sa(name))).status, 201);
      }
      const last = await post(saPath(nsB), sa('beta'));
      assert.equal(last.status, 201);

      const inA = await request(server, saPath(nsA));
      assert.equal(inA.status, 200);
      assert.equal(inA.json.kind, 'ServiceAccountList');
      assert.equal(inA.json.apiVersion, 'v1');
      assert.match(inA.json.metadata.resourceVersion, /^\d+$/);
      assert.ok(Number(inA.json.metadata.resourceVersion) >= Number(last.json.metadata.resourceVersion));
      const namesA = inA.json.items.map((i: any) => i.metadata.name).filter((n: string) => n !== 'default'); // eslint-disable-line @typescript-eslint/no-explicit-any
      assert.deepEqual(namesA, ['alpha', 'zeta']);
      for (const item of inA.json.items) assert.equal(item.metadata.namespace, nsA);

      const all = await request(server, '/api/v1/serviceaccounts');
      assert.equal(all.status, 200);
      assert.equal(all.json.kind, 'ServiceAccountList');
      assert.equal(all.json.apiVersion, 'v1');
      const keys = all.json.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`); // eslint-disable-line @typescript-eslint/no-explicit-any
      for (const k of [`${nsA}/alpha`, `${nsA}/zeta`, `${nsB}/beta`, `${nsB}/mid`]) assert.ok(keys.includes(k), `${k} missing from ${keys.join(', ')}`);
      const ours = keys.filter((k: string) => k.startsWith(`${nsA}/`) || k.startsWith(`${nsB}/`)).filter((k: string) => !k.endsWith('/default'));
      assert.deepEqual(ours, [`${nsA}/alpha`, `${nsA}/zeta`, `${nsB}/beta`, `${nsB}/mid`]);
      const sorted = [...keys].sort();
      assert.deepEqual(keys, sorted, 'items are ordered by namespace/name as kube-apiserver lists them');
    });

    it('lists items without kind and apiVersion, as kube-apiserver encodes typed lists', async () => {
      const ns = await mkns();
      assert.equal((await post(saPath(ns), sa('one'))).status, 201);
      const res = await request(server, saPath(ns));
      const item = res.json.items.find((i: { metadata: { name: string } }) => i.metadata.name === 'one');
      assert.ok(item);
      assert.equal(item.kind, undefined);
      assert.equal(item.apiVersion, undefined);
    });

    it('filters a list with a label selector and with the metadata.name field selector', async () => {
      const ns = await mkns();
      assert.equal((await post(saPath(ns), sa('l1', { labels: { tier: 'web' } }))).status, 201);
      assert.equal((await post(saPath(ns), sa('l2', { labels: { tier: 'db' } }))).status, 201);
      const byLabel = await request(server, `${saPath(ns)}?labelSelector=${encodeURIComponent('tier=web')}`);
      assert.equal(byLabel.status, 200);
      assert.deepEqual(byLabel.json.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['l1']);
      const setBased = await request(server, `${saPath(ns)}?labelSelector=${encodeURIComponent('tier in (db,cache)')}`);
      assert.deepEqual(setBased.json.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['l2']);
      const byField = await request(server, `${saPath(ns)}?fieldSelector=${encodeURIComponent('metadata.name=l2')}`);
      assert.equal(byField.status, 200);
      assert.deepEqual(byField.json.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['l2']);
    });

    it('updates with PUT: 200 and a higher resourceVersion; a stale resourceVersion is 409 Conflict', async () => {
      const ns = await mkns();
      const created = await post(saPath(ns), sa('x'));
      assert.equal(created.status, 201);
      const body = { ...created.json, metadata: { ...created.json.metadata, labels: { stage: 'one' } } };
      const updated = await request(server, saPath(ns, 'x'), { method: 'PUT', body });
      assert.equal(updated.status, 200, updated.body);
      assert.deepEqual(updated.json.metadata.labels, { stage: 'one' });
      assert.ok(Number(updated.json.metadata.resourceVersion) > Number(created.json.metadata.resourceVersion));
      assert.equal(updated.json.metadata.uid, created.json.metadata.uid);
      assert.equal(updated.json.metadata.creationTimestamp, created.json.metadata.creationTimestamp);

      const stale = { ...created.json, metadata: { ...created.json.metadata, labels: { stage: 'two' } } };
      const conflict = await request(server, saPath(ns, 'x'), { method: 'PUT', body: stale });
      expectStatus(conflict, 409, 'Conflict',
        'Operation cannot be fulfilled on serviceaccounts "x": the object has been modified; please apply your changes to the latest version and try again');
      assert.deepEqual(conflict.json.details, { name: 'x', kind: 'serviceaccounts' });
      const after = await request(server, saPath(ns, 'x'));
      assert.deepEqual(after.json.metadata.labels, { stage: 'one' });
    });

    it('updates unconditionally when the body has no resourceVersion', async () => {
      const ns = await mkns();
      const created = await post(saPath(ns), sa('u'));
      const first = await request(server, saPath(ns, 'u'), { method: 'PUT', body: { ...created.json, metadata: { ...created.json.metadata, labels: { a: '1' } } } });
      assert.equal(first.status, 200);
      const metadata = { ...created.json.metadata, labels: { a: '2' } };
      delete metadata.resourceVersion;
      const res = await request(server, saPath(ns, 'u'), { method: 'PUT', body: { ...created.json, metadata } });
      assert.equal(res.status, 200, res.body);
      assert.deepEqual(res.json.metadata.labels, { a: '2' });
      assert.ok(Number(res.json.metadata.resourceVersion) > Number(first.json.metadata.resourceVersion));
    });

    it('answers 404 to a PUT of a missing ServiceAccount (no create on update)', async () => {
      const ns = await mkns();
      const res = await request(server, saPath(ns, 'ghost'), { method: 'PUT', body: sa('ghost') });
      expectStatus(res, 404, 'NotFound', 'serviceaccounts "ghost" not found');
      assert.deepEqual(res.json.details, { name: 'ghost', kind: 'serviceaccounts' });
      assert.equal((await request(server, saPath(ns, 'ghost'))).status, 404);
    });

    it('keeps uid and creationTimestamp: a foreign uid is a 409 precondition failure, a new creationTimestamp is ignored', async () => {
      const ns = await mkns();
      const created = await post(saPath(ns), sa('imm'));
      const uid = created.json.metadata.uid as string;
      const otherUid = '00000000-0000-4000-8000-000000000000';
      const res = await request(server, saPath(ns, 'imm'), { method: 'PUT', body: { ...created.json, metadata: { ...created.json.metadata, uid: otherUid } } });
      assert.equal(res.status, 409, res.body);
      assert.equal(res.json.reason, 'Conflict');
      assert.match(res.json.message, /^Operation cannot be fulfilled on serviceaccounts "imm": /);
      assert.ok(res.json.message.includes(`Precondition failed: UID in precondition: ${otherUid}, UID in object meta: ${uid}`), res.json.message);
      assert.equal(res.json.details.name, 'imm');
      assert.equal(res.json.details.kind, 'serviceaccounts');

      const ts = await request(server, saPath(ns, 'imm'), { method: 'PUT', body: { ...created.json, metadata: { ...created.json.metadata, creationTimestamp: '2001-01-01T00:00:00Z' } } });
      assert.equal(ts.status, 200, ts.body);
      assert.equal(ts.json.metadata.creationTimestamp, created.json.metadata.creationTimestamp);
      assert.equal(ts.json.metadata.uid, uid);
    });

    it('answers 400 when PUT changes the name or namespace of the object against the URL', async () => {
      const ns = await mkns();
      const created = await post(saPath(ns), sa('orig'));
      const renamed = await request(server, saPath(ns, 'orig'), { method: 'PUT', body: { ...created.json, metadata: { ...created.json.metadata, name: 'renamed' } } });
      expectStatus(renamed, 400, 'BadRequest', 'the name of the object (renamed) does not match the name on the URL (orig)');
      const moved = await request(server, saPath(ns, 'orig'), { method: 'PUT', body: { ...created.json, metadata: { ...created.json.metadata, namespace: 'default' } } });
      expectStatus(moved, 400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent on the request');
    });

    it('DELETE returns the deleted ServiceAccount; afterwards GET is 404', async () => {
      const ns = await mkns();
      const created = await post(saPath(ns), sa('gone'));
      const del = await request(server, saPath(ns, 'gone'), { method: 'DELETE' });
      assert.equal(del.status, 200, del.body);
      assert.equal(del.json.kind, 'ServiceAccount');
      assert.equal(del.json.apiVersion, 'v1');
      assert.equal(del.json.metadata.name, 'gone');
      assert.equal(del.json.metadata.uid, created.json.metadata.uid);
      expectStatus(await request(server, saPath(ns, 'gone')), 404, 'NotFound', 'serviceaccounts "gone" not found');
      const again = await request(server, saPath(ns, 'gone'), { method: 'DELETE' });
      expectStatus(again, 404, 'NotFound', 'serviceaccounts "gone" not found');
    });

    it('accepts a DeleteOptions body and honours matching preconditions', async () => {
      const ns = await mkns();
      const created = await post(saPath(ns), sa('pre'));
      const del = await deleteWith(server, saPath(ns, 'pre'),
        { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: created.json.metadata.uid, resourceVersion: created.json.metadata.resourceVersion } });
      assert.equal(del.status, 200, del.body);
      assert.equal((await request(server, saPath(ns, 'pre'))).status, 404);
    });

    it('refuses a DELETE whose preconditions do not match with 409 Conflict', async () => {
      const ns = await mkns();
      const created = await post(saPath(ns), sa('keep'));
      const uid = created.json.metadata.uid as string;
      const rv = created.json.metadata.resourceVersion as string;
      const wrongUid = '11111111-1111-4111-8111-111111111111';

      const byUid = await deleteWith(server, saPath(ns, 'keep'), { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: wrongUid } });
      expectStatus(byUid, 409, 'Conflict',
        `Operation cannot be fulfilled on ServiceAccount "keep": the UID in the precondition (${wrongUid}) does not match the UID in record (${uid}). The object might have been deleted and then recreated`);
      assert.deepEqual(byUid.json.details, { name: 'keep', kind: 'ServiceAccount' });

      const byRv = await deleteWith(server, saPath(ns, 'keep'), { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { resourceVersion: '1' } });
      expectStatus(byRv, 409, 'Conflict',
        `Operation cannot be fulfilled on ServiceAccount "keep": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${rv}). The object might have been modified`);
      assert.deepEqual(byRv.json.details, { name: 'keep', kind: 'ServiceAccount' });

      assert.equal((await request(server, saPath(ns, 'keep'))).status, 200);
    });

    it('generates names from generateName', async () => {
      const ns = await mkns();
      const res = await post(saPath(ns), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { generateName: 'robot-' } });
      assert.equal(res.status, 201, res.body);
      assert.match(res.json.metadata.name, /^robot-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      assert.equal(res.json.metadata.generateName, 'robot-');
      const other = await post(saPath(ns), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { generateName: 'robot-' } });
      assert.equal(other.status, 201);
      assert.notEqual(other.json.metadata.name, res.json.metadata.name);
      const got = await request(server, saPath(ns, res.json.metadata.name));
      assert.equal(got.status, 200);
    });

    it('deletes a collection selected by labelSelector and returns the deleted items', async () => {
      const ns = await mkns();
      for (const [name, labels] of [['c1', { batch: 'x' }], ['c2', { batch: 'x' }], ['c3', { batch: 'y' }]] as const) {
        assert.equal((await post(saPath(ns), sa(name, { labels }))).status, 201);
      }
      const res = await request(server, `${saPath(ns)}?labelSelector=batch%3Dx`, { method: 'DELETE' });
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.kind, 'ServiceAccountList');
      assert.deepEqual(res.json.items.map((i: { metadata: { name: string } }) => i.metadata.name).sort(), ['c1', 'c2']);
      assert.equal((await request(server, saPath(ns, 'c1'))).status, 404);
      assert.equal((await request(server, saPath(ns, 'c2'))).status, 404);
      assert.equal((await request(server, saPath(ns, 'c3'))).status, 200);
    });

    it('with metadata.finalizers: DELETE sets deletionTimestamp and keeps the object until the last finalizer is removed', async () => {
      const ns = await mkns();
      const created = await post(saPath(ns), sa('fin', { finalizers: ['example.com/a', 'example.com/b'] }));
      assert.equal(created.status, 201);
      assert.deepEqual(created.json.metadata.finalizers, ['example.com/a', 'example.com/b']);

      const del = await request(server, saPath(ns, 'fin'), { method: 'DELETE' });
      assert.equal(del.status, 200, del.body);
      assert.equal(del.json.kind, 'ServiceAccount');
      assert.match(del.json.metadata.deletionTimestamp, timePattern);
      assert.equal(del.json.metadata.deletionGracePeriodSeconds, 0);

      const got = await request(server, saPath(ns, 'fin'));
      assert.equal(got.status, 200);
      assert.equal(got.json.metadata.deletionTimestamp, del.json.metadata.deletionTimestamp);
      assert.deepEqual(got.json.metadata.finalizers, ['example.com/a', 'example.com/b']);

      // removing one finalizer keeps it
      const one = await request(server, saPath(ns, 'fin'), { method: 'PUT', body: { ...got.json, metadata: { ...got.json.metadata, finalizers: ['example.com/b'] } } });
      assert.equal(one.status, 200, one.body);
      assert.equal(one.json.metadata.deletionTimestamp, del.json.metadata.deletionTimestamp);
      assert.equal((await request(server, saPath(ns, 'fin'))).status, 200);

      // removing the last one removes the object; the PUT still answers 200 with the object
      const last = await request(server, saPath(ns, 'fin'), { method: 'PUT', body: { ...one.json, metadata: { ...one.json.metadata, finalizers: [] } } });
      assert.equal(last.status, 200, last.body);
      assert.equal(last.json.kind, 'ServiceAccount');
      assert.equal(last.json.metadata.name, 'fin');
      expectStatus(await request(server, saPath(ns, 'fin')), 404, 'NotFound', 'serviceaccounts "fin" not found');
    });

    it('records managedFields: operation Update, manager from fieldManager or the User-Agent prefix, FieldsV1', async () => {
      const ns = await mkns();
      const created = await post(saPath(ns), sa('mf', { labels: { a: '1' } }, { automountServiceAccountToken: true }), '?fieldManager=tester');
      assert.equal(created.status, 201, created.body);
      const entries = created.json.metadata.managedFields;
      assert.equal(entries.length, 1);
      const [entry] = entries;
      assert.equal(entry.manager, 'tester');
      assert.equal(entry.operation, 'Update');
      assert.equal(entry.apiVersion, 'v1');
      assert.equal(entry.fieldsType, 'FieldsV1');
      assert.match(entry.time, timePattern);
      assert.deepEqual(entry.fieldsV1, { 'f:automountServiceAccountToken': {}, 'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } } });

      // a second writer adds a label: its entry owns only that label
      const put = await request(server, `${saPath(ns, 'mf')}?fieldManager=editor`, {
        method: 'PUT', body: { ...created.json, metadata: { ...created.json.metadata, labels: { a: '1', b: '2' } } },
      });
      assert.equal(put.status, 200, put.body);
      const byManager = new Map<string, any>(put.json.metadata.managedFields.map((e: any) => [e.manager, e])); // eslint-disable-line @typescript-eslint/no-explicit-any
      assert.deepEqual([...byManager.keys()].sort(), ['editor', 'tester']);
      assert.deepEqual(byManager.get('tester').fieldsV1, { 'f:automountServiceAccountToken': {}, 'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } } });
      assert.deepEqual(byManager.get('editor').fieldsV1, { 'f:metadata': { 'f:labels': { 'f:b': {} } } });
      assert.equal(byManager.get('editor').operation, 'Update');

      // without fieldManager the manager is the User-Agent up to the first '/'
      const ua = await request(server, saPath(ns), {
        method: 'POST', body: sa('ua', { annotations: { note: 'x' } }),
        headers: { 'User-Agent': 'kubectl-create/v1.32.0 (linux/amd64) kubernetes/70d3cc9' },
      });
      assert.equal(ua.status, 201, ua.body);
      assert.equal(ua.json.metadata.managedFields.length, 1);
      assert.equal(ua.json.metadata.managedFields[0].manager, 'kubectl-create');
      assert.deepEqual(ua.json.metadata.managedFields[0].fieldsV1, { 'f:metadata': { 'f:annotations': { '.': {}, 'f:note': {} } } });
    });

    it('dryRun=All on create, update and delete validates, stores nothing and consumes no resourceVersion', async () => {
      const ns = await mkns('dry');
      const real = await post(saPath(ns), sa('real'));
      assert.equal(real.status, 201);
      await eventually('the default ServiceAccount', async () => (await request(server, saPath(ns, 'default'))).status === 200);
      const before = await quiesce();

      const create = await post(saPath(ns), sa('dry', { labels: { d: '1' } }), '?dryRun=All');
      assert.equal(create.status, 201, create.body);
      assert.equal(create.json.metadata.name, 'dry');
      assert.deepEqual(create.json.metadata.labels, { d: '1' });
      assert.ok(!create.json.metadata.resourceVersion, `a dry-run create has no resourceVersion, got ${create.json.metadata.resourceVersion}`);
      assert.equal((await request(server, saPath(ns, 'dry'))).status, 404);

      // a dry run is still validated
      const invalid = await post(saPath(ns), sa('Not_Valid'), '?dryRun=All');
      assert.equal(invalid.status, 422);

      const update = await request(server, `${saPath(ns, 'real')}?dryRun=All`, {
        method: 'PUT', body: { ...real.json, metadata: { ...real.json.metadata, labels: { changed: 'yes' } } },
      });
      assert.equal(update.status, 200, update.body);
      assert.deepEqual(update.json.metadata.labels, { changed: 'yes' });
      const afterUpdate = await request(server, saPath(ns, 'real'));
      assert.equal(afterUpdate.json.metadata.labels, undefined);
      assert.equal(afterUpdate.json.metadata.resourceVersion, real.json.metadata.resourceVersion);

      const del = await request(server, `${saPath(ns, 'real')}?dryRun=All`, { method: 'DELETE' });
      assert.equal(del.status, 200, del.body);
      assert.equal(del.json.metadata.name, 'real');
      assert.equal((await request(server, saPath(ns, 'real'))).status, 200);

      const collection = await request(server, `${saPath(ns)}?dryRun=All`, { method: 'DELETE' });
      assert.equal(collection.status, 200, collection.body);
      assert.equal((await request(server, saPath(ns, 'real'))).status, 200);

      const secretDry = await post(secretPath(ns), secret('sd', { stringData: { a: 'b' } }), '?dryRun=All');
      assert.equal(secretDry.status, 201, secretDry.body);
      assert.equal((await request(server, secretPath(ns, 'sd'))).status, 404);
      const eventDry = await post(evPath(ns), event(ns, 'ed'), '?dryRun=All');
      assert.equal(eventDry.status, 201, eventDry.body);
      assert.equal((await request(server, evPath(ns, 'ed'))).status, 404);

      const after = await listRv();
      assert.equal(after, before, 'dry runs must not consume a resourceVersion');
    });

    it('dryRun=All create of an existing name is 409 AlreadyExists, as a real create would be', async () => {
      const ns = await mkns();
      assert.equal((await post(saPath(ns), sa('taken'))).status, 201);
      const dup = await post(saPath(ns), sa('taken'), '?dryRun=All');
      expectStatus(dup, 409, 'AlreadyExists', 'serviceaccounts "taken" already exists');
    });

    it('dryRun=All delete of a missing object is 404 NotFound', async () => {
      const ns = await mkns();
      const res = await request(server, `${saPath(ns, 'absent')}?dryRun=All`, { method: 'DELETE' });
      expectStatus(res, 404, 'NotFound', 'serviceaccounts "absent" not found');
    });
  });

  // ---- secrets --------------------------------------------------------------------------------

  describe('secrets', () => {
    it('merges stringData into data as base64, never stores stringData, defaults type to Opaque', async () => {
      const ns = await mkns();
      const res = await post(secretPath(ns), secret('creds', { data: { password: b64('s3cret'), user: b64('old') }, stringData: { user: 'admin' } }));
      assert.equal(res.status, 201, res.body);
      assert.equal(res.json.kind, 'Secret');
      assert.equal(res.json.type, 'Opaque');
      assert.deepEqual(res.json.data, { password: b64('s3cret'), user: b64('admin') });
      assert.equal(res.json.stringData, undefined);
      const got = await request(server, secretPath(ns, 'creds'));
      assert.equal(got.status, 200);
      assert.deepEqual(got.json.data, { password: b64('s3cret'), user: b64('admin') });
      assert.equal(got.json.stringData, undefined);
      assert.equal(got.json.type, 'Opaque');
      // the defaulted type is owned by the writer
      assert.deepEqual(got.json.metadata.managedFields[0].fieldsV1, { 'f:data': { '.': {}, 'f:password': {}, 'f:user': {} }, 'f:type': {} });
    });

    it('answers 400 BadRequest for data that is not base64', async () => {
      const ns = await mkns();
      const res = await post(secretPath(ns), secret('bad', { data: { k: '!!!not-base64' } }));
      expectStatus(res, 400, 'BadRequest', 'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 0');
      assert.equal((await request(server, secretPath(ns, 'bad'))).status, 404);
    });

    it('answers 422 for a data key that is not a valid config key', async () => {
      const ns = await mkns();
      const res = await post(secretPath(ns), secret('badkey', { data: { 'bad key': b64('v') } }));
      assert.equal(res.status, 422, res.body);
      assert.equal(res.json.reason, 'Invalid');
      assert.equal(res.json.details.kind, 'Secret');
      const c = findCause(res, 'data[bad key]', 'FieldValueInvalid');
      assert.match(c.message ?? '', /^Invalid value: "bad key": a valid config key must consist of alphanumeric characters, '-', '_' or '\.'/);
    });

    it('with immutable: true refuses changes to data with 422 but allows metadata changes', async () => {
      const ns = await mkns();
      const created = await post(secretPath(ns), secret('frozen', { data: { k: b64('v1') }, immutable: true }));
      assert.equal(created.status, 201, created.body);
      assert.equal(created.json.immutable, true);

      const changed = await request(server, secretPath(ns, 'frozen'), { method: 'PUT', body: { ...created.json, data: { k: b64('v2') } } });
      expectStatus(changed, 422, 'Invalid', 'Secret "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set');
      assert.deepEqual(changed.json.details, {
        name: 'frozen', kind: 'Secret',
        causes: [{ reason: 'FieldValueForbidden', message: 'Forbidden: field is immutable when `immutable` is set', field: 'data' }],
      });

      const unfrozen = await request(server, secretPath(ns, 'frozen'), { method: 'PUT', body: { ...created.json, immutable: false } });
      assert.equal(unfrozen.status, 422, unfrozen.body);
      findCause(unfrozen, 'immutable', 'FieldValueForbidden');

      const labelled = await request(server, secretPath(ns, 'frozen'), { method: 'PUT', body: { ...created.json, metadata: { ...created.json.metadata, labels: { ok: 'yes' } } } });
      assert.equal(labelled.status, 200, labelled.body);
      assert.deepEqual((await request(server, secretPath(ns, 'frozen'))).json.data, { k: b64('v1') });
    });

    it('refuses a change of type with 422 field is immutable', async () => {
      const ns = await mkns();
      const created = await post(secretPath(ns), secret('typed', { data: { k: b64('v') } }));
      const res = await request(server, secretPath(ns, 'typed'), { method: 'PUT', body: { ...created.json, type: 'example.com/custom' } });
      expectStatus(res, 422, 'Invalid', 'Secret "typed" is invalid: type: Invalid value: "example.com/custom": field is immutable');
      assert.deepEqual(res.json.details.causes, [{ reason: 'FieldValueInvalid', message: 'Invalid value: "example.com/custom": field is immutable', field: 'type' }]);
    });

    it('PUT of a missing Secret is 404 (no create on update)', async () => {
      const ns = await mkns();
      const res = await request(server, secretPath(ns, 'ghost'), { method: 'PUT', body: secret('ghost') });
      expectStatus(res, 404, 'NotFound', 'secrets "ghost" not found');
    });

    it('DELETE returns a Success Status with name, kind (the resource) and uid', async () => {
      const ns = await mkns();
      const created = await post(secretPath(ns), secret('bye', { stringData: { a: 'b' } }));
      const del = await request(server, secretPath(ns, 'bye'), { method: 'DELETE' });
      assert.equal(del.status, 200, del.body);
      assert.deepEqual(del.json, {
        kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success',
        details: { name: 'bye', kind: 'secrets', uid: created.json.metadata.uid },
      });
      expectStatus(await request(server, secretPath(ns, 'bye')), 404, 'NotFound', 'secrets "bye" not found');
    });

    it('DELETE of a Secret with finalizers returns the object with deletionTimestamp, not a Status', async () => {
      const ns = await mkns();
      const created = await post(secretPath(ns), secret('held', {}, { finalizers: ['example.com/hold'] }));
      assert.equal(created.status, 201);
      const del = await request(server, secretPath(ns, 'held'), { method: 'DELETE' });
      assert.equal(del.status, 200, del.body);
      assert.equal(del.json.kind, 'Secret');
      assert.match(del.json.metadata.deletionTimestamp, timePattern);
      const got = await request(server, secretPath(ns, 'held'));
      assert.equal(got.status, 200);
      const freed = await request(server, secretPath(ns, 'held'), { method: 'PUT', body: { ...got.json, metadata: { ...got.json.metadata, finalizers: null } } });
      assert.equal(freed.status, 200, freed.body);
      assert.equal((await request(server, secretPath(ns, 'held'))).status, 404);
    });

    it('refuses a Secret delete with a mismatching uid precondition with 409', async () => {
      const ns = await mkns();
      const created = await post(secretPath(ns), secret('kept'));
      const wrong = '22222222-2222-4222-8222-222222222222';
      const res = await deleteWith(server, secretPath(ns, 'kept'), { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: wrong } });
      expectStatus(res, 409, 'Conflict',
        `Operation cannot be fulfilled on Secret "kept": the UID in the precondition (${wrong}) does not match the UID in record (${created.json.metadata.uid}). The object might have been deleted and then recreated`);
      assert.equal((await request(server, secretPath(ns, 'kept'))).status, 200);
    });

    it('deletes a collection with a labelSelector, keeping the others', async () => {
      const ns = await mkns();
      assert.equal((await post(secretPath(ns), secret('s1', {}, { labels: { app: 'a' } }))).status, 201);
      assert.equal((await post(secretPath(ns), secret('s2', {}, { labels: { app: 'b' } }))).status, 201);
      const res = await request(server, `${secretPath(ns)}?labelSelector=app%3Da`, { method: 'DELETE' });
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.kind, 'SecretList');
      assert.deepEqual(res.json.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['s1']);
      const left = await request(server, secretPath(ns));
      assert.deepEqual(left.json.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['s2']);
    });

    it('lists secrets across namespaces as SecretList', async () => {
      const ns = await mkns();
      assert.equal((await post(secretPath(ns), secret('x1'))).status, 201);
      const res = await request(server, '/api/v1/secrets');
      assert.equal(res.status, 200);
      assert.equal(res.json.kind, 'SecretList');
      assert.equal(res.json.apiVersion, 'v1');
      assert.ok(res.json.items.some((i: { metadata: { name: string; namespace: string } }) => i.metadata.namespace === ns && i.metadata.name === 'x1'));
    });
  });

  // ---- events ---------------------------------------------------------------------------------

  describe('events.orch.io/v1 events', () => {
    it('creates, gets and lists events (namespaced and across namespaces)', async () => {
      const ns = await mkns();
      const res = await post(evPath(ns), event(ns, 'e1'));
      assert.equal(res.status, 201, res.body);
      assert.equal(res.json.kind, 'Event');
      assert.equal(res.json.apiVersion, 'events.orch.io/v1');
      assert.equal(res.json.metadata.namespace, ns);
      assert.match(res.json.metadata.uid, uidPattern);
      assert.match(res.json.metadata.resourceVersion, /^[1-9]\d*$/);
      assert.match(res.json.eventTime, microTimePattern);
      assert.equal(res.json.eventTime, '2024-05-01T10:00:00.123456Z');
      assert.deepEqual(res.json.regarding, { kind: 'ServiceAccount', namespace: ns, name: 'default', apiVersion: 'v1' });
      assert.equal(res.json.metadata.managedFields[0].apiVersion, 'events.orch.io/v1');

      const got = await request(server, evPath(ns, 'e1'));
      assert.equal(got.status, 200);
      assert.deepEqual(got.json, res.json);

      const list = await request(server, evPath(ns));
      assert.equal(list.json.kind, 'EventList');
      assert.equal(list.json.apiVersion, 'events.orch.io/v1');
      assert.deepEqual(list.json.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['e1']);

      const all = await request(server, '/apis/events.orch.io/v1/events');
      assert.equal(all.status, 200);
      assert.equal(all.json.kind, 'EventList');
      assert.ok(all.json.items.some((i: { metadata: { name: string; namespace: string } }) => i.metadata.namespace === ns && i.metadata.name === 'e1'));
    });

    it('answers NotFound and AlreadyExists with the group in the message and details', async () => {
      const ns = await mkns();
      const missing = await request(server, evPath(ns, 'nope'));
      expectStatus(missing, 404, 'NotFound', 'events.events.orch.io "nope" not found');
      assert.deepEqual(missing.json.details, { name: 'nope', group: 'events.orch.io', kind: 'events' });
      assert.equal((await post(evPath(ns), event(ns, 'twice'))).status, 201);
      const dup = await post(evPath(ns), event(ns, 'twice'));
      expectStatus(dup, 409, 'AlreadyExists', 'events.events.orch.io "twice" already exists');
      assert.deepEqual(dup.json.details, { name: 'twice', group: 'events.orch.io', kind: 'events' });
    });

    it('PUT of a missing Event creates it (201); a stale resourceVersion is 409 Conflict', async () => {
      const ns = await mkns();
      const created = await request(server, evPath(ns, 'upserted'), { method: 'PUT', body: event(ns, 'upserted') });
      assert.equal(created.status, 201, created.body);
      assert.equal(created.json.metadata.name, 'upserted');
      assert.match(created.json.metadata.uid, uidPattern);
      assert.equal((await request(server, evPath(ns, 'upserted'))).status, 200);

      const updated = await request(server, evPath(ns, 'upserted'), { method: 'PUT', body: { ...created.json, metadata: { ...created.json.metadata, labels: { x: 'y' } } } });
      assert.equal(updated.status, 200, updated.body);
      assert.deepEqual(updated.json.metadata.labels, { x: 'y' });

      const stale = await request(server, evPath(ns, 'upserted'), { method: 'PUT', body: { ...created.json, metadata: { ...created.json.metadata, labels: { x: 'z' } } } });
      expectStatus(stale, 409, 'Conflict',
        'Operation cannot be fulfilled on events.events.orch.io "upserted": the object has been modified; please apply your changes to the latest version and try again');
      assert.deepEqual(stale.json.details, { name: 'upserted', group: 'events.orch.io', kind: 'events' });
    });

    it('refuses changes to immutable event fields with 422', async () => {
      const ns = await mkns();
      const created = await post(evPath(ns), event(ns, 'fixed'));
      const res = await request(server, evPath(ns, 'fixed'), { method: 'PUT', body: { ...created.json, reason: 'Other' } });
      assert.equal(res.status, 422, res.body);
      assert.equal(res.json.reason, 'Invalid');
      // kube-apiserver validates the internal core Event: the kind is named without a group
      assert.match(res.json.message, /^Event "fixed" is invalid: /);
      assert.deepEqual({ kind: res.json.details.kind, group: res.json.details.group }, { kind: 'Event', group: undefined });
      const c = findCause(res, 'reason', 'FieldValueInvalid');
      assert.equal(c.message, 'Invalid value: "Other": field is immutable');
    });

    it('DELETE returns a Success Status with the group in details', async () => {
      const ns = await mkns();
      const created = await post(evPath(ns), event(ns, 'bye'));
      const del = await request(server, evPath(ns, 'bye'), { method: 'DELETE' });
      assert.equal(del.status, 200, del.body);
      assert.deepEqual(del.json, {
        kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success',
        details: { name: 'bye', group: 'events.orch.io', kind: 'events', uid: created.json.metadata.uid },
      });
      assert.equal((await request(server, evPath(ns, 'bye'))).status, 404);
    });

    it('deletes a collection of events with a labelSelector', async () => {
      const ns = await mkns();
      assert.equal((await post(evPath(ns), event(ns, 'k1', {}, { labels: { drop: 'yes' } }))).status, 201);
      assert.equal((await post(evPath(ns), event(ns, 'k2', {}, { labels: { drop: 'no' } }))).status, 201);
      const res = await request(server, `${evPath(ns)}?labelSelector=drop%3Dyes`, { method: 'DELETE' });
      assert.equal(res.status, 200, res.body);
      assert.equal(res.json.kind, 'EventList');
      const left = await request(server, evPath(ns));
      assert.deepEqual(left.json.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['k2']);
    });

    it('accepts the limits exactly: 128-character action, reason, reportingInstance and a 1024-character note', async () => {
      const ns = await mkns();
      const res = await post(evPath(ns), event(ns, 'edge', {
        action: 'a'.repeat(128), reason: 'r'.repeat(128), reportingInstance: 'i'.repeat(128), note: 'n'.repeat(1024), type: 'Warning',
      }));
      assert.equal(res.status, 201, res.body);
    });

    it('accepts an event without regarding.namespace in the default namespace', async () => {
      const res = await post(evPath('default'), event('default', uniq('ev'), { regarding: { kind: 'Node', name: 'n1', apiVersion: 'v1' } }));
      assert.equal(res.status, 201, res.body);
    });

    describe('validation of new events (422 Invalid with causes)', () => {
      const long = (n: number) => 'x'.repeat(n);
      const cases: Array<{ what: string; change: (e: Record<string, unknown>) => void; field: string; reason: string; message?: string | RegExp }> = [
        { what: 'missing eventTime', change: (e) => { delete e.eventTime; }, field: 'eventTime', reason: 'FieldValueRequired', message: 'Required value' },
        { what: 'empty action', change: (e) => { e.action = ''; }, field: 'action', reason: 'FieldValueRequired', message: 'Required value' },
        { what: 'missing action', change: (e) => { delete e.action; }, field: 'action', reason: 'FieldValueRequired', message: 'Required value' },
        { what: 'empty reason', change: (e) => { e.reason = ''; }, field: 'reason', reason: 'FieldValueRequired', message: 'Required value' },
        { what: 'empty reportingController', change: (e) => { e.reportingController = ''; }, field: 'reportingController', reason: 'FieldValueRequired', message: 'Required value' },
        { what: 'empty reportingInstance', change: (e) => { e.reportingInstance = ''; }, field: 'reportingInstance', reason: 'FieldValueRequired', message: 'Required value' },
        { what: 'action over 128 characters', change: (e) => { e.action = long(129); }, field: 'action', reason: 'FieldValueInvalid', message: 'Invalid value: "": can have at most 128 characters' },
        { what: 'reason over 128 characters', change: (e) => { e.reason = long(129); }, field: 'reason', reason: 'FieldValueInvalid', message: 'Invalid value: "": can have at most 128 characters' },
        { what: 'reportingInstance over 128 characters', change: (e) => { e.reportingInstance = long(129); }, field: 'reportingInstance', reason: 'FieldValueInvalid', message: 'Invalid value: "": can have at most 128 characters' },
        { what: 'note over 1024 characters', change: (e) => { e.note = long(1025); }, field: 'message', reason: 'FieldValueInvalid', message: 'Invalid value: "": can have at most 1024 characters' },
        { what: 'type not Normal or Warning', change: (e) => { e.type = 'Info'; }, field: 'type', reason: 'FieldValueInvalid', message: 'Invalid value: "": has invalid value: Info' },
        { what: 'missing type', change: (e) => { delete e.type; }, field: 'type', reason: 'FieldValueInvalid', message: 'Invalid value: "": has invalid value: ' },
        { what: 'deprecatedCount set', change: (e) => { e.deprecatedCount = 3; }, field: 'count', reason: 'FieldValueInvalid', message: 'Invalid value: "": needs to be unset' },
        { what: 'deprecatedFirstTimestamp set', change: (e) => { e.deprecatedFirstTimestamp = '2024-05-01T10:00:00Z'; }, field: 'firstTimestamp', reason: 'FieldValueInvalid', message: 'Invalid value: "": needs to be unset' },
        { what: 'deprecatedLastTimestamp set', change: (e) => { e.deprecatedLastTimestamp = '2024-05-01T10:00:00Z'; }, field: 'lastTimestamp', reason: 'FieldValueInvalid', message: 'Invalid value: "": needs to be unset' },
        { what: 'deprecatedSource set', change: (e) => { e.deprecatedSource = { component: 'kubelet', host: 'node-1' }; }, field: 'source', reason: 'FieldValueInvalid', message: 'Invalid value: "": needs to be unset' },
        { what: 'regarding without namespace outside default', change: (e) => { e.regarding = { kind: 'ServiceAccount', name: 'default', apiVersion: 'v1' }; }, field: 'involvedObject.namespace', reason: 'FieldValueInvalid', message: 'Invalid value: "": does not match event.namespace' },
        { what: 'reportingController not a qualified name', change: (e) => { e.reportingController = 'not valid!'; }, field: 'reportingController', reason: 'FieldValueInvalid', message: /^Invalid value: "not valid!": name part must consist of alphanumeric characters/ },
        { what: 'series with count below 2', change: (e) => { e.series = { count: 1, lastObservedTime: '2024-05-01T10:00:01.000000Z' }; }, field: 'series.count', reason: 'FieldValueInvalid', message: 'Invalid value: "": should be at least 2' },
        { what: 'series without lastObservedTime', change: (e) => { e.series = { count: 2 }; }, field: 'series.lastObservedTime', reason: 'FieldValueRequired', message: 'Required value' },
      ];
      for (const c of cases) {
        it(`refuses ${c.what}`, async () => {
          const ns = await mkns('evv');
          const name = uniq('bad');
          const body = event(ns, name) as Record<string, unknown>;
          c.change(body);
          const res = await post(evPath(ns), body);
          assert.equal(res.status, 422, res.body);
          assert.equal(res.json.kind, 'Status');
          assert.equal(res.json.status, 'Failure');
          assert.equal(res.json.reason, 'Invalid');
          assert.equal(res.json.code, 422);
          assert.ok(res.json.message.startsWith(`Event "${name}" is invalid: `), res.json.message);
          assert.equal(res.json.details.name, name);
          assert.equal(res.json.details.group, undefined);
          assert.equal(res.json.details.kind, 'Event');
          const cause = findCause(res, c.field, c.reason);
          if (typeof c.message === 'string') assert.equal(cause.message, c.message);
          else if (c.message) assert.match(cause.message ?? '', c.message);
          assert.ok(res.json.message.includes(`${c.field}: `), res.json.message);
          assert.equal((await request(server, evPath(ns, name))).status, 404);
        });
      }

      it('reports every problem at once', async () => {
        const ns = await mkns('evv');
        const body = event(ns, 'many', { action: '', reason: '', type: 'Bogus' }) as Record<string, unknown>;
        delete body.eventTime;
        const res = await post(evPath(ns), body);
        assert.equal(res.status, 422, res.body);
        findCause(res, 'eventTime', 'FieldValueRequired');
        findCause(res, 'type', 'FieldValueInvalid');
        assert.match(res.json.message, /^Event "many" is invalid: \[/);
      });
    });
  });
});

describe('event TTL (--event-ttl 2s)', () => {
  let server: TestServer;
  before(async () => { server = await startServer({ args: ['--event-ttl', '2s'] }); });
  after(async () => { await server?.dispose(); });

  it('removes events older than the TTL but not other objects', async () => {
    const ns = uniq('ttl');
    assert.equal((await request(server, nsPath(), { method: 'POST', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } })).status, 201);
    const ev = await request(server, evPath(ns), { method: 'POST', body: event(ns, 'short-lived') });
    assert.equal(ev.status, 201, ev.body);
    const acct = await request(server, saPath(ns), { method: 'POST', body: sa('long-lived') });
    assert.equal(acct.status, 201, acct.body);
    const started = Date.now();
    assert.equal((await request(server, evPath(ns, 'short-lived'))).status, 200);
    await eventually('the event to expire', async () => (await request(server, evPath(ns, 'short-lived'))).status === 404, 10_000);
    // a lower bound only: expiry never comes early, while a busy machine can make it late
    assert.ok(Date.now() - started >= 1000, 'the event must not vanish long before its TTL');
    const list = await request(server, evPath(ns));
    assert.deepEqual(list.json.items, []);
    assert.equal((await request(server, saPath(ns, 'long-lived'))).status, 200);
    assert.equal((await request(server, nsPath(ns))).status, 200);
  });

  it('removes core/v1 Events after the same TTL (they are the same stored Events)', async () => {
    const ns = uniq('ttl-core');
    assert.equal((await request(server, nsPath(), { method: 'POST', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } })).status, 201);
    const corePath = (name = '') => `/api/v1/namespaces/${ns}/events${name && `/${name}`}`;
    const ev = await request(server, corePath(), { method: 'POST', body: { metadata: { name: 'core-short-lived' }, involvedObject: { kind: 'Namespace', name: ns, namespace: ns }, reason: 'Short', message: 'gone soon' } });
    assert.equal(ev.status, 201, ev.body);
    assert.equal((await request(server, corePath('core-short-lived'))).status, 200);
    await eventually('the core event to expire', async () => (await request(server, corePath('core-short-lived'))).status === 404, 10_000);
    assert.equal((await request(server, evPath(ns, 'core-short-lived'))).status, 404);
  });
});
