/**
 * bench/store: the same server on its two storage engines, in one run: durable creates per second
 * (N Secrets from C concurrent clients, each answered only once committed and in the read model)
 * and commit-to-watch latency (one create at a time; from sending it until a watcher on the same
 * server receives its event). SQLite in a temp data dir against a one-member etcd on loopback,
 * both on this machine's disk.
 * Usage: node dist/bench/store.js [--creates 3000] [--concurrency 64] [--samples 200]
 */
import { request as httpsRequest } from 'node:https';
import { startEtcd, type EtcdCluster } from '../test/support/etcd.js';
import { agentFor, call, flag, pool, startServer, summarize, type Summary, type TestServer } from './support.js';

const creates = flag('creates', 3000);
const concurrency = flag('concurrency', 64);
const samples = flag('samples', 200);

interface EngineFigures { createsPerSecond: number; createMs: Summary; commitToWatchMs: Summary }

/** A watch on one namespace's Secrets that reports when each name's ADDED arrives. */
function watchArrivals(server: TestServer, namespace: string, fromRv: string): { arrived: Map<string, number>; close(): void } {
  const arrived = new Map<string, number>();
  const req = httpsRequest(`${server.url}/api/v1/namespaces/${namespace}/secrets?watch=1&resourceVersion=${fromRv}`, {
    ca: server.admin.ca, cert: server.admin.cert, key: server.admin.key, agent: false,
  }, (res) => {
    let buffered = '';
    res.on('data', (chunk: Buffer) => {
      const now = performance.now();
      buffered += chunk.toString('utf8');
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const e = JSON.parse(buffered.slice(0, nl)) as { type: string; object: { metadata: { name: string } } };
        buffered = buffered.slice(nl + 1);
        if (e.type === 'ADDED') arrived.set(e.object.metadata.name, now);
      }
    });
  });
  req.on('error', () => undefined); // closing the watch aborts it
  req.end();
  return { arrived, close: () => req.destroy() };
}

async function measure(server: TestServer): Promise<EngineFigures> {
  const agent = agentFor(server, concurrency);
  try {
    for (const ns of ['bench', 'bench-watch']) {
      const r = await call(server, agent, 'POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: ns } }));
      if (r.status !== 201) throw new Error(`namespace: ${r.status} ${r.text}`);
    }
    const secret = (name: string) => JSON.stringify({ metadata: { name, labels: { app: 'bench' } }, stringData: { token: name.padEnd(64, 'x') } });

    const latencies: number[] = [];
    const started = performance.now();
    await pool(creates, concurrency, async (i) => {
      const t = performance.now();
      const r = await call(server, agent, 'POST', '/api/v1/namespaces/bench/secrets', secret(`s-${i}`));
      if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`);
      latencies.push(performance.now() - t);
    });
    const createsPerSecond = Math.round(creates / ((performance.now() - started) / 1000));

    const listed = await call(server, agent, 'GET', '/api/v1/namespaces/bench-watch/secrets');
    const watch = watchArrivals(server, 'bench-watch', (JSON.parse(listed.text) as { metadata: { resourceVersion: string } }).metadata.resourceVersion);
    const toWatch: number[] = [];
    try {
      for (let i = 0; i < samples; i++) {
        const name = `w-${i}`;
        const sent = performance.now();
        const r = await call(server, agent, 'POST', '/api/v1/namespaces/bench-watch/secrets', secret(name));
        if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`);
        const deadline = Date.now() + 10_000;
        while (!watch.arrived.has(name)) {
          if (Date.now() > deadline) throw new Error(`no watch event for ${name}`);
          await new Promise((resolve) => setImmediate(resolve));
        }
        toWatch.push((watch.arrived.get(name) as number) - sent);
      }
    } finally {
      watch.close();
    }
    return { createsPerSecond, createMs: summarize(latencies), commitToWatchMs: summarize(toWatch) };
  } finally {
    agent.destroy();
  }
}

const args = ['--log-level', 'warn'];
const sqliteServer = await startServer({ args });
let sqlite: EngineFigures;
try {
  sqlite = await measure(sqliteServer);
} finally {
  await sqliteServer.dispose();
}

let etcdCluster: EtcdCluster | undefined;
let etcdServer: TestServer | undefined;
let etcd: EngineFigures;
try {
  etcdCluster = await startEtcd();
  etcdServer = await startServer({ args: [...args, '--etcd-servers', etcdCluster.servers] });
  etcd = await measure(etcdServer);
} finally {
  await etcdServer?.dispose();
  await etcdCluster?.dispose();
}

const round = (s: Summary) => ({ median: +s.median.toFixed(2), p99: +s.p99.toFixed(2), min: +s.min.toFixed(2), max: +s.max.toFixed(2) });
const report = {
  scenario: 'store', creates, concurrency, samples,
  sqlite: { createsPerSecond: sqlite.createsPerSecond, createMs: round(sqlite.createMs), commitToWatchMs: round(sqlite.commitToWatchMs) },
  etcd: { createsPerSecond: etcd.createsPerSecond, createMs: round(etcd.createMs), commitToWatchMs: round(etcd.commitToWatchMs) },
  ratioEtcdToSqliteCreates: +(etcd.createsPerSecond / sqlite.createsPerSecond).toFixed(2),
  ratioEtcdToSqliteCommitToWatch: +(etcd.commitToWatchMs.median / sqlite.commitToWatchMs.median).toFixed(2),
};
console.log(JSON.stringify(report, null, 2));
console.log(`durable creates, ${concurrency} clients: SQLite ${sqlite.createsPerSecond}/s (p99 ${sqlite.createMs.p99.toFixed(1)} ms), etcd ${etcd.createsPerSecond}/s (p99 ${etcd.createMs.p99.toFixed(1)} ms); ` +
  `commit-to-watch median: SQLite ${sqlite.commitToWatchMs.median.toFixed(2)} ms, etcd ${etcd.commitToWatchMs.median.toFixed(2)} ms`);
