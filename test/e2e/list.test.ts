/**
 * Consistent lists (issue 4): limit/continue paging over one snapshot, continue-token validation
 * and expiry, resourceVersion / resourceVersionMatch semantics, label and field selectors,
 * deletecollection with selectors. Everything through a real server process over HTTPS.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request, startServer, type HttpResponse, type TestServer } from '../support/server.js';
import { createNamespace, createSA, expectStatus, sleep, update, type Obj } from '../support/api.js';

async function list(server: TestServer, path: string): Promise<Obj> {
  const res = await request(server, path);
  expectStatus(res, 200, `list ${path}`);
  return res.json;
}

const names = (l: Obj): string[] => l.items.map((o: Obj) => o.metadata.name);
const keys = (l: Obj): string[] => l.items.map((o: Obj) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`);
const pad = (i: number) => String(i).padStart(2, '0');
const qs = (params: Record<string, string | number | undefined>) =>
  Object.entries(params).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`).join('&');

/**
 * Pages through `path` with `limit`, returning the chunks. Like client-go's pager, later requests
 * drop resourceVersion and resourceVersionMatch: the continue token carries the version.
 */
async function pages(server: TestServer, path: string, limit: number, between?: (chunk: number) => Promise<void>): Promise<Obj[]> {
  const out: Obj[] = [];
  let cont: string | undefined;
  const [base, query = ''] = path.split('?');
  const later = new URLSearchParams(query);
  later.delete('resourceVersion');
  later.delete('resourceVersionMatch');
  for (let i = 0; i < 1000; i++) {
    const params = cont === undefined ? query : later.toString();
    const chunk = await list(server, `${base}?${params ? `${params}&` : ''}${qs({ limit, continue: cont })}`);
    out.push(chunk);
    cont = chunk.metadata.continue;
    if (!cont) return out;
    if (between) await between(i);
  }
  assert.fail('paging did not terminate');
}

function assertStatusBody(res: HttpResponse, code: number, reason: string): Obj {
  assert.equal(res.status, code, `expected ${code} ${reason}, got ${res.status}: ${res.body.slice(0, 600)}`);
  assert.equal(res.json?.kind, 'Status', res.body);
  assert.equal(res.json.apiVersion, 'v1');
  assert.equal(res.json.status, 'Failure');
  assert.equal(res.json.code, code);
  assert.equal(res.json.reason, reason, res.body);
  return res.json;
}

async function currentRevision(server: TestServer): Promise<number> {
  const l = await list(server, '/api/v1/namespaces');
  return Number(l.metadata.resourceVersion);
}

