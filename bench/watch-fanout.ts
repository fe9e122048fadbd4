/**
 * bench/watch-fanout: N watch streams over TLS, held by separate load processes, while a writer
 * offers E writes per second; reports delivered events/s, commit-to-receipt latency, server CPU
 * and RSS, and the same for a baseline measured in the same run: a bare Node TLS server writing
 * pre-encoded frames to the same number of streams.
 * Usage: node dist/bench/watch-fanout.js [--watchers 1000] [--rate 100] [--seconds 10] [--procs 2]
 * Latency is measured from just before each create request (so it includes the durable commit) to receipt.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { agentFor, call, flag, rssMiB, startServer, summarize } from './support.js';

const watchers = flag('watchers', 1000);
const rate = flag('rate', 100);
const seconds = flag('seconds', 10);
const procs = flag('procs', 2);
const sampleEvery = 20;
const clientScript = fileURLToPath(new URL('./watch-client.js', import.meta.url));

function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime, in clock ticks of 10 ms
}

interface ClientReport { events: number; bytes: number; latencies: number[]; open: number; cpuMs: number }

async function runLoad(url: string, creds: { ca: string; cert: string; key: string }, pid: number, writeOne: (i: number) => Promise<void>) {
  const children: ChildProcess[] = [];
  for (let p = 0; p < procs; p++) {
    const count = Math.floor(watchers / procs) + (p < watchers % procs ? 1 : 0);
    const child = fork(clientScript, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    children.push(child);
    child.send({ url, count, ...creds, sampleEvery });
  }
  await Promise.all(children.map((c) => new Promise((r) => c.once('message', r))));
  for (const c of children) c.send({ t: 'reset' });
  const cpu0 = cpuMsOf(pid);
  const t0 = Date.now();
  let offered = 0;
  let accepted = 0;
  const writes: Promise<void>[] = [];
  // offer writes at a steady rate, whether or not earlier ones finished
  await new Promise<void>((resolve) => {
    const interval = 1000 / rate;
    const tick = () => {
      const due = Math.floor((Date.now() - t0) / interval);
      while (offered < due && offered < rate * seconds) {
        writes.push(writeOne(offered++).then(() => { accepted++; }, () => {}));
      }
      if (offered >= rate * seconds) resolve(); else setTimeout(tick, Math.min(interval, 5));
    };
    tick();
  });
  await Promise.all(writes);
  const offerSeconds = (Date.now() - t0) / 1000;
  await new Promise((r) => setTimeout(r, 500)); // let the last events arrive
  const elapsed = (Date.now() - t0) / 1000;
  const serverCpuMs = cpuMsOf(pid) - cpu0;
  const rss = rssMiB(pid);
  const reports = await Promise.all(children.map((c) => new Promise<ClientReport>((resolve) => {
    c.on('message', (m: { t: string } & ClientReport) => { if (m.t === 'report') resolve(m); });
    c.send({ t: 'report' });
  })));
  const events = reports.reduce((a, r) => a + r.events, 0);
  const latency = summarize(reports.flatMap((r) => r.latencies));
  return {
    offered, accepted, acceptedPerSec: +(accepted / offerSeconds).toFixed(1),
    eventsDelivered: events, eventsPerSec: Math.round(events / elapsed), expectedEvents: accepted * watchers,
    latencyMs: latency, serverCpuPercent: Math.round(serverCpuMs / (elapsed * 10)), serverRssMiB: Math.round(rss),
    clientCpuMs: Math.round(reports.reduce((a, r) => a + r.cpuMs, 0)), openStreams: reports.reduce((a, r) => a + r.open, 0),
  };
}

/** A watch event as our server sends it for this scenario, encoded ahead of time for the baseline. */
const template = '{"type":"ADDED","object":{"kind":"ServiceAccount","apiVersion":"v1","metadata":{"name":"NAME","namespace":"fanout","uid":"0e6f6c1e-3d0c-4f5a-9a53-2d8b3c1f7a10","resourceVersion":"100","creationTimestamp":"2026-11-22T00:00:00Z","labels":{"app":"fanout"},"annotations":{"bench.orch.io/sent":"SENT"},"managedFields":[{"manager":"node","operation":"Update","apiVersion":"v1","time":"2026-11-22T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:annotations":{".":{},"f:bench.orch.io/sent":{}},"f:labels":{".":{},"f:app":{}}}}}]}}}';

/** The baseline: a TLS server that writes one pre-encoded frame per event to every open stream. */
async function baseline(creds: { ca: string; cert: string; key: string }, serverCert: string, serverKey: string) {
  const streams = new Set<ServerResponse>();
  const server: Server = createServer({ cert: serverCert, key: serverKey, ca: creds.ca, requestCert: true }, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.flushHeaders();
    streams.add(res);
    res.on('close', () => streams.delete(res));
  });
  server.keepAliveTimeout = 0;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const result = await runLoad(`https://127.0.0.1:${port}/watch`, creds, process.pid, async (i) => {
    const frame = `${template.replace('"SENT"', `"${Date.now()}"`).replace('"NAME"', `"sa-${i}"`)}\n`;
    for (const res of streams) res.write(frame);
  });
  for (const res of streams) res.end();
  server.close();
  return result;
}

const server = await startServer({ args: ['--log-level', 'warn'] });
const agent = agentFor(server, 16);
try {
  await call(server, agent, 'POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: 'fanout' } }));
  const writeMs: number[] = [];
  const ours = await runLoad(`${server.url}/api/v1/namespaces/fanout/serviceaccounts?watch=1&resourceVersion=0`, server.admin, server.process.pid as number, async (i) => {
    const sent = Date.now();
    const body = JSON.stringify({ metadata: { name: `sa-${i}`, annotations: { 'bench.orch.io/sent': String(sent) }, labels: { app: 'fanout' } } });
    const r = await call(server, agent, 'POST', '/api/v1/namespaces/fanout/serviceaccounts', body);
    if (r.status !== 201) throw new Error(`create: ${r.status}`);
    writeMs.push(Date.now() - sent);
  });
  const pki = `${server.dataDir}/pki`;
  const base = await baseline(server.admin, readFileSync(`${pki}/apiserver.crt`, 'utf8'), readFileSync(`${pki}/apiserver.key`, 'utf8'));
  const report = {
    scenario: 'watch-fanout', watchers, offeredRate: rate, seconds, procs, ours: { ...ours, createLatencyMs: summarize(writeMs) }, baseline: base,
    ratioEventsPerSec: +(ours.eventsPerSec / base.eventsPerSec).toFixed(2),
    ratioP99: +(ours.latencyMs.p99 / Math.max(1, base.latencyMs.p99)).toFixed(2),
  };
  console.log(JSON.stringify(report, null, 2));
  console.log(`watch-fanout ${watchers} watchers, ${rate} writes/s offered: ours ${ours.eventsPerSec} events/s (accepted ${ours.acceptedPerSec} writes/s), p50 ${ours.latencyMs.median} ms p99 ${ours.latencyMs.p99} ms, server CPU ${ours.serverCpuPercent}% RSS ${ours.serverRssMiB} MiB; baseline ${base.eventsPerSec} events/s p99 ${base.latencyMs.p99} ms; ratio ${report.ratioEventsPerSec}`);
} finally {
  agent.destroy();
  await server.dispose();
}
