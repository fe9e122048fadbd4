/**
 * Clients that stop reading, against real servers with small output budgets. A watcher that never
 * reads is cut once its backlog passes the bound (HTTP/1.1: the connection closes mid-response;
 * HTTP/2: only its stream is reset; WebSocket: dropped), while a reading watcher receives every
 * event in order. A list nobody reads holds one window of its body, keeps its in-flight seat until
 * it is handed off or its connection is gone, and is cut at its deadline. Past the total budget,
 * the connection holding the most is cut first. Objects carry 192 KiB annotations so that a few
 * dozen outgrow what the kernel's socket buffers absorb (about 4 MiB on loopback).
 */
import assert from 'node:assert/strict';
import { connect, constants, type ClientHttp2Session } from 'node:http2';
import { after, before, describe, it } from 'node:test';
import { createNamespace, expectStatus, sleep } from '../support/api.js';
import { userFor as userCredentials } from '../support/certs.js';
import { request, startServer, type Credentials, type TestServer } from '../support/server.js';
import { h1Stream, h2Stream, webSocketStream, type HeldStream } from '../support/streams.js';

const budget = 256 * 1024;
const blob = 'x'.repeat(192 * 1024);
const cutLog = 'cut a response whose client is not reading';

async function until<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** Creates `count` ServiceAccounts of about 192 KiB each (or `size`); returns their names in commit order. */
async function writeBig(server: TestServer, ns: string, from: number, count: number, o: { labels?: (i: number) => Record<string, string>; size?: number } = {}): Promise<string[]> {
  const names: string[] = [];
  const annotations = { 'slow.orch.io/blob': o.size === undefined ? blob : 'x'.repeat(o.size) };
  for (let i = from; i < from + count; i++) {
    const name = `big-${String(i).padStart(4, '0')}`;
    const r = await request(server, `/api/v1/namespaces/${ns}/serviceaccounts`, {
      method: 'POST', body: { metadata: { name, labels: o.labels?.(i) ?? {}, annotations } },
    });
    expectStatus(r, 201, `create ${name}`);
    names.push(name);
  }
  return names;
}

async function revisionOf(server: TestServer, path: string): Promise<string> {
  const r = await request(server, path);
  expectStatus(r, 200, `list ${path}`);
  return r.json.metadata.resourceVersion as string;
}

function session(server: TestServer): ClientHttp2Session {
  const { ca, cert, key } = server.admin;
  const s = connect(server.url, { ca, cert, key });
  s.on('error', () => { /* surfaces on its streams */ });
  return s;
}

/** What a reading watcher must have: every event, in commit order. */
async function receivesAll(w: HeldStream, names: string[]): Promise<void> {
  await until(`the reading watcher to receive all ${names.length} events`, () => w.events.length >= names.length);
  assert.deepEqual(w.events.map((e) => e.name), names, 'every event, in order');
  assert.ok(w.events.every((e, i) => e.type === 'ADDED' && (i === 0 || e.resourceVersion > w.events[i - 1].resourceVersion)));
}

/** What a cut watcher received before the cut: a strict prefix of the events, in order. */
function receivedAPrefix(w: HeldStream, names: string[]): void {
  assert.ok(w.events.length < names.length, `cut before the end of its backlog (${w.events.length} of ${names.length} events)`);
  assert.deepEqual(w.events.map((e) => e.name), names.slice(0, w.events.length));
}