describe('lists', () => {
  let server: TestServer;
  before(async () => { server = await startServer(); });
  after(async () => { await server?.dispose(); });

  describe('chunking with limit and continue', () => {
    const ns = 'paging';
    before(async () => {
      await createNamespace(server, ns);
      for (let i = 0; i < 57; i += 8) {
        await Promise.all(Array.from({ length: Math.min(8, 57 - i) }, (_, j) => createSA(server, ns, `sa-${pad(i + j)}`, { labels: { group: (i + j) % 2 ? 'odd' : 'even' } })));
      }
    });

    it('pages 58 ServiceAccounts (57 + default) by 10 with one resourceVersion and correct remainingItemCount', async () => {
      const whole = await list(server, `/api/v1/namespaces/${ns}/serviceaccounts`);
      assert.equal(whole.items.length, 58);
      assert.equal(whole.metadata.remainingItemCount, undefined, 'a complete list has no remainingItemCount');
      assert.ok(!whole.metadata.continue, 'a complete list has no continue token');

      const chunks = await pages(server, `/api/v1/namespaces/${ns}/serviceaccounts`, 10);
      assert.equal(chunks.length, 6);
      const rv = chunks[0].metadata.resourceVersion;
      assert.match(rv, /^[1-9][0-9]*$/);
      let seen = 0;
      chunks.forEach((c, i) => {
        assert.equal(c.kind, 'ServiceAccountList');
        assert.equal(c.apiVersion, 'v1');
        assert.equal(c.metadata.resourceVersion, rv, `chunk ${i} resourceVersion`);
        seen += c.items.length;
        if (i < chunks.length - 1) {
          assert.equal(c.items.length, 10, `chunk ${i} size`);
          assert.equal(typeof c.metadata.continue, 'string');
          assert.ok(c.metadata.continue.length > 0);
          assert.equal(c.metadata.remainingItemCount, 58 - seen, `chunk ${i} remainingItemCount`);
        } else {
          assert.equal(c.items.length, 8);
          assert.ok(c.metadata.continue === undefined || c.metadata.continue === '', `last chunk continue: ${c.metadata.continue}`);
          assert.equal(c.metadata.remainingItemCount, undefined, 'last chunk has no remainingItemCount');
        }
      });
      assert.deepEqual(chunks.flatMap(names), names(whole), 'chunks concatenate to the whole list, in order, without duplicates');
    });

    it('omits remainingItemCount when a label or field selector is used, but still pages', async () => {
      for (const sel of ['labelSelector=group%3Dodd', 'fieldSelector=metadata.name!%3Dsa-00']) {
        const chunks = await pages(server, `/api/v1/namespaces/${ns}/serviceaccounts?${sel}`, 10);
        assert.ok(chunks.length >= 3, `${sel}: expected several chunks`);
        for (const [i, c] of chunks.entries()) {
          assert.equal(c.metadata.remainingItemCount, undefined, `${sel}: chunk ${i} must not carry remainingItemCount`);
          assert.equal(c.metadata.resourceVersion, chunks[0].metadata.resourceVersion);
        }
        const all = chunks.flatMap(names);
        if (sel.startsWith('label')) assert.deepEqual(all, Array.from({ length: 28 }, (_, k) => `sa-${pad(2 * k + 1)}`));
        else assert.equal(all.length, 57);
      }
    });

    it('a limit larger than the collection returns everything without continue', async () => {
      const l = await list(server, `/api/v1/namespaces/${ns}/serviceaccounts?limit=500`);
      assert.equal(l.items.length, 58);
      assert.ok(!l.metadata.continue);
      assert.equal(l.metadata.remainingItemCount, undefined);
    });
  });

  it('later chunks show the snapshot of the first one despite creates, updates and deletes in between', async () => {
    const ns = 'snapshot';
    await createNamespace(server, ns);
    const original = new Map<string, Obj>();
    for (let i = 0; i < 30; i += 10) {
      const made = await Promise.all(Array.from({ length: 10 }, (_, j) => createSA(server, ns, `sa-${pad(i + j)}`, { labels: { v: '1' } })));
      for (const m of made) original.set(m.metadata.name, m);
    }
    const before = await list(server, `/api/v1/namespaces/${ns}/serviceaccounts`);
    const path = `/api/v1/namespaces/${ns}/serviceaccounts`;
    const chunks = await pages(server, path, 7, async (chunk) => {
      if (chunk !== 0) return;
      // after the first chunk (default, sa-00..sa-05): change things on both sides of the cursor
      assert.equal((await request(server, `${path}/sa-20`, { method: 'DELETE' })).status, 200);
      assert.equal((await request(server, `${path}/sa-01`, { method: 'DELETE' })).status, 200);
      await createSA(server, ns, 'sa-15b');
      await createSA(server, ns, 'sa-99');
      await update(server, `${path}/sa-25`, (o) => { o.metadata.labels = { v: '2' }; o.metadata.annotations = { changed: 'yes' }; });
    });
    const rv = chunks[0].metadata.resourceVersion;
    for (const c of chunks) assert.equal(c.metadata.resourceVersion, rv);
    const got = chunks.flatMap((c) => c.items as Obj[]);
    assert.deepEqual(got.map((o) => o.metadata.name), names(before), 'the paged list equals the list taken before the changes');
    const sa20 = got.find((o) => o.metadata.name === 'sa-20');
    assert.ok(sa20, 'an object deleted between chunks still appears in later chunks');
    const sa25 = got.find((o) => o.metadata.name === 'sa-25');
    assert.deepEqual(sa25.metadata.labels, { v: '1' }, 'an object updated between chunks shows its old content');
    assert.equal(sa25.metadata.annotations, undefined);
    assert.equal(sa25.metadata.resourceVersion, original.get('sa-25').metadata.resourceVersion);
    assert.ok(!got.some((o) => o.metadata.name === 'sa-15b' || o.metadata.name === 'sa-99'), 'objects created between chunks do not appear');
    // and a fresh list sees the new state
    const now = await list(server, path);
    assert.ok(names(now).includes('sa-15b') && names(now).includes('sa-99') && !names(now).includes('sa-20') && !names(now).includes('sa-01'));
    assert.ok(Number(now.metadata.resourceVersion) > Number(rv));
  });

  describe('across all namespaces and within one', () => {
    before(async () => {
      await createNamespace(server, 'scope-a');
      await createNamespace(server, 'scope-b');
      await Promise.all([0, 1, 2].map((i) => createSA(server, 'scope-a', `a-${i}`)));
      await Promise.all([0, 1].map((i) => createSA(server, 'scope-b', `b-${i}`)));
    });

    it('a namespaced list holds only that namespace', async () => {
      const a = await list(server, '/api/v1/namespaces/scope-a/serviceaccounts');
      assert.deepEqual(keys(a), ['scope-a/a-0', 'scope-a/a-1', 'scope-a/a-2', 'scope-a/default']);
      const b = await list(server, '/api/v1/namespaces/scope-b/serviceaccounts');
      assert.deepEqual(keys(b), ['scope-b/b-0', 'scope-b/b-1', 'scope-b/default']);
      const empty = await list(server, '/api/v1/namespaces/no-such-namespace/serviceaccounts');
      assert.deepEqual(empty.items, []);
    });

    it('/api/v1/serviceaccounts lists every namespace, ordered, and pages across namespace boundaries', async () => {
      const all = await list(server, '/api/v1/serviceaccounts');
      assert.equal(all.kind, 'ServiceAccountList');
      assert.equal(all.apiVersion, 'v1');
      const k = keys(all);
      for (const want of ['scope-a/a-0', 'scope-a/default', 'scope-b/b-1', 'default/default', 'orch-system/default']) assert.ok(k.includes(want), `missing ${want}`);
      const paged = await pages(server, '/api/v1/serviceaccounts', 7);
      assert.ok(paged.length > 2);
      assert.deepEqual(paged.flatMap(keys), k, 'paging across namespaces gives the same items in the same order');
      let seen = 0;
      for (const c of paged.slice(0, -1)) {
        seen += c.items.length;
        assert.equal(c.metadata.remainingItemCount, k.length - seen);
      }
    });

    it('a metadata.namespace field selector on the cluster-wide path restricts to that namespace', async () => {
      const l = await list(server, '/api/v1/serviceaccounts?fieldSelector=metadata.namespace%3Dscope-b');
      assert.deepEqual(keys(l), ['scope-b/b-0', 'scope-b/b-1', 'scope-b/default']);
      const not = await list(server, '/api/v1/serviceaccounts?fieldSelector=metadata.namespace!%3Dscope-b');
      assert.ok(!keys(not).some((x) => x.startsWith('scope-b/')));
      assert.ok(keys(not).includes('scope-a/a-0'));
    });

    it('the Event list is EventList in events.orch.io/v1', async () => {
      const l = await list(server, '/apis/events.orch.io/v1/namespaces/scope-a/events');
      assert.equal(l.kind, 'EventList');
      assert.equal(l.apiVersion, 'events.orch.io/v1');
      assert.deepEqual(l.items, []);
      const all = await list(server, '/apis/events.orch.io/v1/events');
      assert.equal(all.kind, 'EventList');
    });
  });

  describe('continue token validation', () => {
    let token = '';
    before(async () => {
      await createNamespace(server, 'tokens');
      await Promise.all(Array.from({ length: 6 }, (_, i) => createSA(server, 'tokens', `t-${i}`)));
      const first = await list(server, '/api/v1/namespaces/tokens/serviceaccounts?limit=2');
      token = first.metadata.continue;
      assert.ok(token);
    });

    it('a garbage token is 400 BadRequest', async () => {
      const res = await request(server, '/api/v1/namespaces/tokens/serviceaccounts?limit=2&continue=garbage!!');
      const st = assertStatusBody(res, 400, 'BadRequest');
      assert.match(st.message, /^invalid continue token: /);
      const res2 = await request(server, '/api/v1/namespaces/tokens/serviceaccounts?limit=2&continue=garbage');
      assertStatusBody(res2, 400, 'BadRequest');
      // base64 of text that is not JSON: Go's encoding/json message, as Kubernetes' DecodeContinue gives it
      const notJson = Buffer.from('{"v":').toString('base64url');
      const res3 = await request(server, `/api/v1/namespaces/tokens/serviceaccounts?limit=2&continue=${notJson}`);
      assert.equal(assertStatusBody(res3, 400, 'BadRequest').message, 'invalid continue token: continue key is not valid: unexpected end of JSON input');
    });

    it('a token whose start key climbs out of the collection is rejected with 400', async () => {
      const decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
      for (const start of ['../../secrets/x', '/etc/passwd', 'tokens/../../x', '']) {
        const forged = Buffer.from(JSON.stringify({ ...decoded, start })).toString('base64url');
        const res = await request(server, `/api/v1/namespaces/tokens/serviceaccounts?limit=2&continue=${forged}`);
        const st = assertStatusBody(res, 400, 'BadRequest');
        assert.match(st.message, /invalid continue token/, `start ${JSON.stringify(start)}`);
      }
    });

    it('resourceVersion together with continue is 400', async () => {
      const res = await request(server, `/api/v1/namespaces/tokens/serviceaccounts?limit=2&resourceVersion=5&continue=${token}`);
      const st = assertStatusBody(res, 400, 'BadRequest');
      assert.equal(st.message, 'specifying resource version is not allowed when using continue');
      // resourceVersion=0 is ignored with a continue token, as in Kubernetes
      const ok = await request(server, `/api/v1/namespaces/tokens/serviceaccounts?limit=2&resourceVersion=0&continue=${token}`);
      expectStatus(ok, 200, 'resourceVersion=0 with continue');
      assert.deepEqual(names(ok.json), ['t-1', 't-2']);
    });

    it('resourceVersionMatch together with continue is 422', async () => {
      const res = await request(server, `/api/v1/namespaces/tokens/serviceaccounts?limit=2&resourceVersion=5&resourceVersionMatch=NotOlderThan&continue=${token}`);
      const st = assertStatusBody(res, 422, 'Invalid');
      assert.match(st.message, /resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided/);
    });

    it('a valid token can be reused (idempotent pages)', async () => {
      const a = await list(server, `/api/v1/namespaces/tokens/serviceaccounts?limit=2&continue=${token}`);
      const b = await list(server, `/api/v1/namespaces/tokens/serviceaccounts?limit=2&continue=${token}`);
      assert.deepEqual(a, b);
      assert.deepEqual(names(a), ['t-1', 't-2']);
    });
  });

  describe('resourceVersion and resourceVersionMatch', () => {
    const ns = 'versions';
    const path = `/api/v1/namespaces/${ns}/serviceaccounts`;
    before(async () => { await createNamespace(server, ns); });

    it('unset: a consistent read of the latest state', async () => {
      const made = await createSA(server, ns, 'latest-1');
      const l = await list(server, path);
      assert.ok(names(l).includes('latest-1'), 'a list right after a create sees it');
      assert.ok(Number(l.metadata.resourceVersion) >= Number(made.metadata.resourceVersion));
      const ns2 = await list(server, '/api/v1/namespaces');
      assert.ok(Number(ns2.metadata.resourceVersion) >= Number(made.metadata.resourceVersion), 'list RV is the global revision');
    });

    it('"0": any recent state, 200 with a resourceVersion', async () => {
      const made = await createSA(server, ns, 'zero-1');
      const l = await list(server, `${path}?resourceVersion=0`);
      assert.equal(l.kind, 'ServiceAccountList');
      assert.match(l.metadata.resourceVersion, /^[1-9][0-9]*$/);
      // this server's read model is always current, so the newest object is there
      assert.ok(names(l).includes('zero-1'));
      assert.ok(Number(l.metadata.resourceVersion) >= Number(made.metadata.resourceVersion));
      const legacy = await list(server, `${path}?resourceVersion=0&limit=1`);
      assert.equal(legacy.items.length >= 1, true);
    });

    it('NotOlderThan: not older than the given version', async () => {
      const made = await createSA(server, ns, 'nto-1');
      const rv = Number(made.metadata.resourceVersion);
      await createSA(server, ns, 'nto-2');
      for (const at of [rv, rv - 1, 1]) {
        const l = await list(server, `${path}?resourceVersion=${at}&resourceVersionMatch=NotOlderThan`);
        assert.ok(Number(l.metadata.resourceVersion) >= rv, `NotOlderThan ${at} gave ${l.metadata.resourceVersion}`);
        assert.ok(names(l).includes('nto-1'));
      }
      // no match given, no limit: NotOlderThan semantics too
      const l = await list(server, `${path}?resourceVersion=${rv}`);
      assert.ok(Number(l.metadata.resourceVersion) >= rv);
      assert.ok(names(l).includes('nto-2'), 'NotOlderThan without limit serves the latest state');
    });

    it('Exact: returns exactly the state at a past version', async () => {
      const exNs = 'exact';
      await createNamespace(server, exNs);
      const p = `/api/v1/namespaces/${exNs}/serviceaccounts`;
      await Promise.all(['e-a', 'e-b', 'e-c'].map((n) => createSA(server, exNs, n, { labels: { gen: '1' } })));
      const then = await list(server, p);
      const rv = then.metadata.resourceVersion;
      // change things
      assert.equal((await request(server, `${p}/e-a`, { method: 'DELETE' })).status, 200);
      await update(server, `${p}/e-b`, (o) => { o.metadata.labels = { gen: '2' }; });
      await createSA(server, exNs, 'e-d');
      const now = await list(server, p);
      assert.notDeepEqual(now.items, then.items);

      const exact = await list(server, `${p}?resourceVersion=${rv}&resourceVersionMatch=Exact`);
      assert.equal(exact.metadata.resourceVersion, rv, 'the list carries exactly the requested version');
      assert.deepEqual(exact.items, then.items, 'items are exactly the state at that version');
      assert.equal(exact.kind, 'ServiceAccountList');

      // Exact with a limit pages the old state
      const paged = await pages(server, `${p}?resourceVersion=${rv}&resourceVersionMatch=Exact`, 2);
      for (const c of paged) assert.equal(c.metadata.resourceVersion, rv);
      assert.deepEqual(paged.flatMap((c) => c.items), then.items);

      // legacy: resourceVersion=N with a limit and no match is Exact
      const legacy = await pages(server, `${p}?resourceVersion=${rv}`, 3);
      assert.equal(legacy[0].metadata.resourceVersion, rv, 'resourceVersion with limit and no match is an exact read');
      assert.deepEqual(legacy.flatMap((c) => c.items), then.items);

      // Exact at the current version is fine too
      const cur = now.metadata.resourceVersion;
      const atCur = await list(server, `${p}?resourceVersion=${cur}&resourceVersionMatch=Exact`);
      assert.equal(atCur.metadata.resourceVersion, cur);
      assert.deepEqual(atCur.items, now.items);
    });

    it('resourceVersionMatch without resourceVersion is 422', async () => {
      const res = await request(server, `${path}?resourceVersionMatch=NotOlderThan`);
      const st = assertStatusBody(res, 422, 'Invalid');
      assert.equal(st.message, 'ListOptions.meta.orch.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided');
      assert.equal(st.details?.kind, 'ListOptions');
      assert.equal(st.details?.group, 'meta.orch.io');
      assert.deepEqual(st.details?.causes, [{ reason: 'FieldValueForbidden', message: 'Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided', field: 'resourceVersionMatch' }]);
    });

    it('Exact with "0" is 422', async () => {
      const res = await request(server, `${path}?resourceVersion=0&resourceVersionMatch=Exact`);
      const st = assertStatusBody(res, 422, 'Invalid');
      assert.equal(st.message, 'ListOptions.meta.orch.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"');
    });

    it('an unknown resourceVersionMatch is 422 Unsupported value', async () => {
      const res = await request(server, `${path}?resourceVersion=1&resourceVersionMatch=Newest`);
      const st = assertStatusBody(res, 422, 'Invalid');
      assert.equal(st.message, 'ListOptions.meta.orch.io "" is invalid: resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""');
    });

    it('sendInitialEvents on a list (no watch) is 422', async () => {
      const res = await request(server, `${path}?sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=1`);
      const st = assertStatusBody(res, 422, 'Invalid');
      assert.match(st.message, /sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list/);
    });

    for (const match of ['', 'NotOlderThan']) {
      it(`a future resourceVersion${match ? ` with ${match}` : ''} waits ~3 s, then 504 Too large resource version`, async () => {
        const current = await currentRevision(server);
        const future = current + 1000;
        const started = Date.now();
        const res = await request(server, `${path}?resourceVersion=${future}${match ? `&resourceVersionMatch=${match}` : ''}`);
        const elapsed = Date.now() - started;
        // a lower bound only: a timer never fires early, while a busy machine can make it late
        assert.ok(elapsed >= 2500, `waited ${elapsed} ms`);
        const st = assertStatusBody(res, 504, 'Timeout');
        assert.equal(st.message, `Timeout: Too large resource version: ${future}, current: ${current}`);
        assert.equal(st.details?.causes?.[0]?.reason, 'ResourceVersionTooLarge');
        assert.equal(st.details?.causes?.[0]?.message, 'Too large resource version');
        assert.equal(st.details?.retryAfterSeconds, 1);
        assert.equal(res.headers['retry-after'], '1');
      });
    }

    it('a future resourceVersion that is reached during the wait is served', async () => {
      const current = await currentRevision(server);
      const pending = request(server, `${path}?resourceVersion=${current + 1}&resourceVersionMatch=NotOlderThan`);
      await sleep(300);
      await createSA(server, ns, 'reached-1');
      const res = await pending;
      expectStatus(res, 200, 'list once the version is reached');
      assert.ok(Number(res.json.metadata.resourceVersion) >= current + 1);
      assert.ok(names(res.json).includes('reached-1'));
    });
  });

  describe('label selectors', () => {
    const ns = 'labels';
    const path = `/api/v1/namespaces/${ns}/serviceaccounts`;
    before(async () => {
      await createNamespace(server, ns);
      await Promise.all([
        createSA(server, ns, 'a', { labels: { app: 'web', tier: 'front' } }),
        createSA(server, ns, 'b', { labels: { app: 'web', tier: 'back' } }),
        createSA(server, ns, 'c', { labels: { app: 'db', tier: 'back' } }),
        createSA(server, ns, 'd', { labels: { app: 'cache', 'example.com/owner': 'team-1' } }),
        createSA(server, ns, 'e'),
      ]);
    });

    const cases: [string, string[]][] = [
      ['app=web', ['a', 'b']],
      ['app==web', ['a', 'b']],
      ['app = web', ['a', 'b']],
      ['app!=web', ['c', 'd', 'default', 'e']],
      ['app in (web,db)', ['a', 'b', 'c']],
      ['app in (web, db)', ['a', 'b', 'c']],
      ['app notin (web,db)', ['d', 'default', 'e']],
      ['tier', ['a', 'b', 'c']],
      ['!tier', ['d', 'default', 'e']],
      ['app=web,tier=back', ['b']],
      ['app in (web,db),tier!=front', ['b', 'c']],
      ['app,!tier', ['d']],
      ['example.com/owner=team-1', ['d']],
      ['app=nothing', []],
    ];
    for (const [sel, want] of cases) {
      it(`labelSelector ${sel}`, async () => {
        const l = await list(server, `${path}?labelSelector=${encodeURIComponent(sel)}`);
        assert.deepEqual(names(l), want);
      });
    }

    it('label selectors apply across all namespaces too', async () => {
      const l = await list(server, `/api/v1/serviceaccounts?labelSelector=${encodeURIComponent('app in (web)')}`);
      assert.deepEqual(keys(l), ['labels/a', 'labels/b']);
    });

    const malformed: [string, RegExp][] = [
      ['app in (web', /unable to parse requirement: found '', expected: ',' or '\)'/],
      ['app in web', /unable to parse requirement: found 'web' expected: '\('/],
      ['=web', /found '=', expected: !, identifier, or 'end of string'/],
      ['app=web tier=back', /found 'tier', expected: ',' or 'end of string'/],
      ['app x web', /found 'x', expected: in, notin, =, ==, !=, gt, lt/],
      ['-bad=x', /Invalid value: "-bad": name part must consist of alphanumeric characters/],
      ['app=-x-', /values\[0\]\[app\]: Invalid value: "-x-": a valid label must be an empty string or consist of alphanumeric characters/],
    ];
    for (const [sel, message] of malformed) {
      it(`malformed labelSelector ${JSON.stringify(sel)} is 400 naming the problem`, async () => {
        const res = await request(server, `${path}?labelSelector=${encodeURIComponent(sel)}`);
        const st = assertStatusBody(res, 400, 'BadRequest');
        assert.match(st.message, message);
      });
    }
  });

  describe('field selectors', () => {
    const ns = 'fields';
    before(async () => {
      await createNamespace(server, ns);
      await Promise.all(['x', 'y', 'z'].map((n) => createSA(server, ns, n)));
      await createSA(server, 'default', 'x');
      const secrets = [
        { name: 'opaque-1', type: 'Opaque', data: { k: Buffer.from('v').toString('base64') } },
        { name: 'basic-1', type: 'orch.io/basic-auth', data: { username: Buffer.from('u').toString('base64'), password: Buffer.from('p').toString('base64') } },
        { name: 'opaque-2', data: { k: Buffer.from('w').toString('base64') } },
      ];
      for (const s of secrets) {
        const res = await request(server, `/api/v1/namespaces/${ns}/secrets`, { method: 'POST', body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: s.name }, type: s.type, data: s.data } });
        expectStatus(res, 201, `create secret ${s.name}`);
      }
      const events = [
        { name: 'ev-1', reason: 'Started', type: 'Normal', reportingController: 'example.com/alpha', regarding: 'x' },
        { name: 'ev-2', reason: 'Failed', type: 'Warning', reportingController: 'example.com/beta', regarding: 'y' },
        { name: 'ev-3', reason: 'Started', type: 'Warning', reportingController: 'example.com/alpha', regarding: 'y' },
      ];
      for (const e of events) {
        const res = await request(server, `/apis/events.orch.io/v1/namespaces/${ns}/events`, {
          method: 'POST',
          body: {
            apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: { name: e.name },
            eventTime: '2025-01-02T03:04:05.123456Z', action: 'Test', reason: e.reason, type: e.type,
            reportingController: e.reportingController, reportingInstance: 'instance-1', note: 'a note',
            regarding: { apiVersion: 'v1', kind: 'ServiceAccount', namespace: ns, name: e.regarding },
          },
        });
        expectStatus(res, 201, `create event ${e.name}`);
      }
    });

    const fs = (s: string) => `fieldSelector=${encodeURIComponent(s)}`;

    it('metadata.name =, ==, != within a namespace', async () => {
      assert.deepEqual(names(await list(server, `/api/v1/namespaces/${ns}/serviceaccounts?${fs('metadata.name=y')}`)), ['y']);
      assert.deepEqual(names(await list(server, `/api/v1/namespaces/${ns}/serviceaccounts?${fs('metadata.name==y')}`)), ['y']);
      assert.deepEqual(names(await list(server, `/api/v1/namespaces/${ns}/serviceaccounts?${fs('metadata.name!=y')}`)), ['default', 'x', 'z']);
      assert.deepEqual(names(await list(server, `/api/v1/namespaces/${ns}/serviceaccounts?${fs('metadata.name!=y,metadata.name!=default')}`)), ['x', 'z']);
      assert.deepEqual(names(await list(server, `/api/v1/namespaces/${ns}/serviceaccounts?${fs('metadata.name=nope')}`)), []);
    });

    it('metadata.name across all namespaces finds it in each namespace', async () => {
      const l = await list(server, `/api/v1/serviceaccounts?${fs('metadata.name=x')}`);
      assert.deepEqual(keys(l), ['default/x', 'fields/x']);
      const both = await list(server, `/api/v1/serviceaccounts?${fs('metadata.name=x,metadata.namespace=fields')}`);
      assert.deepEqual(keys(both), ['fields/x']);
    });

    it('metadata.namespace in a namespaced path that disagrees selects nothing', async () => {
      const l = await list(server, `/api/v1/namespaces/${ns}/serviceaccounts?${fs('metadata.namespace=default')}`);
      assert.deepEqual(l.items, []);
      const same = await list(server, `/api/v1/namespaces/${ns}/serviceaccounts?${fs('metadata.namespace=fields')}`);
      assert.deepEqual(names(same), ['default', 'x', 'y', 'z']);
    });

    it('secrets by type', async () => {
      assert.deepEqual(names(await list(server, `/api/v1/namespaces/${ns}/secrets?${fs('type=Opaque')}`)), ['opaque-1', 'opaque-2']);
      assert.deepEqual(names(await list(server, `/api/v1/namespaces/${ns}/secrets?${fs('type=orch.io/basic-auth')}`)), ['basic-1']);
      assert.deepEqual(names(await list(server, `/api/v1/namespaces/${ns}/secrets?${fs('type!=Opaque')}`)), ['basic-1']);
      assert.deepEqual(names(await list(server, `/api/v1/secrets?${fs('type=orch.io/basic-auth')}`)), ['basic-1']);
    });

    it('namespaces by status.phase', async () => {
      const active = await list(server, `/api/v1/namespaces?${fs('status.phase=Active')}`);
      for (const n of ['default', 'orch-system', 'fields']) assert.ok(names(active).includes(n), `Active lists ${n}`);
      const terminating = await list(server, `/api/v1/namespaces?${fs('status.phase=Terminating')}`);
      assert.ok(!names(terminating).includes('fields'));
      const byName = await list(server, `/api/v1/namespaces?${fs('metadata.name=fields')}`);
      assert.deepEqual(names(byName), ['fields']);
    });

    it('a terminating namespace moves from status.phase=Active to Terminating', async () => {
      await createNamespace(server, 'going');
      await createSA(server, 'going', 'held', { finalizers: ['example.com/hold'] });
      expectStatus(await request(server, '/api/v1/namespaces/going', { method: 'DELETE' }), 200, 'delete namespace going');
      const terminating = await list(server, `/api/v1/namespaces?${fs('status.phase=Terminating')}`);
      assert.ok(names(terminating).includes('going'), `Terminating: ${names(terminating)}`);
      const active = await list(server, `/api/v1/namespaces?${fs('status.phase=Active')}`);
      assert.ok(!names(active).includes('going'));
      // let it go
      await update(server, '/api/v1/namespaces/going/serviceaccounts/held', (o) => { o.metadata.finalizers = []; });
      const deadline = Date.now() + 10_000;
      while ((await request(server, '/api/v1/namespaces/going')).status !== 404) {
        if (Date.now() > deadline) assert.fail('namespace going was never removed');
        await sleep(50);
      }
    });

    it('events by reason, type, reportingController, regarding.*', async () => {
      const ev = (s: string) => list(server, `/apis/events.orch.io/v1/namespaces/${ns}/events?${fs(s)}`).then(names);
      assert.deepEqual(await ev('reason=Started'), ['ev-1', 'ev-3']);
      assert.deepEqual(await ev('type=Warning'), ['ev-2', 'ev-3']);
      assert.deepEqual(await ev('type=Warning,reason=Started'), ['ev-3']);
      assert.deepEqual(await ev('reportingController=example.com/alpha'), ['ev-1', 'ev-3']);
      assert.deepEqual(await ev('regarding.name=y'), ['ev-2', 'ev-3']);
      assert.deepEqual(await ev('regarding.kind=ServiceAccount,regarding.name=x'), ['ev-1']);
      assert.deepEqual(await ev('regarding.namespace=fields'), ['ev-1', 'ev-2', 'ev-3']);
      assert.deepEqual(await ev('reason!=Started'), ['ev-2']);
      const all = await list(server, `/apis/events.orch.io/v1/events?${fs('reason=Failed')}`);
      assert.deepEqual(keys(all), ['fields/ev-2']);
    });

    it('an unsupported field is 400', async () => {
      // kinds with their own field label conversion say "field label not supported"; ServiceAccount
      // has none, so Kubernetes' DefaultMetaV1FieldSelectorConversion answers
      const meta = (f: string) => `"${f}" is not a known field selector: only "metadata.name", "metadata.namespace"`;
      const own = (f: string) => `field label not supported: ${f}`;
      for (const [p, field, message] of [
        [`/api/v1/namespaces/${ns}/serviceaccounts`, 'spec.foo', meta],
        [`/api/v1/serviceaccounts`, 'metadata.uid', meta],
        [`/api/v1/namespaces/${ns}/secrets`, 'data.k', own],
        ['/api/v1/namespaces', 'status.foo', own],
        [`/apis/events.orch.io/v1/namespaces/${ns}/events`, 'note', own],
      ] as const) {
        const res = await request(server, `${p}?${fs(`${field}=x`)}`);
        const st = assertStatusBody(res, 400, 'BadRequest');
        assert.equal(st.message, message(field));
      }
    });

    it('a malformed field selector is 400', async () => {
      const res = await request(server, `/api/v1/namespaces/${ns}/serviceaccounts?${fs('metadata.name')}`);
      const st = assertStatusBody(res, 400, 'BadRequest');
      assert.equal(st.message, "invalid selector: 'metadata.name'; can't understand 'metadata.name'");
    });
  });

  describe('query parameters read as kube-apiserver\'s parameter codec reads them', () => {
    const ns = 'params';
    const path = `/api/v1/namespaces/${ns}/serviceaccounts`;
    before(async () => {
      await createNamespace(server, ns);
      await Promise.all(['a', 'b', 'c'].map((n) => createSA(server, ns, n)));
    });

    const malformed: Array<[string, string]> = [
      ['timeoutSeconds=abc', 'strconv.ParseInt: parsing "abc": invalid syntax'],
      ['timeoutSeconds=1.5', 'strconv.ParseInt: parsing "1.5": invalid syntax'],
      ['limit=abc', 'strconv.ParseInt: parsing "abc": invalid syntax'],
      ['limit=', 'strconv.ParseInt: parsing "": invalid syntax'],
      ['limit=99999999999999999999', 'strconv.ParseInt: parsing "99999999999999999999": value out of range'],
      // decoded in ListOptions' field order: timeoutSeconds, limit, then the selectors
      ['limit=x&timeoutSeconds=y', 'strconv.ParseInt: parsing "y": invalid syntax'],
      [`labelSelector=${encodeURIComponent('a in (')}&limit=x`, 'strconv.ParseInt: parsing "x": invalid syntax'],
    ];
    for (const [query, message] of malformed) {
      it(`${query} on a list is 400 with Go's message`, async () => {
        const st = assertStatusBody(await request(server, `${path}?${query}`), 400, 'BadRequest');
        assert.equal(st.message, message);
      });
    }

    it('a signed integer is read as Go reads it', async () => {
      const l = await list(server, `${path}?limit=%2B2&timeoutSeconds=-1`);
      assert.equal(l.items.length, 2);
      assert.ok(l.metadata.continue);
    });

    it('watch=0, watch=false and watch=False list', async () => {
      for (const v of ['0', 'false', 'False', 'FALSE']) {
        const l = await list(server, `${path}?watch=${v}`);
        assert.equal(l.kind, 'ServiceAccountList', `watch=${v}`);
      }
    });

    it('a malformed gracePeriodSeconds on deletecollection is 400 and deletes nothing', async () => {
      const res = await request(server, `${path}?gracePeriodSeconds=soon`, { method: 'DELETE' });
      assert.equal(assertStatusBody(res, 400, 'BadRequest').message, 'strconv.ParseInt: parsing "soon": invalid syntax');
      assert.deepEqual(names(await list(server, path)), ['a', 'b', 'c', 'default']);
    });
  });

  describe('deletecollection', () => {
    it('honours labelSelector: only matching objects go, other namespaces untouched', async () => {
      const ns = 'dc';
      await createNamespace(server, ns);
      await createNamespace(server, 'dc-other');
      await Promise.all([
        ...['k1', 'k2', 'k3'].map((n) => createSA(server, ns, n, { labels: { del: 'yes' } })),
        ...['s1', 's2'].map((n) => createSA(server, ns, n, { labels: { del: 'no' } })),
        createSA(server, 'dc-other', 'k9', { labels: { del: 'yes' } }),
      ]);
      const res = await request(server, `/api/v1/namespaces/${ns}/serviceaccounts?labelSelector=del%3Dyes`, { method: 'DELETE' });
      expectStatus(res, 200, 'deletecollection');
      assert.deepEqual(names(await list(server, `/api/v1/namespaces/${ns}/serviceaccounts`)), ['default', 's1', 's2']);
      assert.deepEqual(names(await list(server, '/api/v1/namespaces/dc-other/serviceaccounts')), ['default', 'k9']);
    });

    it('honours fieldSelector', async () => {
      const ns = 'dc-f';
      await createNamespace(server, ns);
      await Promise.all(['p', 'q', 'r'].map((n) => createSA(server, ns, n)));
      const res = await request(server, `/api/v1/namespaces/${ns}/serviceaccounts?fieldSelector=metadata.name%3Dq`, { method: 'DELETE' });
      expectStatus(res, 200, 'deletecollection');
      assert.deepEqual(names(await list(server, `/api/v1/namespaces/${ns}/serviceaccounts`)), ['default', 'p', 'r']);
    });

    it('rejects a malformed selector with 400 and deletes nothing', async () => {
      const ns = 'dc-bad';
      await createNamespace(server, ns);
      await createSA(server, ns, 'keep');
      const res = await request(server, `/api/v1/namespaces/${ns}/serviceaccounts?labelSelector=${encodeURIComponent('a in (')}`, { method: 'DELETE' });
      assertStatusBody(res, 400, 'BadRequest');
      const res2 = await request(server, `/api/v1/namespaces/${ns}/serviceaccounts?fieldSelector=spec.x%3D1`, { method: 'DELETE' });
      assertStatusBody(res2, 400, 'BadRequest');
      assert.deepEqual(names(await list(server, `/api/v1/namespaces/${ns}/serviceaccounts`)), ['default', 'keep']);
    });
  });
});

