/**
 * Durability: a client writes continuously with many requests in flight, the server is killed with
 * SIGKILL (or stopped with SIGTERM) mid-flight and restarted on the same data dir. Every write that
 * was acknowledged must be there with the same resourceVersion and uid, and resourceVersions keep
 * increasing after the restart.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { freePort, request, startServer, type TestServer } from '../support/server.js';

interface Ack { name: string; resourceVersion: string; uid: string }

interface WriterResult {
  acked: Ack[];
  /** responses other than 201 (status and body) */
  unexpected: string[];
  /** requests that ended with a transport error (expected once the server is gone) */
  transportErrors: number;
  /** requests in flight at the moment stop() was called */
  inFlightAtStop: number;
  /** 201 responses received after stop() was called */
  ackedAfterStop: number;
}

/**
 * Starts `concurrency` loops that each POST ServiceAccounts back to back over keep-alive HTTPS.
 * `interrupt` is called after `runMs`, with requests in flight; the loops end when every
 * request has been answered or has failed (with `continueAfterStop`, each loop keeps writing
 * until the server refuses it or goes away).
 */
async function writeWhile(server: TestServer, namespace: string, prefix: string, concurrency: number, runMs: number,
  interrupt: () => Promise<unknown>, options: { allowedAfterStop?: number[]; continueAfterStop?: boolean; /** interrupt no sooner than this many writes are acknowledged */ untilAcked?: number } = {}): Promise<WriterResult> {
  const allowedAfterStop = options.allowedAfterStop ?? [];
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency, ca: server.admin.ca, cert: server.admin.cert, key: server.admin.key });
  const result: WriterResult = { acked: [], unexpected: [], transportErrors: 0, inFlightAtStop: 0, ackedAfterStop: 0 };
  let stopped = false;
  let inFlight = 0;
  let seq = 0;

  const post = (name: string) => new Promise<{ status: number; body: string } | Error>((resolve) => {
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, labels: { writer: prefix } } });
    const req = httpsRequest(`${server.url}/api/v1/namespaces/${namespace}/serviceaccounts`, {
      method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      res.on('error', (err) => resolve(err));
    });
    req.on('error', (err) => resolve(err));
    req.setTimeout(20_000, () => req.destroy(new Error('request timed out')));
    req.end(body);
  });

  const loop = async (worker: number) => {
    while (!stopped || options.continueAfterStop) {
      const name = `${prefix}-${worker}-${seq++}`;
      inFlight++;
      const out = await post(name);
      inFlight--;
      if (out instanceof Error) {
        result.transportErrors++;
        if (!stopped) result.unexpected.push(`${name}: ${out.message} before the server was stopped`);
        return; // the server is gone; this loop is done
      }
      if (out.status === 201) {
        const obj = JSON.parse(out.body);
        assert.equal(obj.metadata.name, name);
        result.acked.push({ name, resourceVersion: obj.metadata.resourceVersion, uid: obj.metadata.uid });
        if (stopped) result.ackedAfterStop++;
      } else if (!(stopped && allowedAfterStop.includes(out.status))) {
        result.unexpected.push(`${name}: ${out.status} ${out.body}`);
        if (stopped) return;
      }
    }
  };

  const loops = Array.from({ length: concurrency }, (_, i) => loop(i));
  await new Promise((r) => setTimeout(r, runMs));
  // a count, not a time: however slow the machine, the server is stopped in the middle of real work
  while (result.acked.length < (options.untilAcked ?? 0) && result.unexpected.length === 0 && result.transportErrors === 0) {
    await new Promise((r) => setTimeout(r, 20));
  }
  result.inFlightAtStop = inFlight;
  stopped = true;
  await interrupt();
  await Promise.all(loops);
  agent.destroy();
  return result;
}

async function createNamespace(server: TestServer, name: string): Promise<string> {
  const res = await request(server, '/api/v1/namespaces', { method: 'POST', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  assert.equal(res.status, 201, res.body);
  return res.json.metadata.uid;
}

/** every acknowledged object is there with the same resourceVersion and uid; returns the largest stored revision */
async function verify(server: TestServer, namespace: string, acked: Ack[]): Promise<bigint> {
  const list = await request(server, `/api/v1/namespaces/${namespace}/serviceaccounts`);
  assert.equal(list.status, 200, list.body);
  const stored = new Map<string, { resourceVersion: string; uid: string }>();
  let maxStored = 0n;
  for (const item of list.json.items) {
    stored.set(item.metadata.name, { resourceVersion: item.metadata.resourceVersion, uid: item.metadata.uid });
    if (BigInt(item.metadata.resourceVersion) > maxStored) maxStored = BigInt(item.metadata.resourceVersion);
  }
  const lost = acked.filter((a) => !stored.has(a.name));
  assert.deepEqual(lost.map((a) => a.name), [], `${lost.length} of ${acked.length} acknowledged writes are missing after restart`);
  const changed = acked.filter((a) => stored.get(a.name)!.resourceVersion !== a.resourceVersion || stored.get(a.name)!.uid !== a.uid);
  assert.deepEqual(changed.map((a) => ({ ...a, stored: stored.get(a.name) })), [], 'acknowledged writes changed resourceVersion or uid');
  assert.ok(BigInt(list.json.metadata.resourceVersion) >= maxStored, 'list resourceVersion is at least every item\'s');
  // a sample read one by one, not only through the list
  for (const a of acked.filter((_, i) => i % Math.max(1, Math.floor(acked.length / 20)) === 0)) {
    const got = await request(server, `/api/v1/namespaces/${namespace}/serviceaccounts/${a.name}`);
    assert.equal(got.status, 200, got.body);
    assert.equal(got.json.metadata.resourceVersion, a.resourceVersion);
    assert.equal(got.json.metadata.uid, a.uid);
  }
  return maxStored;
}

function maxRv(acked: Ack[]): bigint {
  return acked.reduce((m, a) => (BigInt(a.resourceVersion) > m ? BigInt(a.resourceVersion) : m), 0n);
}

async function createAfterRestart(server: TestServer, namespace: string, name: string): Promise<bigint> {
  const res = await request(server, `/api/v1/namespaces/${namespace}/serviceaccounts`, { method: 'POST', body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } } });
  assert.equal(res.status, 201, res.body);
  return BigInt(res.json.metadata.resourceVersion);
}

