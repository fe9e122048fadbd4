/**
 * Watch (issue 3, points 1-9): path forms, start behaviour for every resourceVersion form,
 * sendInitialEvents with its closing bookmark, 410 for a start older than the kept history,
 * selector transitions, namespace and finalizer deletion, timeouts and bookmarks, chunked
 * HTTP/1.1 and HTTP/2 framing, and a stalled watcher among many. Real server process, real TLS.
 */
import assert from 'node:assert/strict';
import { connect as http2Connect, type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { request as httpsRequest, type RequestOptions as HttpsRequestOptions } from 'node:https';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { request, startServer, type TestServer } from '../support/server.js';
import { createNamespace, createSA, expectStatus, sleep, update, type Obj } from '../support/api.js';

interface WatchEvent { type: string; object: Obj }

/**
 * One watch stream, over HTTP/1.1 (https.request) or HTTP/2 (http2.connect), collecting
 * newline-delimited JSON events as they arrive.
 */
class WatchStream {
  status = 0;
  headers: Record<string, string | string[] | undefined> = {};
  readonly events: WatchEvent[] = [];
  /** raw lines as received, one per event */
  readonly lines: string[] = [];
  /** anything on the wire that was not one JSON document per line */
  readonly garbage: string[] = [];
  /** bytes received */
  bytes = 0;
  /** the response ended with a proper end of body (terminating chunk / END_STREAM) */
  cleanEnd = false;
  ended = false;
  endedAt = 0;
  /** HTTP/2: the RST_STREAM code the stream closed with (0 = NO_ERROR) */
  rstCode: number | undefined;
  error: Error | undefined;
  readonly openedAt = Date.now();
  readonly opened: Promise<void>;
  readonly done: Promise<void>;
  /** when parse is false, lines are counted (and their type sniffed) but not parsed */
  parse = true;
  private pending: Buffer[] = [];
  private waiters = new Set<() => void>();
  private resolveOpened!: () => void;
  private resolveDone!: () => void;
  private closeFn: () => void = () => {};
  private pauseFn: () => void = () => {};
  private resumeFn: () => void = () => {};

  constructor() {
    this.opened = new Promise((r) => { this.resolveOpened = r; });
    this.done = new Promise((r) => { this.resolveDone = r; });
  }

  static http1(server: TestServer, path: string, opts: { paused?: boolean; headers?: Record<string, string> } = {}): WatchStream {
    const w = new WatchStream();
    const o: HttpsRequestOptions = {
      method: 'GET', ca: server.admin.ca, cert: server.admin.cert, key: server.admin.key, agent: false,
      headers: { accept: 'application/json', ...(opts.headers ?? {}) },
    };
    let res: IncomingMessage | undefined;
    const req: ClientRequest = httpsRequest(`${server.url}${path}`, o, (r) => {
      res = r;
      w.status = r.statusCode ?? 0;
      w.headers = r.headers;
      if (opts.paused) r.pause();
      r.on('data', (c: Buffer) => w.feed(c));
      r.on('end', () => { w.cleanEnd = true; w.finish(); });
      r.on('aborted', () => w.finish());
      r.on('error', (e) => { w.error = e; w.finish(); });
      r.on('close', () => w.finish());
      w.resolveOpened();
    });
    req.on('error', (e) => { w.error = e; w.resolveOpened(); w.finish(); });
    req.end();
    w.closeFn = () => { res?.destroy(); req.destroy(); };
    w.pauseFn = () => res?.pause();
    w.resumeFn = () => res?.resume();
    return w;
  }

  static http2(server: TestServer, path: string, session?: ClientHttp2Session): WatchStream {
    const w = new WatchStream();
    const own = session === undefined;
    const s = session ?? http2Connect(server.url, { ca: server.admin.ca, cert: server.admin.cert, key: server.admin.key });
    s.on('error', (e) => { w.error = e; w.resolveOpened(); w.finish(); });
    const stream: ClientHttp2Stream = s.request({ ':method': 'GET', ':path': path, accept: 'application/json' });
    stream.on('response', (h) => {
      w.status = Number(h[':status']);
      w.headers = h as Record<string, string | string[] | undefined>;
      w.resolveOpened();
    });
    stream.on('data', (c: Buffer) => w.feed(c));
    // a clean end is END_STREAM with no RST_STREAM error code
    let gotEnd = false;
    stream.on('end', () => { gotEnd = true; });
    stream.on('error', (e) => { w.error = e; w.finish(); });
    stream.on('close', () => {
      w.rstCode = stream.rstCode;
      w.cleanEnd = gotEnd && !w.error && (stream.rstCode === undefined || stream.rstCode === 0);
      w.finish();
      if (own) s.close();
    });
    stream.end();
    w.closeFn = () => { stream.close(); if (own) s.close(); };
    w.pauseFn = () => stream.pause();
    w.resumeFn = () => stream.resume();
    return w;
  }

  private feed(chunk: Buffer): void {
    this.bytes += chunk.length;
    // '\n' never occurs inside a UTF-8 sequence, so lines can be cut on bytes
    let from = 0;
    let nl: number;
    while ((nl = chunk.indexOf(10, from)) >= 0) {
      this.pending.push(chunk.subarray(from, nl));
      const line = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending);
      this.pending = [];
      from = nl + 1;
      this.line(line);
    }
    if (from < chunk.length) this.pending.push(chunk.subarray(from));
    this.wake();
  }

  private line(bytes: Buffer): void {
    if (bytes.length === 0) { this.garbage.push('<empty line>'); return; }
    if (!this.parse) {
      const head = bytes.subarray(0, 2000).toString('utf8');
      const type = /^\{"type":"([A-Z]+)"/.exec(head)?.[1] ?? '?';
      const rv = /"resourceVersion":"([0-9]+)"/.exec(head)?.[1];
      const name = /"name":"([^"]+)"/.exec(head)?.[1];
      if (bytes[bytes.length - 1] !== 0x7d) this.garbage.push(head.slice(0, 200));
      this.lines.push('');
      this.events.push({ type, object: { metadata: { resourceVersion: rv, name } } });
      return;
    }
    const line = bytes.toString('utf8');
    this.lines.push(line);
    try {
      const ev = JSON.parse(line) as WatchEvent;
      if (typeof ev.type !== 'string' || typeof ev.object !== 'object' || Object.keys(ev).length !== 2) this.garbage.push(line.slice(0, 200));
      this.events.push(ev);
    } catch {
      this.garbage.push(line.slice(0, 200));
    }
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.endedAt = Date.now();
    if (this.pending.length) this.garbage.push(`<unterminated: ${Buffer.concat(this.pending).subarray(0, 200).toString()}>`);
    this.resolveOpened();
    this.resolveDone();
    this.wake();
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }

  /** Waits until `pred(events)` holds; fails with what arrived if it does not in time. */
  async waitFor(pred: (events: WatchEvent[]) => boolean, what: string, timeoutMs = 5000): Promise<void> {
    if (pred(this.events)) return;
    await new Promise<void>((resolve, reject) => {
      const check = () => {
        if (pred(this.events)) { cleanup(); resolve(); } else if (this.ended) { cleanup(); reject(new Error(`watch ended before ${what}; got ${this.describe()}`)); }
      };
      const timer = setTimeout(() => { cleanup(); reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; got ${this.describe()}`)); }, timeoutMs);
      const cleanup = () => { clearTimeout(timer); this.waiters.delete(check); };
      this.waiters.add(check);
      check();
    });
  }

  waitForCount(n: number, timeoutMs = 5000): Promise<void> {
    return this.waitFor((e) => e.length >= n, `${n} events`, timeoutMs);
  }

  /** Waits for an event on object `name` of `type`. */
  waitForEvent(type: string, name: string, timeoutMs = 5000): Promise<WatchEvent> {
    return this.waitFor((e) => e.some((x) => x.type === type && x.object?.metadata?.name === name), `${type} ${name}`, timeoutMs)
      .then(() => this.events.find((x) => x.type === type && x.object?.metadata?.name === name) as WatchEvent);
  }

  async waitForEnd(timeoutMs = 5000): Promise<void> {
    await Promise.race([this.done, sleep(timeoutMs).then(() => { throw new Error(`watch did not end within ${timeoutMs} ms; got ${this.describe()}`); })]);
  }

  describe(): string {
    return `${this.events.length} events [${this.events.slice(0, 30).map((e) => `${e.type} ${e.object?.metadata?.name ?? ''}@${e.object?.metadata?.resourceVersion ?? ''}`).join(', ')}${this.events.length > 30 ? ', ...' : ''}] status ${this.status}${this.ended ? ' (ended)' : ''}${this.error ? ` error ${this.error.message}` : ''}${this.rstCode ? ` rstCode ${this.rstCode}` : ''}`;
  }

  /** events on objects (not BOOKMARK / ERROR) as "TYPE name" */
  summary(): string[] {
    return this.events.filter((e) => e.type !== 'BOOKMARK').map((e) => `${e.type} ${e.object?.metadata?.name}`);
  }

  pause(): void { this.pauseFn(); }
  resume(): void { this.resumeFn(); }
  close(): void { this.closeFn(); }
}

const streams = new Set<WatchStream>();
function watch(server: TestServer, path: string, opts: { http2?: boolean; paused?: boolean } = {}): WatchStream {
  const w = opts.http2 ? WatchStream.http2(server, path) : WatchStream.http1(server, path, { paused: opts.paused });
  streams.add(w);
  return w;
}
function closeAll(): void {
  for (const w of streams) w.close();
  streams.clear();
}

/** Opens a watch and waits for its response headers, asserting 200. */
async function open(server: TestServer, path: string, opts: { http2?: boolean } = {}): Promise<WatchStream> {
  const w = watch(server, path, opts);
  await Promise.race([w.opened, sleep(10_000)]);
  assert.equal(w.status, 200, `watch ${path}: status ${w.status} ${w.describe()}`);
  return w;
}

async function remove(server: TestServer, path: string): Promise<Obj> {
  const res = await request(server, path, { method: 'DELETE' });
  assert.ok(res.status === 200 || res.status === 202, `delete ${path}: ${res.status} ${res.body.slice(0, 300)}`);
  return res.json;
}

async function revision(server: TestServer): Promise<number> {
  const res = await request(server, '/api/v1/namespaces');
  expectStatus(res, 200, 'list namespaces');
  return Number(res.json.metadata.resourceVersion);
}

const rvOf = (e: WatchEvent) => Number(e.object?.metadata?.resourceVersion);

function assertIncreasing(events: WatchEvent[], what: string): void {
  const rvs = events.map(rvOf);
  for (let i = 1; i < rvs.length; i++) assert.ok(rvs[i]! > rvs[i - 1]!, `${what}: resourceVersions must increase: ${rvs.join(', ')}`);
}

describe('watch', () => {
  let server: TestServer;
  before(async () => { server = await startServer(); });
  after(async () => { closeAll(); await server?.dispose(); });

  it('?watch=true on a namespaced list: synthetic ADDED, then ADDED/MODIFIED/DELETED in order', async () => {
    const ns = 'w-basic';
    await createNamespace(server, ns);
    await createSA(server, ns, 'pre');
    const base = `/api/v1/namespaces/${ns}/serviceaccounts`;
    const w = await open(server, `${base}?watch=true`);
    assert.match(String(w.headers['content-type']), /^application\/json/);
    await w.waitForCount(2);
    assert.deepEqual(w.summary().slice(0, 2).sort(), ['ADDED default', 'ADDED pre']);

    const created = await createSA(server, ns, 'live');
    const updated = await update(server, `${base}/live`, (o) => { o.metadata.labels = { step: '2' }; });
    await remove(server, `${base}/live`);
    await w.waitForEvent('DELETED', 'live');
    const live = w.events.slice(2);
    assert.deepEqual(live.map((e) => `${e.type} ${e.object.metadata.name}`), ['ADDED live', 'MODIFIED live', 'DELETED live']);
    assert.equal(live[0]!.object.metadata.resourceVersion, created.metadata.resourceVersion);
    assert.equal(live[1]!.object.metadata.resourceVersion, updated.metadata.resourceVersion);
    assert.deepEqual(live[1]!.object.metadata.labels, { step: '2' });
    assertIncreasing(live, 'live events');
    for (const e of w.events) {
      assert.equal(e.object.kind, 'ServiceAccount');
      assert.equal(e.object.apiVersion, 'v1');
    }
    assert.deepEqual(w.garbage, []);
  });

  it('watch=1 across all namespaces sees every namespace; a namespaced watch only its own', async () => {
    await createNamespace(server, 'w-all-a');
    await createNamespace(server, 'w-all-b');
    const rv = await revision(server);
    const all = await open(server, `/api/v1/serviceaccounts?watch=1&resourceVersion=${rv}`);
    const onlyA = await open(server, `/api/v1/namespaces/w-all-a/serviceaccounts?watch=1&resourceVersion=${rv}`);
    await createSA(server, 'w-all-b', 'in-b');
    await createSA(server, 'w-all-a', 'in-a');
    await all.waitForEvent('ADDED', 'in-a');
    await onlyA.waitForEvent('ADDED', 'in-a');
    assert.deepEqual(all.events.map((e) => `${e.type} ${e.object.metadata.namespace}/${e.object.metadata.name}`), ['ADDED w-all-b/in-b', 'ADDED w-all-a/in-a']);
    assert.deepEqual(onlyA.summary(), ['ADDED in-a'], 'the namespaced watch must not see other namespaces');
  });

  it('legacy /api/v1/watch/... and /apis/G/V/watch/... paths', async () => {
    const ns = 'w-legacy';
    await createNamespace(server, ns);
    const rv = await revision(server);
    const nsPath = await open(server, `/api/v1/watch/namespaces/${ns}/serviceaccounts?resourceVersion=${rv}`);
    const allPath = await open(server, `/api/v1/watch/serviceaccounts?resourceVersion=${rv}`);
    const onePath = await open(server, `/api/v1/watch/namespaces/${ns}/serviceaccounts/one?resourceVersion=${rv}`);
    const evPath = await open(server, `/apis/events.orch.io/v1/watch/namespaces/${ns}/events?resourceVersion=${rv}`);
    const nsWatch = await open(server, `/api/v1/watch/namespaces/${ns}?resourceVersion=${rv}`);
    await createSA(server, ns, 'other');
    await createSA(server, ns, 'one');
    const ev = await request(server, `/apis/events.orch.io/v1/namespaces/${ns}/events`, {
      method: 'POST',
      body: {
        apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: { name: 'ev-1' }, eventTime: '2025-01-02T03:04:05.000000Z',
        action: 'Test', reason: 'Testing', type: 'Normal', reportingController: 'example.com/test', reportingInstance: 'i-1',
        regarding: { apiVersion: 'v1', kind: 'ServiceAccount', namespace: ns, name: 'one' },
      },
    });
    expectStatus(ev, 201, 'create event');
    await update(server, `/api/v1/namespaces/${ns}`, (o) => { o.metadata.labels = { touched: 'yes' }; });
    await nsPath.waitForEvent('ADDED', 'one');
    await allPath.waitForEvent('ADDED', 'one');
    await onePath.waitForEvent('ADDED', 'one');
    const e = await evPath.waitForEvent('ADDED', 'ev-1');
    assert.equal(e.object.kind, 'Event');
    assert.equal(e.object.apiVersion, 'events.orch.io/v1');
    const n = await nsWatch.waitForEvent('MODIFIED', ns);
    assert.equal(n.object.kind, 'Namespace');
    assert.deepEqual(nsPath.summary(), ['ADDED other', 'ADDED one']);
    assert.deepEqual(onePath.summary(), ['ADDED one'], 'the single-object legacy watch sees only that object');
    assert.deepEqual(nsWatch.summary(), [`MODIFIED ${ns}`]);
  });

  it('a single object via fieldSelector=metadata.name=X', async () => {
    const ns = 'w-single';
    await createNamespace(server, ns);
    const base = `/api/v1/namespaces/${ns}/serviceaccounts`;
    await createSA(server, ns, 'target');
    await createSA(server, ns, 'bystander');
    const w = await open(server, `${base}?watch=true&fieldSelector=metadata.name%3Dtarget`);
    await w.waitForEvent('ADDED', 'target');
    await update(server, `${base}/bystander`, (o) => { o.metadata.labels = { x: '1' }; });
    await update(server, `${base}/target`, (o) => { o.metadata.labels = { x: '1' }; });
    await remove(server, `${base}/bystander`);
    await remove(server, `${base}/target`);
    await w.waitForEvent('DELETED', 'target');
    assert.deepEqual(w.summary(), ['ADDED target', 'MODIFIED target', 'DELETED target']);
    // and across namespaces by name
    const rv = await revision(server);
    const cross = await open(server, `/api/v1/serviceaccounts?watch=true&resourceVersion=${rv}&fieldSelector=metadata.name%3Dtarget`);
    await createSA(server, 'default', 'target');
    await createSA(server, ns, 'target');
    await cross.waitForCount(2);
    assert.deepEqual(cross.events.map((e) => `${e.object.metadata.namespace}/${e.object.metadata.name}`), ['default/target', `${ns}/target`]);
  });

  it('resourceVersion=0: synthetic ADDED for existing objects, then changes', async () => {
    const ns = 'w-rv0';
    await createNamespace(server, ns);
    await createSA(server, ns, 'a');
    await createSA(server, ns, 'b');
    const w = await open(server, `/api/v1/namespaces/${ns}/serviceaccounts?watch=true&resourceVersion=0`);
    await w.waitForCount(3);
    assert.deepEqual(w.summary().sort(), ['ADDED a', 'ADDED b', 'ADDED default']);
    await createSA(server, ns, 'c');
    await w.waitForEvent('ADDED', 'c');
    assert.deepEqual(w.summary().slice(3), ['ADDED c']);
  });

  it('resourceVersion=N: only changes after N, replayed from history, no synthetic events', async () => {
    const ns = 'w-rvn';
    await createNamespace(server, ns);
    const base = `/api/v1/namespaces/${ns}/serviceaccounts`;
    const a = await createSA(server, ns, 'a');
    await createSA(server, ns, 'b');
    await update(server, `${base}/a`, (o) => { o.metadata.labels = { v: '2' }; });
    await remove(server, `${base}/b`);
    const w = await open(server, `${base}?watch=true&resourceVersion=${a.metadata.resourceVersion}`);
    await w.waitForEvent('DELETED', 'b');
    await createSA(server, ns, 'c');
    await w.waitForEvent('ADDED', 'c');
    assert.deepEqual(w.summary(), ['ADDED b', 'MODIFIED a', 'DELETED b', 'ADDED c']);
    assertIncreasing(w.events, 'replayed then live');
    assert.ok(rvOf(w.events[0]!) > Number(a.metadata.resourceVersion));
  });

  it('resourceVersion unset: synthetic ADDED at a consistent latest version, then changes', async () => {
    const ns = 'w-unset';
    await createNamespace(server, ns);
    const made = await createSA(server, ns, 'just-made');
    const w = await open(server, `/api/v1/namespaces/${ns}/serviceaccounts?watch=true`);
    await w.waitForCount(2);
    assert.deepEqual(w.summary().sort(), ['ADDED default', 'ADDED just-made']);
    const added = w.events.find((e) => e.object.metadata.name === 'just-made')!;
    assert.equal(added.object.metadata.resourceVersion, made.metadata.resourceVersion);
  });

  it('a resourceVersion newer than the server has reached waits for it rather than failing', async () => {
    const ns = 'w-future';
    await createNamespace(server, ns);
    const rv = await revision(server);
    const w = watch(server, `/api/v1/namespaces/${ns}/serviceaccounts?watch=true&resourceVersion=${rv + 1}`);
    await sleep(300);
    assert.ok(!w.ended, 'the watch must not fail for a future version');
    if (w.status !== 0) assert.equal(w.status, 200);
    await createSA(server, ns, 'at-n'); // takes rv + 1: not after N, so not sent
    await createSA(server, ns, 'after-n');
    await w.waitForEvent('ADDED', 'after-n');
    assert.equal(w.status, 200);
    assert.deepEqual(w.summary(), ['ADDED after-n']);
  });

  it('a watch from a resourceVersion far ahead opens at once and ends at timeoutSeconds, with no bookmark older than its start', async () => {
    const rv = await revision(server);
    for (const http2 of [false, true]) {
      const w = await open(server, `/api/v1/namespaces/default/serviceaccounts?watch=true&resourceVersion=${rv + 1_000_000}&timeoutSeconds=1&allowWatchBookmarks=true`, { http2 });
      await w.waitForEnd(5000);
      assert.ok(w.cleanEnd, w.describe());
      assert.deepEqual(w.events, [], w.describe());
    }
  });

  it('a watch-list from a resourceVersion the server does not reach: one ERROR event, 504 Too large resource version', async () => {
    const ns = 'w-too-large';
    await createNamespace(server, ns);
    const rv = await revision(server);
    const future = rv + 1_000_000;
    const w = watch(server, `/api/v1/namespaces/${ns}/serviceaccounts?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${future}`);
    await w.waitForEnd(10_000);
    assert.equal(w.status, 200, w.describe());
    assert.ok(w.cleanEnd, w.describe());
    assert.equal(w.events.length, 1, w.describe());
    const ev = w.events[0]!;
    assert.equal(ev.type, 'ERROR');
    assert.equal(ev.object.kind, 'Status');
    assert.equal(ev.object.code, 504);
    assert.equal(ev.object.reason, 'Timeout');
    const m = /^Timeout: Too large resource version: (\d+), current: (\d+)$/.exec(ev.object.message);
    assert.ok(m, ev.object.message);
    assert.equal(Number(m[1]), future);
    assert.ok(Number(m[2]) >= rv && Number(m[2]) < future);
    assert.deepEqual(ev.object.details, { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 });
  });

  it('watch=True (the Python client), watch=yes and a bare ?watch all watch; a named GET with watch=true is a get', async () => {
    const ns = 'w-bools';
    await createNamespace(server, ns);
    for (const q of ['watch=True', 'watch=TRUE', 'watch=yes', 'watch=t', 'watch']) {
      const w = await open(server, `/api/v1/namespaces/${ns}/serviceaccounts?${q}&timeoutSeconds=1`);
      await w.waitForEnd(5000);
      assert.deepEqual(w.summary(), ['ADDED default'], `${q}: ${w.describe()}`);
    }
    const named = await request(server, `/api/v1/namespaces/${ns}/serviceaccounts/default?watch=true`);
    expectStatus(named, 200, 'named get with watch=true');
    assert.equal(named.json.kind, 'ServiceAccount');
  });

  it('a malformed integer parameter on a watch is 400 before any stream', async () => {
    const base = '/api/v1/namespaces/default/serviceaccounts?watch=true';
    for (const [q, message] of [
      ['&timeoutSeconds=abc', 'strconv.ParseInt: parsing "abc": invalid syntax'],
      ['&timeoutSeconds=', 'strconv.ParseInt: parsing "": invalid syntax'],
      ['&limit=ten', 'strconv.ParseInt: parsing "ten": invalid syntax'],
    ]) {
      const res = await request(server, `${base}${q}`);
      expectStatus(res, 400, q!);
      assert.equal(res.json.reason, 'BadRequest');
      assert.equal(res.json.message, message);
    }
  });

  it('sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true: ADDED..., BOOKMARK initial-events-end, then changes', async () => {
    const ns = 'w-sie';
    await createNamespace(server, ns);
    await Promise.all(['x', 'y', 'z'].map((n) => createSA(server, ns, n)));
    const before = await revision(server);
    const w = await open(server, `/api/v1/namespaces/${ns}/serviceaccounts?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`);
    await w.waitFor((e) => e.some((x) => x.type === 'BOOKMARK'), 'the initial-events-end bookmark');
    const idx = w.events.findIndex((x) => x.type === 'BOOKMARK');
    assert.equal(idx, 4, `4 ADDED then the bookmark: ${w.describe()}`);
    assert.deepEqual(w.events.slice(0, 4).map((e) => `${e.type} ${e.object.metadata.name}`).sort(), ['ADDED default', 'ADDED x', 'ADDED y', 'ADDED z']);
    const bm = w.events[idx]!.object;
    assert.equal(bm.kind, 'ServiceAccount');
    assert.equal(bm.apiVersion, 'v1');
    assert.equal(bm.metadata.annotations?.['orch.io/initial-events-end'], 'true');
    // the name client-go hard-codes, and the list blueprint its typed List over watch-list decodes
    assert.equal(bm.metadata.annotations?.['k8s.io/initial-events-end'], 'true');
    assert.equal(Buffer.from(bm.metadata.annotations?.['kubernetes.io/initial-events-list-blueprint'], 'base64').toString(),
      '{"kind":"ServiceAccountList","apiVersion":"v1","metadata":{},"items":null}\n');
    assert.ok(Number(bm.metadata.resourceVersion) >= before, `bookmark rv ${bm.metadata.resourceVersion} must be at least the consistent read taken at request start (${before})`);
    assert.equal(bm.metadata.name, undefined);
    await createSA(server, ns, 'later');
    await w.waitForEvent('ADDED', 'later');
    assert.ok(rvOf(w.events.at(-1)!) > Number(bm.metadata.resourceVersion));

    // with a given resourceVersion: the bookmark comes once synced to at least it
    const w2 = await open(server, `/api/v1/namespaces/${ns}/serviceaccounts?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${before}`);
    await w2.waitFor((e) => e.some((x) => x.type === 'BOOKMARK'), 'the initial-events-end bookmark');
    const b2 = w2.events.find((x) => x.type === 'BOOKMARK')!.object;
    assert.equal(b2.metadata.annotations?.['orch.io/initial-events-end'], 'true');
    assert.ok(Number(b2.metadata.resourceVersion) >= before);
    assert.equal(w2.events.filter((e) => e.type === 'ADDED').length, 5);
  });

  it('sendInitialEvents=false starts at the latest version without synthetic events', async () => {
    const ns = 'w-sie-false';
    await createNamespace(server, ns);
    await createSA(server, ns, 'old');
    const w = await open(server, `/api/v1/namespaces/${ns}/serviceaccounts?watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan`);
    await createSA(server, ns, 'new');
    await w.waitForEvent('ADDED', 'new');
    assert.deepEqual(w.summary(), ['ADDED new']);
  });

  it('invalid watch option combinations are 422', async () => {
    const base = '/api/v1/namespaces/default/serviceaccounts?watch=true';
    const cases: [string, string][] = [
      ['&sendInitialEvents=true', 'ListOptions.meta.orch.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'],
      ['&sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion=1', 'resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'],
      ['&resourceVersionMatch=NotOlderThan&resourceVersion=1', 'ListOptions.meta.orch.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'],
    ];
    for (const [q, message] of cases) {
      const res = await request(server, `${base}${q}`);
      assert.equal(res.status, 422, `${q}: ${res.status} ${res.body.slice(0, 300)}`);
      assert.equal(res.json?.kind, 'Status');
      assert.equal(res.json.reason, 'Invalid');
      assert.ok(res.json.message.includes(message), `${q}: ${res.json.message}`);
    }
  });

  it('a malformed selector on a watch is 400 before any stream', async () => {
    const res = await request(server, `/api/v1/namespaces/default/serviceaccounts?watch=true&labelSelector=${encodeURIComponent('a in (')}`);
    expectStatus(res, 400, 'malformed labelSelector');
    const res2 = await request(server, '/api/v1/namespaces/default/serviceaccounts?watch=true&fieldSelector=spec.x%3D1');
    expectStatus(res2, 400, 'unsupported field');
  });

  it('label selector transitions: stops matching -> DELETED (old content, new rv), starts matching -> ADDED', async () => {
    const ns = 'w-trans';
    await createNamespace(server, ns);
    const base = `/api/v1/namespaces/${ns}/serviceaccounts`;
    const rv = await revision(server);
    const w = await open(server, `${base}?watch=true&resourceVersion=${rv}&labelSelector=role%3Dx`);
    await createSA(server, ns, 'obj', { labels: { role: 'x' } });
    await createSA(server, ns, 'never', { labels: { role: 'y' } });
    const left = await update(server, `${base}/obj`, (o) => { o.metadata.labels = { role: 'y' }; });
    await update(server, `${base}/obj`, (o) => { o.metadata.labels = { role: 'y', other: '1' }; }); // not matching either side: nothing
    await update(server, `${base}/obj`, (o) => { o.metadata.labels = { role: 'x' }; });
    await update(server, `${base}/obj`, (o) => { o.metadata.labels = { role: 'x', more: '1' }; });
    await remove(server, `${base}/obj`);
    await w.waitFor((e) => e.filter((x) => x.type === 'DELETED').length >= 2, 'two DELETED');
    await createSA(server, ns, 'sentinel', { labels: { role: 'x' } });
    await w.waitForEvent('ADDED', 'sentinel');
    assert.deepEqual(w.summary(), ['ADDED obj', 'DELETED obj', 'ADDED obj', 'MODIFIED obj', 'DELETED obj', 'ADDED sentinel']);
    const gone = w.events[1]!;
    assert.deepEqual(gone.object.metadata.labels, { role: 'x' }, 'the DELETED for a selector exit carries the last matching content');
    assert.equal(gone.object.metadata.resourceVersion, left.metadata.resourceVersion, '...at the resourceVersion of the change');
    assertIncreasing(w.events, 'transitions');
  });

  it('deleting a namespace produces DELETED events for everything in it', async () => {
    const ns = 'w-nsdel';
    await createNamespace(server, ns);
    await createSA(server, ns, 'a');
    await createSA(server, ns, 'b');
    const sec = await request(server, `/api/v1/namespaces/${ns}/secrets`, { method: 'POST', body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { k: 'dg==' } } });
    expectStatus(sec, 201, 'create secret');
    const rv = await revision(server);
    const sas = await open(server, `/api/v1/namespaces/${ns}/serviceaccounts?watch=true&resourceVersion=${rv}`);
    const secrets = await open(server, `/api/v1/secrets?watch=true&resourceVersion=${rv}`);
    const nsw = await open(server, `/api/v1/namespaces?watch=true&resourceVersion=${rv}&fieldSelector=metadata.name%3D${ns}`);
    await remove(server, `/api/v1/namespaces/${ns}`);
    await sas.waitFor((e) => e.filter((x) => x.type === 'DELETED').length >= 3, 'three DELETED', 10_000);
    assert.deepEqual(sas.summary().sort(), ['DELETED a', 'DELETED b', 'DELETED default']);
    await secrets.waitForEvent('DELETED', 's', 10_000);
    await nsw.waitForEvent('DELETED', ns, 10_000);
    const types = nsw.events.map((e) => e.type);
    assert.equal(types[0], 'MODIFIED', `namespace: ${nsw.describe()}`);
    assert.ok(nsw.events[0]!.object.metadata.deletionTimestamp, 'the first MODIFIED sets deletionTimestamp');
    assert.equal(nsw.events[0]!.object.status?.phase, 'Terminating');
    assert.equal(types.at(-1), 'DELETED');
  });

  it('finalizer-driven deletion: MODIFIED (deletionTimestamp set), then DELETED when the last finalizer goes', async () => {
    const ns = 'w-fin';
    await createNamespace(server, ns);
    const base = `/api/v1/namespaces/${ns}/serviceaccounts`;
    await createSA(server, ns, 'held', { finalizers: ['example.com/hold'] });
    const rv = await revision(server);
    const w = await open(server, `${base}?watch=true&resourceVersion=${rv}`);
    await remove(server, `${base}/held`);
    const m = await w.waitForEvent('MODIFIED', 'held');
    assert.ok(m.object.metadata.deletionTimestamp, 'MODIFIED carries deletionTimestamp');
    assert.deepEqual(m.object.metadata.finalizers, ['example.com/hold']);
    await update(server, `${base}/held`, (o) => { o.metadata.finalizers = []; });
    await w.waitForEvent('DELETED', 'held');
    await createSA(server, ns, 'sentinel');
    await w.waitForEvent('ADDED', 'sentinel');
    assert.deepEqual(w.summary(), ['MODIFIED held', 'DELETED held', 'ADDED sentinel']);
    assertIncreasing(w.events, 'finalizer deletion');
  });

  it('events go out exactly once each, in resourceVersion order, through a burst of concurrent writes', async () => {
    const ns = 'w-burst';
    await createNamespace(server, ns);
    const base = `/api/v1/namespaces/${ns}/serviceaccounts`;
    const rv = await revision(server);
    const w = await open(server, `${base}?watch=true&resourceVersion=${rv}`);
    const w2 = await open(server, `${base}?watch=true&resourceVersion=${rv}`, { http2: true });
    const rvs = new Set<string>();
    await Promise.all(Array.from({ length: 40 }, async (_, i) => {
      const name = `o-${i}`;
      rvs.add((await createSA(server, ns, name)).metadata.resourceVersion);
      rvs.add((await update(server, `${base}/${name}`, (o) => { o.metadata.labels = { i: String(i) }; })).metadata.resourceVersion);
      if (i % 3 === 0) {
        const res = await request(server, `${base}/${name}`, { method: 'DELETE' });
        expectStatus(res, 200, 'delete');
      }
    }));
    const expected = 40 + 40 + 14;
    await w.waitForCount(expected, 10_000);
    await w2.waitForCount(expected, 10_000);
    await sleep(200);
    for (const s of [w, w2]) {
      assert.equal(s.events.length, expected, 'exactly once each');
      assertIncreasing(s.events, 'burst');
      for (const v of rvs) assert.ok(s.events.some((e) => e.object.metadata.resourceVersion === v), `missing rv ${v}`);
      // replaying the stream gives the final state
      const state = new Map<string, string>();
      for (const e of s.events) {
        if (e.type === 'DELETED') state.delete(e.object.metadata.name); else state.set(e.object.metadata.name, e.object.metadata.resourceVersion);
      }
      const now = await request(server, base);
      const live = new Map<string, string>(now.json.items.filter((o: Obj) => o.metadata.name !== 'default').map((o: Obj) => [o.metadata.name, o.metadata.resourceVersion]));
      assert.deepEqual([...state.entries()].sort(), [...live.entries()].sort());
    }
    assert.deepEqual(w.events.map(rvOf), w2.events.map(rvOf), 'HTTP/1.1 and HTTP/2 see the same sequence');
  });

  describe('framing, timeouts and bookmarks', () => {
    const ns = 'w-frame';
    before(async () => { await createNamespace(server, ns); });

    it('HTTP/1.1: Transfer-Encoding chunked, one JSON document per line', async () => {
      const w = await open(server, `/api/v1/namespaces/${ns}/serviceaccounts?watch=true`);
      assert.equal(w.headers['transfer-encoding'], 'chunked');
      assert.equal(w.headers['content-length'], undefined);
      assert.match(String(w.headers['content-type']), /^application\/json/);
      await createSA(server, ns, 'f1');
      await createSA(server, ns, 'f2');
      await w.waitForEvent('ADDED', 'f2');
      assert.deepEqual(w.garbage, []);
      assert.equal(w.lines.length, w.events.length);
      for (const line of w.lines) {
        assert.ok(!line.includes('\n'));
        const ev = JSON.parse(line);
        assert.deepEqual(Object.keys(ev), ['type', 'object']);
      }
    });

    it('timeoutSeconds=2 ends the stream cleanly, not before 2 s', async () => {
      const w = await open(server, `/api/v1/namespaces/${ns}/serviceaccounts?watch=true&timeoutSeconds=2`);
      await w.waitForEnd(30_000);
      // a lower bound only: a timer never fires early, while a busy machine can make it late
      const took = w.endedAt - w.openedAt;
      assert.ok(took >= 1500, `ended after ${took} ms`);
      assert.ok(w.cleanEnd, 'a clean end of body (terminating chunk), not a reset');
      assert.equal(w.error, undefined);
      assert.deepEqual(w.garbage, []);
    });

    it('allowWatchBookmarks=true&timeoutSeconds=2: a BOOKMARK arrives just before the end', async () => {
      const w = await open(server, `/api/v1/namespaces/${ns}/serviceaccounts?watch=true&allowWatchBookmarks=true&timeoutSeconds=2`);
      await createSA(server, ns, 'bm-1');
      await w.waitForEnd(6000);
      assert.ok(w.cleanEnd);
      const last = w.events.at(-1)!;
      assert.equal(last.type, 'BOOKMARK', w.describe());
      assert.equal(last.object.kind, 'ServiceAccount');
      assert.equal(last.object.apiVersion, 'v1');
      assert.deepEqual(Object.keys(last.object.metadata).filter((k) => k !== 'creationTimestamp'), ['resourceVersion'], 'a bookmark carries only metadata.resourceVersion');
      const maxRv = Math.max(...w.events.filter((e) => e.type !== 'BOOKMARK').map(rvOf));
      assert.ok(Number(last.object.metadata.resourceVersion) >= maxRv, 'the bookmark is at least the last event sent');
      assert.ok(last.object.metadata.annotations?.['orch.io/initial-events-end'] === undefined);
    });

    it('without allowWatchBookmarks no BOOKMARK is sent', async () => {
      const w = await open(server, `/api/v1/namespaces/${ns}/serviceaccounts?watch=true&timeoutSeconds=1`);
      await w.waitForEnd(5000);
      assert.ok(!w.events.some((e) => e.type === 'BOOKMARK'));
    });

    it('HTTP/2: events stream as they happen, timeoutSeconds ends the stream, bookmark before the end', async () => {
      const w = await open(server, `/api/v1/namespaces/${ns}/serviceaccounts?watch=true&allowWatchBookmarks=true&timeoutSeconds=3`, { http2: true });
      assert.match(String(w.headers['content-type']), /^application\/json/);
      await w.waitForEvent('ADDED', 'default');
      const made = await createSA(server, ns, 'h2-live');
      const e = await w.waitForEvent('ADDED', 'h2-live', 2000);
      assert.equal(e.object.metadata.resourceVersion, made.metadata.resourceVersion);
      await update(server, `/api/v1/namespaces/${ns}/serviceaccounts/h2-live`, (o) => { o.metadata.labels = { h2: 'y' }; });
      await w.waitForEvent('MODIFIED', 'h2-live', 2000);
      await remove(server, `/api/v1/namespaces/${ns}/serviceaccounts/h2-live`);
      await w.waitForEvent('DELETED', 'h2-live', 2000);
      await w.waitForEnd(6000);
      assert.ok(w.cleanEnd, 'END_STREAM, not RST_STREAM');
      assert.equal(w.events.at(-1)!.type, 'BOOKMARK');
      assert.deepEqual(w.garbage, []);
    });

    it('HTTP/2: many watches share one connection', async () => {
      const session = http2Connect(server.url, { ca: server.admin.ca, cert: server.admin.cert, key: server.admin.key });
      try {
        const rv = await revision(server);
        const ws = Array.from({ length: 10 }, () => WatchStream.http2(server, `/api/v1/namespaces/${ns}/serviceaccounts?watch=true&resourceVersion=${rv}`, session));
        await Promise.all(ws.map((w) => w.opened));
        for (const w of ws) assert.equal(w.status, 200);
        await createSA(server, ns, 'shared');
        await Promise.all(ws.map((w) => w.waitForEvent('ADDED', 'shared')));
        for (const w of ws) w.close();
      } finally {
        session.close();
      }
    });
  });

  it('a stalled watcher among 20 does not delay the others and is ended by the server', { timeout: 60_000 }, async () => {
    const ns = 'w-stall';
    await createNamespace(server, ns);
    const rv = await revision(server);
    const path = `/api/v1/namespaces/${ns}/secrets?watch=true&resourceVersion=${rv}`;
    const readers: WatchStream[] = [];
    for (let i = 0; i < 19; i++) {
      const w = await open(server, path);
      w.parse = false; // 19 x tens of MB of JSON: sniff type/name/rv instead of parsing
      readers.push(w);
    }
    const stalled = await open(server, path);
    stalled.pause();
    stalled.parse = false;

    const count = 120;
    const payload = Buffer.alloc(200 * 1024, 7).toString('base64'); // ~270 KiB per event
    for (let i = 0; i < count; i += 6) {
      await Promise.all(Array.from({ length: Math.min(6, count - i) }, async (_, j) => {
        const res = await request(server, `/api/v1/namespaces/${ns}/secrets`, {
          method: 'POST', body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: `big-${String(i + j).padStart(3, '0')}` }, data: { blob: payload } },
        });
        expectStatus(res, 201, 'create big secret');
      }));
    }
    // every write was acknowledged while one watcher read nothing, and the readers get every event
    // before that watcher reads again: it holds up neither (bench/stalled-watch.ts measures the lag)
    await Promise.all(readers.map((w) => w.waitForCount(count, 30_000)));
    for (const w of readers) {
      assert.equal(w.events.length, count);
      assertIncreasing(w.events, 'reader');
      assert.ok(!w.ended, 'reading watchers stay open');
    }
    // the stalled one: the server must have given up on it. Reading now drains what was buffered,
    // then the stream ends; it holds a gap-free prefix of the events, not all of them.
    stalled.resume();
    await stalled.waitForEnd(15_000);
    assert.ok(stalled.events.length < count, `the stalled watcher was not cut off: it got all ${stalled.events.length} events`);
    assertIncreasing(stalled.events, 'stalled prefix');
    const readerRvs = readers[0]!.events.map((e) => e.object.metadata.resourceVersion);
    assert.deepEqual(stalled.events.map((e) => e.object.metadata.resourceVersion), readerRvs.slice(0, stalled.events.length), 'a prefix without gaps');
    // and the others keep working
    await request(server, `/api/v1/namespaces/${ns}/secrets`, { method: 'POST', body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'after' }, data: { k: 'dg==' } } });
    await Promise.all(readers.map((w) => w.waitForCount(count + 1)));
    for (const w of readers) w.close();
  });
});

describe('watch from a version older than the kept history (--watch-history 1s)', () => {
  let server: TestServer;
  before(async () => { server = await startServer({ args: ['--watch-history', '1s'] }); });
  after(async () => { closeAll(); await server?.dispose(); });

  it('HTTP 200 with one ERROR event: Status 410 Expired "too old resource version: N (M)", then the stream ends', async () => {
    const ns = 'h-old';
    await createNamespace(server, ns);
    const first = await createSA(server, ns, 'first');
    const early = Number(first.metadata.resourceVersion);
    await createSA(server, ns, 'second');
    await sleep(2500);
    await createSA(server, ns, 'third');
    for (const http2 of [false, true]) {
      const w = watch(server, `/api/v1/namespaces/${ns}/serviceaccounts?watch=true&resourceVersion=${early}`, { http2 });
      await w.waitForEnd(5000);
      assert.equal(w.status, 200, w.describe());
      assert.equal(w.events.length, 1, w.describe());
      const ev = w.events[0]!;
      assert.equal(ev.type, 'ERROR');
      assert.equal(ev.object.kind, 'Status');
      assert.equal(ev.object.apiVersion, 'v1');
      assert.equal(ev.object.status, 'Failure');
      assert.equal(ev.object.code, 410);
      assert.equal(ev.object.reason, 'Expired');
      const m = /^too old resource version: (\d+) \((\d+)\)$/.exec(ev.object.message);
      assert.ok(m, `message: ${ev.object.message}`);
      assert.equal(Number(m[1]), early);
      assert.ok(Number(m[2]) > early);
      assert.ok(w.cleanEnd, 'the stream ends cleanly after the ERROR');
      // the version named in the message is one the client can resume from
      const resumed = await open(server, `/api/v1/namespaces/${ns}/serviceaccounts?watch=true&resourceVersion=${m[2]}`, { http2 });
      await sleep(300);
      assert.ok(!resumed.events.some((e) => e.type === 'ERROR'), `resuming from ${m[2]}: ${resumed.describe()}`);
      resumed.close();
    }
  });

  it('a quiet server still forgets versions older than the window: 410 without any later write', async () => {
    const ns = 'h-quiet';
    await createNamespace(server, ns);
    const first = await createSA(server, ns, 'first');
    const early = Number(first.metadata.resourceVersion);
    await createSA(server, ns, 'second');
    await sleep(2500); // past the 1s window; nothing is written meanwhile
    const w = watch(server, `/api/v1/namespaces/${ns}/serviceaccounts?watch=true&resourceVersion=${early}`);
    await w.waitForEnd(5000);
    assert.equal(w.events.length, 1, w.describe());
    assert.equal(w.events[0]!.type, 'ERROR');
    assert.equal(w.events[0]!.object.code, 410);
    assert.match(w.events[0]!.object.message, new RegExp(`^too old resource version: ${early} \\(\\d+\\)$`));
  });
});

describe('watch streams on server shutdown', () => {
  let server: TestServer;
  before(async () => { server = await startServer(); });
  after(async () => { closeAll(); await server?.dispose(); });

  it('every stream ends cleanly (with a last bookmark where asked) when the server stops', async () => {
    const h1 = await open(server, '/api/v1/serviceaccounts?watch=true&allowWatchBookmarks=true');
    const h2 = await open(server, '/api/v1/serviceaccounts?watch=true&allowWatchBookmarks=true', { http2: true });
    const plain = await open(server, '/api/v1/namespaces?watch=true');
    await h1.waitForEvent('ADDED', 'default');
    await h2.waitForEvent('ADDED', 'default');
    const code = await server.stop();
    await Promise.all([h1, h2, plain].map((w) => w.waitForEnd(10_000)));
    assert.equal(code, 0);
    for (const [w, proto] of [[h1, 'HTTP/1.1'], [h2, 'HTTP/2']] as const) {
      assert.ok(w.cleanEnd, `${proto} clean end: ${w.describe()}`);
      assert.equal(w.events.at(-1)!.type, 'BOOKMARK', `${proto}: the last event before shutdown: ${w.describe()}`);
    }
    assert.ok(plain.cleanEnd, `plain: ${plain.describe()}`);
  });
});

describe('watch without timeoutSeconds (--min-request-timeout 1)', () => {
  let server: TestServer;
  before(async () => { server = await startServer({ args: ['--min-request-timeout', '1'] }); });
  after(async () => { closeAll(); await server?.dispose(); });

  it('the server picks a timeout between --min-request-timeout and twice that, and ends the stream cleanly', async () => {
    const ws = await Promise.all(Array.from({ length: 6 }, (_, i) =>
      open(server, '/api/v1/namespaces/default/serviceaccounts?watch=true&allowWatchBookmarks=true', { http2: i % 2 === 1 })));
    await Promise.all(ws.map((w) => w.waitForEnd(30_000)));
    for (const w of ws) {
      // a lower bound only: a timer never fires early, while a busy machine can make it late
      const took = w.endedAt - w.openedAt;
      assert.ok(took >= 900, `ended after ${took} ms`);
      assert.ok(w.cleanEnd, w.describe());
      assert.equal(w.events.at(-1)?.type, 'BOOKMARK', `a bookmark just before the server ends the watch: ${w.describe()}`);
    }
  });
});