describe('slow clients (--max-unsent-bytes-per-connection 256 KiB)', () => {
  let server: TestServer;
  before(async () => { server = await startServer({ args: ['--max-unsent-bytes-per-connection', String(budget)] }); });
  after(async () => { await server?.dispose(); });

  it('cuts an HTTP/1.1 watcher that never reads once its backlog passes the bound; a reading watcher gets every event in order', { timeout: 120_000 }, async () => {
    const ns = 'h1-watch';
    await createNamespace(server, ns);
    const collection = `/api/v1/namespaces/${ns}/serviceaccounts`;
    // timeoutSeconds ends a watch that is never cut, so a server without the bound fails rather than hangs
    const path = `${collection}?watch=1&timeoutSeconds=60&resourceVersion=${await revisionOf(server, collection)}`;
    const reader = await h1Stream(server, path, { stalled: false });
    const stalled = await h1Stream(server, path, { stalled: true });
    const names = await writeBig(server, ns, 0, 50);
    await receivesAll(reader, names);
    assert.equal(reader.ending, undefined, 'the reading watcher is still open');

    stalled.resume();
    const ending = await stalled.closed;
    assert.equal(ending.complete, false, 'its connection was closed mid-response, its backlog dropped, not ended gracefully');
    receivedAPrefix(stalled, names);
    await until('the cut to be logged', () => server.logs.some((l) => l.includes(cutLog)));
  });

  it('resets only the stalled HTTP/2 stream: the reading watcher on the same session gets every event, and the session serves on', { timeout: 120_000 }, async () => {
    const ns = 'h2-watch';
    await createNamespace(server, ns);
    const collection = `/api/v1/namespaces/${ns}/serviceaccounts`;
    const path = `${collection}?watch=1&timeoutSeconds=60&resourceVersion=${await revisionOf(server, collection)}`;
    const s = session(server);
    try {
      const reader = await h2Stream(s, path, { stalled: false });
      const stalled = await h2Stream(s, path, { stalled: true });
      // small events: the stalled stream's backlog passes the budget long before a reader's one event could
      const names = await writeBig(server, ns, 0, 40, { size: 16 * 1024 });
      await receivesAll(reader, names);
      const ending = await stalled.closed;
      assert.equal(ending.rstCode, constants.NGHTTP2_CANCEL, 'reset with CANCEL');
      assert.ok(stalled.events.length < names.length);

      const more = await writeBig(server, ns, 40, 1, { size: 16 * 1024 });
      await receivesAll(reader, [...names, ...more]);
      const again = await h2Stream(s, `${collection}/${names[0]}`, { stalled: false, parseEvents: false });
      await again.closed;
      assert.equal(again.status, 200, 'the session still serves requests');
      assert.equal(reader.ending, undefined);
    } finally {
      s.close();
    }
  });

  it('terminates a WebSocket watcher that never reads', { timeout: 120_000 }, async () => {
    const ns = 'ws-watch';
    await createNamespace(server, ns);
    const collection = `/api/v1/namespaces/${ns}/serviceaccounts`;
    const path = `${collection}?watch=1&timeoutSeconds=60&resourceVersion=${await revisionOf(server, collection)}`;
    const reader = await webSocketStream(server, path, { stalled: false });
    const stalled = await webSocketStream(server, path, { stalled: true });
    const names = await writeBig(server, ns, 0, 50);
    await receivesAll(reader, names);
    stalled.resume();
    const ending = await stalled.closed;
    assert.equal(ending.code, 1006, 'dropped without a close frame (a graceful end says 1000)');
    receivedAPrefix(stalled, names);
    reader.destroy();
  });

  it('writes a watch\'s initial events as its client takes them: a slow reader of a collection far over the budget is never cut', { timeout: 180_000 }, async () => {
    const ns = 'initial';
    await createNamespace(server, ns);
    // 12 MiB of initial events, well past what the kernel's buffers absorb, in 48 KiB events (a
    // catch-up batch then stays within the budget's window)
    const initial: string[] = [];
    for (let i = 0; i < 256; i += 8) initial.push(...(await Promise.all(Array.from({ length: 8 }, (_, j) => writeBig(server, ns, i + j, 1, { size: 48 * 1024 })))).flat());
    initial.sort();
    // no resourceVersion: the watch starts with every object as ADDED
    const reader = await h1Stream(server, `/api/v1/namespaces/${ns}/serviceaccounts?watch=1&timeoutSeconds=120`, { stalled: false, pauseMs: 5 });
    // committed while the initial events are still on their way: they must wait behind them, not pile onto the socket
    const live = await writeBig(server, ns, 256, 3, { size: 8 * 1024 });
    const expected = [...initial, ...live];
    await until('the initial and live events', () => reader.events.filter((e) => e.name.startsWith('big-')).length >= expected.length || reader.ending, 120_000);
    assert.equal(reader.ending, undefined, 'never cut');
    assert.deepEqual(reader.events.map((e) => e.name).filter((n) => n.startsWith('big-')), expected, 'initial events in key order, then live ones');
    reader.destroy();
  });

  it('cuts the HTTP/2 list streams that take a session past its budget; the session and its other streams live on', { timeout: 120_000 }, async () => {
    const ns = 'h2-lists';
    await createNamespace(server, ns);
    await writeBig(server, ns, 0, 20);
    const path = `/api/v1/namespaces/${ns}/serviceaccounts`;
    const s = session(server);
    try {
      // each stream holds at most half the budget written ahead: eight of them cannot all keep theirs
      const lists = await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map(() => h2Stream(s, path, { stalled: true, parseEvents: false })));
      await until('a list stream to be reset', () => lists.some((l) => l.ending !== undefined));
      const version = await h2Stream(s, '/version', { stalled: false, parseEvents: false });
      await version.closed;
      assert.equal(version.status, 200, 'the session still serves requests');
      const cut = lists.filter((l) => l.ending !== undefined);
      assert.ok(cut.every((l) => l.ending?.rstCode === constants.NGHTTP2_CANCEL), 'reset with CANCEL');
      assert.ok(cut.length < lists.length, `the streams within the budget are still open (${cut.length} of ${lists.length} cut)`);
      await until('the cuts to be logged', () => server.logs.some((l) => l.includes(cutLog) && l.includes('"reason":"connection budget"')));
    } finally {
      s.close();
    }
  });
});