describe('durability', () => {
  const dirs: string[] = [];
  const servers: TestServer[] = [];
  after(async () => {
    for (const s of servers) await s.kill();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('keeps every acknowledged write across repeated kill -9 and restart', async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'orch-durability-'));
    dirs.push(dataDir);
    const port = await freePort();
    let server = await startServer({ dataDir, port });
    servers.push(server);
    const nsUid = await createNamespace(server, 'dur');
    const acked: Ack[] = [];

    for (let cycle = 0; cycle < 3; cycle++) {
      const running = server;
      const out = await writeWhile(running, 'dur', `kill${cycle}`, 16, 1500, () => running.kill(), { untilAcked: 50 });
      t.diagnostic(`cycle ${cycle}: ${out.acked.length} acknowledged, ${out.inFlightAtStop} in flight at kill, ${out.transportErrors} transport errors`);
      assert.deepEqual(out.unexpected, [], 'only 201 before the kill');
      assert.ok(out.acked.length >= 50, `cycle ${cycle}: only ${out.acked.length} writes acknowledged before the kill`);
      assert.ok(out.inFlightAtStop > 0, 'the server was killed with requests in flight');
      assert.equal(running.process.signalCode, 'SIGKILL');
      acked.push(...out.acked);

      // resourceVersions are unique across all acknowledged writes
      assert.equal(new Set(acked.map((a) => a.resourceVersion)).size, acked.length, 'every write got its own resourceVersion');

      server = await startServer({ dataDir, port: cycle === 1 ? await freePort() : port });
      servers.push(server);
      const ns = await request(server, '/api/v1/namespaces/dur');
      assert.equal(ns.status, 200);
      assert.equal(ns.json.metadata.uid, nsUid);

      const maxStored = await verify(server, 'dur', acked);
      const next = await createAfterRestart(server, 'dur', `after-kill-${cycle}`);
      assert.ok(next > maxRv(acked), `new resourceVersion ${next} is greater than every acknowledged one (max ${maxRv(acked)})`);
      assert.ok(next > maxStored, `new resourceVersion ${next} is greater than every stored one (max ${maxStored})`);
      acked.push({ name: `after-kill-${cycle}`, resourceVersion: String(next), uid: (await request(server, `/api/v1/namespaces/dur/serviceaccounts/after-kill-${cycle}`)).json.metadata.uid });
    }
    await server.stop();
  });

  it('drains on SIGTERM: exits 0 and keeps everything acknowledged', async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'orch-durability-'));
    dirs.push(dataDir);
    const server = await startServer({ dataDir });
    servers.push(server);
    await createNamespace(server, 'drain');
    let exitCode: number | null | undefined;
    // the writers keep going while the server drains, until it refuses them or is gone
    const out = await writeWhile(server, 'drain', 'term', 16, 1000, async () => { exitCode = await server.stop(); }, { allowedAfterStop: [503], continueAfterStop: true });
    t.diagnostic(`${out.acked.length} acknowledged, ${out.inFlightAtStop} in flight at SIGTERM, ${out.ackedAfterStop} acknowledged after it, ${out.transportErrors} transport errors`);
    assert.equal(exitCode, 0, `exit code after SIGTERM:\n${server.logs.slice(-20).join('\n')}`);
    assert.equal(server.process.signalCode, null, 'the server exited by itself, not by the signal');
    assert.deepEqual(out.unexpected, [], 'no errors other than refused requests once stopping');
    assert.ok(out.inFlightAtStop > 0, 'SIGTERM arrived with requests in flight');
    assert.ok(out.ackedAfterStop > 0, `requests in flight at SIGTERM were answered (acked after stop: ${out.ackedAfterStop}, transport errors: ${out.transportErrors})`);
    assert.ok(out.acked.length >= 30);

    const restarted = await startServer({ dataDir });
    servers.push(restarted);
    const maxStored = await verify(restarted, 'drain', out.acked);
    const next = await createAfterRestart(restarted, 'drain', 'after-term');
    assert.ok(next > maxRv(out.acked));
    assert.ok(next > maxStored);
    assert.equal(await restarted.stop(), 0);
  });
});