describe('continue token expiry (--continue-ttl 1s)', () => {
  let server: TestServer;
  before(async () => { server = await startServer({ args: ['--continue-ttl', '1s'] }); });
  after(async () => { await server?.dispose(); });

  it('a token older than the TTL is 410 Expired telling the client to restart without it', async () => {
    await createNamespace(server, 'ttl');
    await Promise.all(Array.from({ length: 6 }, (_, i) => createSA(server, 'ttl', `t-${i}`)));
    const first = await list(server, '/api/v1/namespaces/ttl/serviceaccounts?limit=2');
    const token = first.metadata.continue;
    assert.ok(token);
    // within the TTL, and after a write, it still works on the snapshot
    await createSA(server, 'ttl', 't-00');
    const second = await list(server, `/api/v1/namespaces/ttl/serviceaccounts?limit=2&continue=${token}`);
    assert.deepEqual(names(second), ['t-1', 't-2']);
    assert.equal(second.metadata.resourceVersion, first.metadata.resourceVersion);

    await sleep(2000);
    await createSA(server, 'ttl', 't-01');
    const res = await request(server, `/api/v1/namespaces/ttl/serviceaccounts?limit=2&continue=${token}`);
    const st = assertStatusBody(res, 410, 'Expired');
    // as kube-apiserver's etcd3 store: the 410 offers a token that continues, inconsistently, at the latest revision
    assert.equal(st.message, 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.');
    assert.ok(st.metadata?.continue, `the 410 carries no continue token: ${res.body}`);
    const rest = await list(server, `/api/v1/namespaces/ttl/serviceaccounts?limit=100&continue=${st.metadata.continue}`);
    const latest = await list(server, '/api/v1/namespaces/ttl/serviceaccounts');
    assert.deepEqual(names(rest), names(latest).filter((n) => n >= names(second)[0]), 'the rest from the same key, at the latest revision');
  });
});

describe('Exact reads beyond the kept history (--watch-history 1s)', () => {
  let server: TestServer;
  before(async () => { server = await startServer({ args: ['--watch-history', '1s'] }); });
  after(async () => { await server?.dispose(); });

  it('Exact at a compacted version is 410 Expired', async () => {
    await createNamespace(server, 'hist');
    await createSA(server, 'hist', 'one');
    const then = await list(server, '/api/v1/namespaces/hist/serviceaccounts');
    await createSA(server, 'hist', 'two');
    await sleep(2500);
    await createSA(server, 'hist', 'three');
    await sleep(200);
    const res = await request(server, `/api/v1/namespaces/hist/serviceaccounts?resourceVersion=${then.metadata.resourceVersion}&resourceVersionMatch=Exact`);
    const st = assertStatusBody(res, 410, 'Expired');
    assert.equal(st.message, 'The resourceVersion for the provided list is too old.');
  });
});
