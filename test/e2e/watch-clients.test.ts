/**
 * Watch through the clients people use: a client-node informer kept exactly in sync through 1,000
 * mixed writes and a forced 410; `kubectl get -w`; a WebSocket watch (one event per message); a
 * protobuf watch stream decoded frame by frame.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { request as httpsRequest } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, KubeConfig, makeInformer, type V1ServiceAccount, type V1ServiceAccountList } from '@kubernetes/client-node';
import WebSocket from 'ws';
import { serviceAccountKind } from '../../src/api/core/service-account.js';
import { decodeEnvelope } from '../../src/codec/proto/decode.js';
import { request, startServer, type TestServer } from '../support/server.js';

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function createNamespace(server: TestServer, name: string): Promise<void> {
  const r = await request(server, '/api/v1/namespaces', { method: 'POST', body: { metadata: { name } } });
  assert.equal(r.status, 201, r.body);
}

describe('watch with real clients', () => {
  let server: TestServer;
  before(async () => { server = await startServer({ args: ['--watch-history', '2s'] }); });
  after(async () => { await server.dispose(); });

  it('a client-node informer stays exactly in sync through a forced 410 and 1,000 mixed writes', async () => {
    const ns = 'informer';
    await createNamespace(server, ns);
    const path = `/api/v1/namespaces/${ns}/serviceaccounts`;
    for (let i = 0; i < 20; i++) await request(server, path, { method: 'POST', body: { metadata: { name: `early-${i}` } } });
    const stale = (await request(server, path)).json.metadata.resourceVersion as string;
    // push `stale` out of the change history: more writes, a wait past --watch-history, one more write
    for (let i = 0; i < 5; i++) await request(server, path, { method: 'POST', body: { metadata: { name: `later-${i}` } } });
    await new Promise((r) => setTimeout(r, 2500));
    await request(server, path, { method: 'POST', body: { metadata: { name: 'trigger' } } });

    const kc = new KubeConfig();
    kc.loadFromFile(server.kubeconfig);
    const api = kc.makeApiClient(CoreV1Api);
    let lists = 0;
    const informer = makeInformer<V1ServiceAccount>(kc, path, async () => {
      const list: V1ServiceAccountList = await api.listNamespacedServiceAccount({ namespace: ns });
      // the first list claims a version the server no longer holds history for: the watch gets 410
      if (lists++ === 0) list.metadata = { ...list.metadata, resourceVersion: stale };
      return list;
    });
    const errors: unknown[] = [];
    informer.on('error', (err) => errors.push(err));
    await informer.start();
    await until('the informer to relist after the 410', () => lists >= 2);

    // 1,000 mixed writes: creates, label updates, deletes
    const names: string[] = [];
    let ops = 0;
    let seq = 0;
    while (ops < 1000) {
      const pick = names.length < 5 ? 0 : ops % 3;
      if (pick === 0) {
        const name = `sa-${seq++}`;
        const r = await request(server, path, { method: 'POST', body: { metadata: { name, labels: { gen: '0' } } } });
        assert.equal(r.status, 201);
        names.push(name);
      } else if (pick === 1) {
        const name = names[ops % names.length];
        const cur = (await request(server, `${path}/${name}`)).json;
        cur.metadata.labels = { gen: String(ops) };
        assert.equal((await request(server, `${path}/${name}`, { method: 'PUT', body: cur })).status, 200);
      } else {
        const name = names.splice(ops % names.length, 1)[0];
        assert.equal((await request(server, `${path}/${name}`, { method: 'DELETE' })).status, 200);
      }
      ops++;
    }

    const truth = (await request(server, path)).json as { items: Array<{ metadata: { name: string; resourceVersion: string } }> };
    const expected = truth.items.map((i) => `${i.metadata.name}@${i.metadata.resourceVersion}`).sort();
    await until('the informer cache to equal the server', () => {
      const cached = informer.list().map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`).sort();
      return JSON.stringify(cached) === JSON.stringify(expected) ? true : undefined;
    });
    assert.ok(lists >= 2, 'relisted after the 410');
    assert.deepEqual(errors, []);
    await informer.stop();
  });

  it('kubectl get -w prints the changes as they happen', async (t) => {
    const which = spawn('kubectl', ['version', '--client'], { stdio: 'ignore' });
    const present = await new Promise<boolean>((r) => { which.on('error', () => r(false)); which.on('exit', (c) => r(c === 0)); });
    if (!present) {
      if (process.env.CI) assert.fail('kubectl is required in CI');
      t.skip('kubectl is not installed');
      return;
    }
    const ns = 'kubectl-watch';
    await createNamespace(server, ns);
    const kubectl = spawn('kubectl', ['--kubeconfig', server.kubeconfig, 'get', 'sa', '-n', ns, '-w', '--request-timeout=20s'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    kubectl.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    kubectl.stderr.on('data', (c: Buffer) => { out += c.toString(); });
    try {
      await until('kubectl to list the default service account', () => (/default/.test(out) ? true : undefined));
      await request(server, `/api/v1/namespaces/${ns}/serviceaccounts`, { method: 'POST', body: { metadata: { name: 'watched-1' } } });
      await until('kubectl to print the new service account', () => (/watched-1/.test(out) ? true : undefined));
      await request(server, `/api/v1/namespaces/${ns}/serviceaccounts/watched-1`, { method: 'DELETE' });
      await until('kubectl to print it again for the deletion', () => ((out.match(/watched-1/g) ?? []).length >= 2 ? true : undefined));
    } finally {
      kubectl.kill();
    }
  });

  it('serves a watch over WebSocket, one event per text message', async () => {
    const ns = 'websocket';
    await createNamespace(server, ns);
    const ws = new WebSocket(`wss://127.0.0.1:${server.port}/api/v1/namespaces/${ns}/serviceaccounts?watch=true&resourceVersion=0`, {
      ca: server.admin.ca, cert: server.admin.cert, key: server.admin.key,
    });
    const messages: Array<{ text: string; binary: boolean }> = [];
    ws.on('message', (data, isBinary) => messages.push({ text: String(data), binary: isBinary }));
    await new Promise<void>((resolve, reject) => { ws.once('open', () => resolve()); ws.once('error', reject); });
    await until('the initial ADDED of default', () => (messages.length >= 1 ? true : undefined));
    for (let i = 0; i < 3; i++) await request(server, `/api/v1/namespaces/${ns}/serviceaccounts`, { method: 'POST', body: { metadata: { name: `ws-${i}` } } });
    await until('three more events', () => (messages.length >= 4 ? true : undefined));
    ws.close();
    for (const m of messages) {
      assert.equal(m.binary, false);
      const lines = m.text.trim().split('\n');
      assert.equal(lines.length, 1, 'exactly one event per message');
      assert.equal(JSON.parse(lines[0]).type, 'ADDED');
    }
    assert.deepEqual(messages.slice(1).map((m) => JSON.parse(m.text).object.metadata.name), ['ws-0', 'ws-1', 'ws-2']);
  });

  it('refuses a WebSocket upgrade that is not a watch, and one without credentials', async () => {
    const attempt = (path: string, withCert: boolean) => new Promise<number>((resolve) => {
      const ws = new WebSocket(`wss://127.0.0.1:${server.port}${path}`, { ca: server.admin.ca, ...(withCert ? { cert: server.admin.cert, key: server.admin.key } : {}) });
      ws.on('unexpected-response', (_req, res) => { resolve(res.statusCode ?? 0); res.resume(); });
      ws.on('open', () => { resolve(101); ws.close(); });
      ws.on('error', () => {});
    });
    assert.equal(await attempt('/api/v1/namespaces/default/serviceaccounts', true), 400);
    assert.equal(await attempt('/api/v1/namespaces/default/serviceaccounts?watch=true', false), 401);
  });

  it('streams protobuf watch events as length-prefixed WatchEvent frames', async () => {
    const ns = 'protobuf-watch';
    await createNamespace(server, ns);
    const frames: Array<{ type: string; name: string; rv: string }> = [];
    let contentType = '';
    const req = httpsRequest(`${server.url}/api/v1/namespaces/${ns}/serviceaccounts?watch=1&resourceVersion=0&allowWatchBookmarks=true&timeoutSeconds=3`, {
      ca: server.admin.ca, cert: server.admin.cert, key: server.admin.key,
      headers: { accept: 'application/vnd.kubernetes.protobuf;stream=watch' },
    }, (res) => {
      contentType = String(res.headers['content-type']);
      let buf = Buffer.alloc(0);
      res.on('data', (c: Buffer) => {
        buf = Buffer.concat([buf, c]);
        while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
          const event = buf.subarray(4, 4 + buf.readUInt32BE(0));
          buf = buf.subarray(4 + event.length);
          frames.push(decodeWatchEvent(event));
        }
      });
    });
    req.end();
    await until('the initial event', () => (frames.length >= 1 ? true : undefined));
    await request(server, `/api/v1/namespaces/${ns}/serviceaccounts`, { method: 'POST', body: { metadata: { name: 'pb-1' } } });
    await until('the live event and the closing bookmark', () => (frames.some((f) => f.type === 'BOOKMARK') ? true : undefined), 10_000);
    assert.equal(contentType, 'application/vnd.kubernetes.protobuf;stream=watch');
    assert.deepEqual(frames.filter((f) => f.type !== 'BOOKMARK').map((f) => `${f.type} ${f.name}`), ['ADDED default', 'ADDED pb-1']);
    const live = frames.find((f) => f.name === 'pb-1');
    const bookmark = frames.find((f) => f.type === 'BOOKMARK');
    assert.ok(Number(bookmark?.rv) >= Number(live?.rv));
  });
});

/** An independent reading of metav1.WatchEvent {type = 1; object = 2 RawExtension {raw = 1}}. */
function decodeWatchEvent(bytes: Buffer): { type: string; name: string; rv: string } {
  let i = 0;
  const varint = () => { let v = 0; let shift = 0; for (;;) { const b = bytes[i++]; v += (b & 0x7f) * 2 ** shift; if (b < 0x80) return v; shift += 7; } };
  let type = '';
  let raw: Buffer | undefined;
  while (i < bytes.length) {
    const key = varint();
    const len = varint();
    const body = bytes.subarray(i, i + len);
    i += len;
    if (key === 0x0a) type = body.toString();
    else if (key === 0x12) {
      let j = 0;
      const inner = () => { let v = 0; let shift = 0; for (;;) { const b = body[j++]; v += (b & 0x7f) * 2 ** shift; if (b < 0x80) return v; shift += 7; } };
      assert.equal(inner(), 0x0a, 'RawExtension.raw');
      const rawLen = inner();
      raw = body.subarray(j, j + rawLen);
    }
  }
  assert.ok(raw, 'an object');
  const { object } = decodeEnvelope(raw, serviceAccountKind.schema);
  const meta = object.metadata as { name?: string; resourceVersion?: string };
  return { type, name: meta.name ?? '', rv: meta.resourceVersion ?? '' };
}