describe('in-flight seats of lists nobody reads (--max-requests-inflight 1)', () => {
  let server: TestServer;
  let jane: Credentials;
  const ns = 'lists';
  const list = `/api/v1/namespaces/${ns}/serviceaccounts`;
  let fullBytes = 0;
  let fullCount = 0;
  before(async () => {
    // a request deadline far away: only the client leaving, or a `timeout` it sends, ends a stalled list
    server = await startServer({ args: ['--max-unsent-bytes-per-connection', String(budget), '--max-requests-inflight', '1', '--request-timeout', '10m', '--enable-priority-and-fairness=false'] });
    jane = userCredentials(server, 'jane', ['dev']); // system:masters would be exempt from the limit
    await createNamespace(server, ns);
    await writeBig(server, ns, 0, 80);
    const whole = await request(server, list);
    expectStatus(whole, 200, 'list');
    fullBytes = Buffer.byteLength(whole.body);
    fullCount = whole.json.items.length;
  });
  after(async () => { await server?.dispose(); });

  const probe = () => request(server, `${list}/big-0000`, { credentials: jane });

  it('serves a list in chunks a reading client takes whole, and frees the seat when it is handed off', async () => {
    const reader = await h1Stream(server, list, { stalled: false, credentials: jane, parseEvents: false });
    const ending = await reader.closed;
    assert.equal(ending.complete, true);
    assert.equal(reader.headers['content-length'], undefined, 'streamed, not measured first');
    assert.equal(JSON.parse(Buffer.concat(reader.bytes).toString('utf8')).items.length, fullCount);
    expectStatus(await probe(), 200, 'the next request once the list was handed off');
  });

  it('holds the seat while the list is not handed off, and frees it once the client drops the connection', { timeout: 120_000 }, async () => {
    const stalled = await h1Stream(server, list, { stalled: true, credentials: jane, parseEvents: false });
    assert.equal(stalled.status, 200);
    expectStatus(await probe(), 429, 'the only seat is held by the list nobody reads');
    stalled.destroy();
    await until('the seat to be released', async () => (await probe()).status === 200);
  });

  it('cuts a list nobody reads at its deadline, having held one window of it, not its body', { timeout: 120_000 }, async () => {
    const stalled = await h1Stream(server, `${list}?timeout=2s`, { stalled: true, credentials: jane, parseEvents: false });
    expectStatus(await probe(), 429, 'the seat is held until the deadline');
    await until('the seat to be released by the cut', async () => (await probe()).status === 200);
    stalled.resume();
    const ending = await stalled.closed;
    assert.equal(ending.complete, false, 'the connection was closed mid-body');
    const received = Buffer.concat(stalled.bytes).length;
    // whatever the server had queued reached the client after the cut: far less than the body
    assert.ok(received < fullBytes / 2, `received ${received} of ${fullBytes} bytes`);
  });
});

describe('the total budget (--max-unsent-bytes 1 MiB, no per-connection budget)', () => {
  let server: TestServer;
  before(async () => { server = await startServer({ args: ['--max-unsent-bytes', String(1024 * 1024), '--max-unsent-bytes-per-connection', '0'] }); });
  after(async () => { await server?.dispose(); });

  it('cuts the connection holding the most first; a smaller stalled one survives and gets all its events', { timeout: 120_000 }, async () => {
    const ns = 'total';
    await createNamespace(server, ns);
    const collection = `/api/v1/namespaces/${ns}/serviceaccounts`;
    const from = `resourceVersion=${await revisionOf(server, collection)}&timeoutSeconds=60`;
    const large = session(server);
    const small = session(server);
    try {
      const reader = await h1Stream(server, `${collection}?watch=1&${from}`, { stalled: false });
      const everything = await h2Stream(large, `${collection}?watch=1&${from}`, { stalled: true });
      const picked = await h2Stream(small, `${collection}?watch=1&${from}&labelSelector=pick%3Dyes`, { stalled: true });
      // 16 events of 192 KiB: 3 MiB behind for the first stream, a quarter of that for the second
      const names = await writeBig(server, ns, 0, 16, { labels: (i) => ({ pick: i % 4 === 0 ? 'yes' : 'no' }) });
      await receivesAll(reader, names);
      const ending = await everything.closed;
      assert.equal(ending.rstCode, constants.NGHTTP2_CANCEL, 'the largest holder is cut');
      picked.resume();
      const mine = names.filter((_, i) => i % 4 === 0);
      await receivesAll(picked, mine);
      assert.equal(picked.ending, undefined, 'the smaller holder was never cut');
      await until('the cut to be logged', () => server.logs.some((l) => l.includes(cutLog) && l.includes('"reason":"total budget"')));
      reader.destroy();
    } finally {
      large.close();
      small.close();
    }
  });
});
