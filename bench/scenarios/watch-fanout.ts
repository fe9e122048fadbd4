/**
 * watch-fanout: N watch streams over TLS, held by separate load processes (bench/watch-client.ts),
 * while a writer offers E creates per second; delivered events/s (median and spread over
 * one-second windows), event latency, server CPU and RSS. Baseline in the same run: a
 * bare Node TLS server writing pre-encoded frames to the same number of streams, held by the same
 * load processes. With ORCH_BENCH_SERVER=<dir>, the server is the build in that checkout (a
 * before-and-after comparison with the same load). Latency is sampled on one event in `sampleEvery`,
 * twice: send→receipt from just before each create request (so it includes the create's own path
 * and durable commit), and commit→receipt from the create's acknowledgement; percentiles from an HDR histogram
 * (hdr-histogram-js). The writer is an undici pool of 16 connections. What is watched and created
 * is bench/fanout-target.ts: ServiceAccounts, or with `--cr 1` Widgets, a custom resource whose
 * CRD has a 20-field schema and 3 CEL rules (not served in protobuf, so `--protobuf` must be 0).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer, type Server } from 'node:https';
import type { ServerResponse } from 'node:http';
import * as hdr from 'hdr-histogram-js';
import { Pool } from 'undici';
import {
  cpuMsOf, fmt, forkModule, memoryOf, nextMessage, one, percentiles, ratio, spread, startServer, stopChild,
  type BudgetLine, type Ratio, type Scenario, type Spread,
} from '../harness.js';
import type { ChildProcess } from 'node:child_process';
import type { Credentials } from '../../test/support/server.js';
import { builtServerScript } from '../support.js';
import { serviceAccounts, widgets, type FanoutTarget } from '../fanout-target.js';

const sampleEvery = 20;

/** Percentiles of latency samples (ms) through an HDR histogram, 3 significant digits. */
function latencyPercentiles(samples: readonly number[]): ReturnType<typeof percentiles> {
  if (samples.length === 0) return percentiles(samples);
  const h = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000, numberOfSignificantValueDigits: 3 });
  for (const v of samples) h.recordValue(Math.max(1, Math.round(v)));
  return {
    count: samples.length, mean: h.mean, min: h.minNonZeroValue,
    p50: h.getValueAtPercentile(50), p90: h.getValueAtPercentile(90), p99: h.getValueAtPercentile(99), max: h.maxValue,
  };
}

/** `latencies[k]`: receipt − send of the sample received at `sampledAt[k]` (ms since the epoch) */
interface ClientReport { events: number; bytes: number; latencies: number[]; sampledAt: number[]; open: number; marks: number[]; cpuMs: number }
type StreamForm = 'json' | 'protobuf' | 'table';

interface Run {
  offered: number; accepted: number; acceptedPerSec: number;
  /** writes that failed, and writes still unanswered 10 s after the last was offered */
  failedWrites: number; unansweredWrites: number;
  eventsDelivered: number; expectedEvents: number; eventsPerSec: number;
  /** events/s per one-second window, the first window left out as warm-up */
  windowEventsPerSec: Spread;
  /** from the writer sending the create (the `sent` annotation) to a client receiving its event */
  latencyMs: ReturnType<typeof percentiles>;
  /**
   * From the create's acknowledgement reaching the writer to a client receiving its event: commit
   * to receipt, the commit timed by its acknowledgement (the front thread answers the create and
   * starts the event's fan-out on the same commit message; the answer's own trip back, which
   * comes after the commit, is left out of the figure). A sample that arrived before its acknowledgement counts 0. The baseline has no
   * commit: its events are written at `sent`, so its latencyMs is already this.
   */
  commitLatencyMs?: ReturnType<typeof percentiles>;
  serverCpuPercent: number;
  /** the median of a sample a second over the measured phase, and the largest sample */
  serverRssMiB: number; serverRssPeakMiB: number; clientCpuMs: number; openStreams: number;
  /** bytes the clients received per second */
  bytesPerSec: number;
  /** the load processes' CPU as a share of the run (100: one core busy), to tell when they are the bottleneck */
  clientCpuPercent: number;
  /** streams the server ended during the run (clients more than their bound behind) */
  streamsEnded: number;
}

interface Load {
  watchers: number; rate: number; seconds: number; procs: number; forms: StreamForm[]; h2Sessions: number;
  /** seconds of writes offered before measuring: the server's code paths are compiled (V8 tiers up) under the load, not during the measured seconds */
  warmup: number;
  /** the Go load client's binary, when the run uses it instead of bench/watch-client.ts */
  goClient?: string;
}

/**
 * Builds bench/go-watch-client (needs `go` on PATH): the same protocol as watch-client.ts at a
 * fraction of its CPU, so the load processes leave the machine's cores to the server.
 */
function buildGoClient(): string {
  const source = join(dirname(fileURLToPath(import.meta.url)), '../../../bench/go-watch-client');
  const binary = join(mkdtempSync(join(tmpdir(), 'orch-go-watch-')), 'go-watch-client');
  execFileSync('go', ['build', '-o', binary, '.'], { cwd: source, stdio: 'inherit' });
  return binary;
}

/** A load process: the Go client over the Node IPC channel (JSON lines), or the Node one. */
function loadProcess(goClient: string | undefined): ChildProcess {
  return goClient ? spawn(goClient, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'json' }) : forkModule('./watch-client.js');
}

/** The streams' forms, cycled: `protobuf` and `table` percent of them, the rest JSON. */
function formsOf(protobufPercent: number, tablePercent: number): StreamForm[] {
  const forms: StreamForm[] = [];
  for (let i = 0; i < 20; i++) forms.push(i < protobufPercent / 5 ? 'protobuf' : i < (protobufPercent + tablePercent) / 5 ? 'table' : 'json');
  return forms;
}

/**
 * Receipt − acknowledgement for every sample whose create was acknowledged; `ackOf` maps a create's
 * `sent` time to its acknowledgement's (the earlier one when two creates were sent in one ms).
 */
function commitLatencies(reports: readonly ClientReport[], ackOf: (sent: number) => number | undefined): number[] {
  const out: number[] = [];
  for (const r of reports) {
    for (let k = 0; k < r.sampledAt.length; k++) {
      const ack = ackOf(r.sampledAt[k] - r.latencies[k]);
      if (ack !== undefined) out.push(Math.max(0, r.sampledAt[k] - ack));
    }
  }
  return out;
}

/** `measuring` is told when the measured phase starts (after the warm-up); `ackOf` gives a create's acknowledgement time by its `sent` time. */
async function runLoad(load: Load, url: string, creds: Credentials, pid: number, writeOne: (i: number) => Promise<void>, log: (l: string) => void, measuring?: () => void, ackOf?: (sent: number) => number | undefined): Promise<Run> {
  const children: ChildProcess[] = [];
  try {
    for (let p = 0; p < load.procs; p++) {
      const count = Math.floor(load.watchers / load.procs) + (p < load.watchers % load.procs ? 1 : 0);
      const child = loadProcess(load.goClient);
      children.push(child);
      // HTTP/2 sessions spread over the processes, at least one each
      const h2Sessions = load.h2Sessions > 0 ? Math.max(1, Math.round(load.h2Sessions / load.procs)) : 0;
      child.send({ url, count, ...creds, sampleEvery, forms: load.forms, h2Sessions });
    }
    const ready = await Promise.all(children.map((c) => new Promise<{ open: number }>((r, j) => {
      c.once('message', (m: { open: number }) => r(m));
      c.once('exit', (code) => j(new Error(`watch client exited (${code}) before its streams were open`)));
    })));
    const openedStreams = ready.reduce((a, m) => a + m.open, 0);
    log(`${openedStreams} streams open; writing`);
    // names never repeat across phases; counts are the measured phase's alone
    let next = 0;
    let phase = { offered: 0, accepted: 0, failed: 0, writes: [] as Promise<void>[] };
    // offer writes at a steady rate for `seconds`, whether or not earlier ones finished
    const offer = (seconds: number) => new Promise<void>((resolve) => {
      const counts = phase;
      const start = Date.now();
      const total = Math.round(load.rate * seconds);
      const interval = 1000 / load.rate;
      const tick = () => {
        const due = Math.floor((Date.now() - start) / interval);
        while (counts.offered < due && counts.offered < total) {
          counts.offered++;
          counts.writes.push(writeOne(next++).then(() => { counts.accepted++; }, () => { counts.failed++; }));
        }
        if (counts.offered >= total) resolve(); else setTimeout(tick, Math.min(interval, 5));
      };
      tick();
    });
    if (load.warmup > 0) {
      await offer(load.warmup);
      await Promise.race([Promise.all(phase.writes), new Promise((r) => setTimeout(r, 10_000).unref())]);
      // the warm-up's events are delivered (or 15 s passed) before the counts are reset
      const expected = phase.accepted * load.watchers;
      let delivered = 0;
      for (const until = Date.now() + 15_000; Date.now() < until;) {
        const counts = await Promise.all(children.map((c) => {
          const count = nextMessage<{ events: number }>(c, 'count');
          c.send({ t: 'count' });
          return count;
        }));
        delivered = counts.reduce((a, m) => a + m.events, 0);
        if (delivered >= expected) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      log(`warm-up: ${phase.accepted} of ${phase.offered} writes accepted, ${delivered} of ${expected} events delivered; measuring`);
      phase = { offered: 0, accepted: 0, failed: 0, writes: [] };
    }
    for (const c of children) c.send({ t: 'reset' });
    measuring?.();
    const cpu0 = cpuMsOf(pid);
    const t0 = Date.now();
    // RSS at one instant moved by tens of MiB between runs (GC timing): a sample a second, the median reported
    const rssSamples: number[] = [];
    const marker = setInterval(() => {
      for (const c of children) c.send({ t: 'mark' });
      rssSamples.push(memoryOf(pid).rssMiB);
    }, 1000);
    await offer(load.seconds);
    const { offered, writes } = phase;
    // a write the server never answers must not hang the run: wait at most 10 s for the last ones
    const answered = await Promise.race([Promise.all(writes).then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 10_000).unref())]);
    const { accepted, failed: failedWrites } = phase;
    const unansweredWrites = answered ? 0 : offered - accepted - failedWrites;
    if (unansweredWrites) log(`${unansweredWrites} of ${offered} writes still unanswered 10 s after the last was offered`);
    if (failedWrites) log(`${failedWrites} of ${offered} writes failed`);
    const offerSeconds = (Date.now() - t0) / 1000;
    await new Promise((r) => setTimeout(r, 500)); // let the last events arrive
    clearInterval(marker);
    const elapsed = (Date.now() - t0) / 1000;
    const serverCpuMs = cpuMsOf(pid) - cpu0;
    rssSamples.push(memoryOf(pid).rssMiB);
    const rss = spread(rssSamples);
    const reports = await Promise.all(children.map((c) => {
      const report = nextMessage<ClientReport>(c, 'report');
      c.send({ t: 'report' });
      return report;
    }));
    const events = reports.reduce((a, r) => a + r.events, 0);
    // windows: summed marks across clients, differences between consecutive marks
    const marks = Math.min(...reports.map((r) => r.marks.length));
    const cumulative = Array.from({ length: marks }, (_, i) => reports.reduce((a, r) => a + r.marks[i], 0));
    const windows = cumulative.map((v, i) => v - (i ? cumulative[i - 1] : 0)).slice(1);
    return {
      offered, accepted, acceptedPerSec: +(accepted / offerSeconds).toFixed(1), failedWrites, unansweredWrites,
      // the rate events were delivered at while writes were offered: over the tail waited for the
      // last events, the rate read 5% under it (95k of 100k events/s with every event delivered)
      eventsDelivered: events, expectedEvents: accepted * load.watchers, eventsPerSec: Math.round(events / offerSeconds),
      windowEventsPerSec: spread(windows.length ? windows : [events / offerSeconds]),
      latencyMs: latencyPercentiles(reports.flatMap((r) => r.latencies)),
      ...(ackOf ? { commitLatencyMs: latencyPercentiles(commitLatencies(reports, ackOf)) } : {}),
      serverCpuPercent: Math.round(serverCpuMs / (elapsed * 10)), serverRssMiB: Math.round(rss.median), serverRssPeakMiB: Math.round(rss.max),
      clientCpuMs: Math.round(reports.reduce((a, r) => a + r.cpuMs, 0)), openStreams: reports.reduce((a, r) => a + r.open, 0),
      bytesPerSec: Math.round(reports.reduce((a, r) => a + r.bytes, 0) / elapsed),
      clientCpuPercent: Math.round(reports.reduce((a, r) => a + r.cpuMs, 0) / (elapsed * 10)),
      streamsEnded: openedStreams - reports.reduce((a, r) => a + r.open, 0),
    };
  } finally {
    await Promise.all(children.map((c) => stopChild(c)));
  }
}

function describeLoad(load: Pick<Load, 'forms' | 'h2Sessions' | 'goClient'>, target: FanoutTarget): string {
  const n = (f: StreamForm) => load.forms.filter((x) => x === f).length * 5;
  return `${target.objects}; ${n('json')}% JSON, ${n('protobuf')}% protobuf, ${n('table')}% Table; ${load.h2Sessions ? `${load.h2Sessions} HTTP/2 sessions` : 'HTTP/1.1'}; ${load.goClient ? 'Go' : 'Node'} clients`;
}

/**
 * How long an event took from the moment it existed to its receipt: from its commit for this
 * server (the create's acknowledgement), from its frame's write for the bare baseline, which
 * writes each frame when the event is sent (issue 14's commit→receipt).
 */
function eventLatency(run: Run): Run['latencyMs'] {
  return run.commitLatencyMs ?? run.latencyMs;
}

function commitLatency(run: Run): string {
  const c = run.commitLatencyMs;
  return c ? `commit→receipt p50 ${fmt(c.p50)} ms p99 ${fmt(c.p99)} ms` : 'commit→receipt not sampled';
}

/** The baseline: a TLS server in this process that writes one pre-encoded frame per event to every open stream. */
async function baseline(load: Load, target: FanoutTarget, creds: Credentials, serverCert: string, serverKey: string, log: (l: string) => void): Promise<Run> {
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
  try {
    return await runLoad(load, `https://127.0.0.1:${port}/watch`, creds, process.pid, async (i) => {
      const frame = target.baselineFrame(i, Date.now());
      for (const res of streams) res.write(frame);
    }, log);
  } finally {
    for (const res of streams) res.end();
    server.close();
  }
}

export const scenario: Scenario = {
  name: 'watch-fanout',
  description: 'N watchers over TLS held by separate load processes while a writer offers 100 creates/s (ServiceAccounts, or custom resources with --cr 1); baseline: a bare Node TLS server writing pre-encoded frames to the same streams.',
  defaults: { watchers: [1_000, 5_000], rate: [100], seconds: [10], warmup: [2], procs: [2], protobuf: [0], table: [0], h2: [0], go: [0], cr: [0] },
  smoke: { watchers: [20, 60], rate: [20], seconds: [2], warmup: [1], procs: [1], protobuf: [50], table: [10], h2: [0], go: [0], cr: [0] },
  help: {
    watchers: 'watch streams (list)', rate: 'creates offered per second', seconds: 'how long the writer offers (measured)', warmup: 'seconds of writes offered first, not measured (V8 compiles the hot paths under load)', procs: 'load processes holding the streams',
    protobuf: 'percent of streams in protobuf (multiple of 5)', table: 'percent of streams asking for Tables', h2: 'HTTP/2 sessions carrying all streams (0: one HTTP/1.1 connection each)',
    go: '1: the load processes are bench/go-watch-client (built with `go`), 0: bench/watch-client.ts',
    cr: '1: watch and create Widgets, a custom resource (20-field schema, 3 CEL rules; needs --protobuf 0), 0: ServiceAccounts',
  },
  async run(ctx) {
    const optional = (name: string) => (ctx.sizes[name]?.length ? one(ctx.sizes, name) : 0);
    const target = optional('cr') ? widgets : serviceAccounts;
    // as kube-apiserver, the server answers 406 to a protobuf watch of a custom resource
    if (target === widgets && optional('protobuf') !== 0) throw new Error(`--cr 1 needs --protobuf 0: custom resources are not served in protobuf (406), got --protobuf ${optional('protobuf')}`);
    const load0 = {
      rate: one(ctx.sizes, 'rate'), seconds: one(ctx.sizes, 'seconds'), warmup: optional('warmup'), procs: one(ctx.sizes, 'procs'),
      forms: formsOf(optional('protobuf'), optional('table')), h2Sessions: optional('h2'),
      goClient: optional('go') ? buildGoClient() : undefined,
    };
    // the bare TLS baseline writes JSON lines over HTTP/1.1: it is comparable with that load only
    const comparable = load0.h2Sessions === 0 && load0.forms.every((f) => f === 'json');
    const bySize: { watchers: number; ours: Run & { createLatencyMs: ReturnType<typeof percentiles> }; baseline: Run; ratioEventsPerSec: number; ratioP99: number }[] = [];
    for (const watchers of ctx.sizes.watchers) {
      const load = { ...load0, watchers };
      const other = process.env.ORCH_BENCH_SERVER;
      const server = await startServer({ ...(other ? { script: builtServerScript(other) } : {}), ...(process.env.ORCH_BENCH_NODE_ARGS ? { nodeArgs: process.env.ORCH_BENCH_NODE_ARGS.split(' ') } : {}), args: ['--log-level', 'warn'] });
      const writer = new Pool(server.url, { connections: 16, connect: { ca: server.admin.ca, cert: server.admin.cert, key: server.admin.key } });
      const post = async (path: string, body: string): Promise<number> => {
        const r = await writer.request({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body });
        await r.body.dump();
        return r.statusCode;
      };
      try {
        await target.prepare(server);
        const writeMs: number[] = [];
        /** acknowledgement time by `sent` time */
        const acks = new Map<number, number>();
        const ours = await runLoad(load, `${server.url}${target.watchPath}`, server.admin, server.process.pid as number, async (i) => {
          const sent = Date.now();
          const status = await post(target.createPath, target.createBody(i, sent));
          if (status !== 201) throw new Error(`create: ${status}`);
          const acked = Date.now();
          writeMs.push(acked - sent);
          if (!acks.has(sent)) acks.set(sent, acked);
        }, (l) => ctx.log(`watch-fanout ${watchers} watchers: ${l}`), () => { writeMs.length = 0; }, (sent) => acks.get(sent));
        ctx.log(`watch-fanout ${watchers} watchers: ours done (${fmt(ours.eventsPerSec)} events/s); baseline next`);
        const pki = `${server.dataDir}/pki`;
        const base = comparable
          ? await baseline(load, target, server.admin, readFileSync(`${pki}/apiserver.crt`, 'utf8'), readFileSync(`${pki}/apiserver.key`, 'utf8'), (l) => ctx.log(`watch-fanout ${watchers} watchers, baseline: ${l}`))
          : undefined;
        const row = {
          watchers, ours: { ...ours, createLatencyMs: latencyPercentiles(writeMs) }, baseline: base ?? ours,
          ratioEventsPerSec: base ? +(ours.eventsPerSec / base.eventsPerSec).toFixed(2) : NaN,
          ratioP99: base ? +(eventLatency(ours).p99 / Math.max(1, base.latencyMs.p99)).toFixed(2) : NaN,
        };
        bySize.push(row);
        ctx.log(`watch-fanout ${watchers} watchers (${describeLoad(load, target)}), ${load.rate} writes/s offered: ours ${fmt(ours.eventsPerSec)} events/s (windows ±${fmt(ours.windowEventsPerSec.spreadPct)}%, accepted ${ours.acceptedPerSec} writes/s), send→receipt p50 ${fmt(ours.latencyMs.p50)} ms p99 ${fmt(ours.latencyMs.p99)} ms, ${commitLatency(ours)}, server CPU ${ours.serverCpuPercent}% RSS ${ours.serverRssMiB} MiB (peak ${ours.serverRssPeakMiB}), ${fmt(ours.bytesPerSec / 1e6)} MB/s received, clients' CPU ${ours.clientCpuPercent}%, ${ours.streamsEnded} streams ended; ${base ? `baseline ${fmt(base.eventsPerSec)} events/s p99 ${fmt(base.latencyMs.p99)} ms; ratio ${row.ratioEventsPerSec}` : 'no comparable baseline'}`);
      } finally {
        // destroy, not close: a write the server never answered must not hold the run
        await writer.destroy();
        await server.dispose();
      }
    }

    const ratios: Ratio[] = !comparable ? [] : bySize.flatMap((s) => [
      ratio(`${s.watchers} watchers events/s`, s.ours.eventsPerSec, s.baseline.eventsPerSec, 'higher'),
      ratio(`${s.watchers} watchers p99 commit→receipt`, eventLatency(s.ours).p99, Math.max(1, s.baseline.latencyMs.p99), 'lower'),
    ]);
    const lines = bySize.map((s) => `watch-fanout ${s.watchers} watchers, ${load0.rate} writes/s offered: ours ${fmt(s.ours.eventsPerSec)} events/s (${fmt(s.ours.eventsDelivered)} of ${fmt(s.ours.expectedEvents)} expected; per-second windows median ${fmt(s.ours.windowEventsPerSec.median)} ±${fmt(s.ours.windowEventsPerSec.spreadPct)}%), accepted ${s.ours.acceptedPerSec} writes/s, send→receipt p50 ${fmt(s.ours.latencyMs.p50)} ms p99 ${fmt(s.ours.latencyMs.p99)} ms, ${commitLatency(s.ours)}, server CPU ${s.ours.serverCpuPercent}% RSS ${s.ours.serverRssMiB} MiB, ${fmt(s.ours.bytesPerSec / 1e6)} MB/s received, clients' CPU ${s.ours.clientCpuPercent}% (${describeLoad(load0, target)}); ${comparable ? `baseline ${fmt(s.baseline.eventsPerSec)} events/s p99 ${fmt(s.baseline.latencyMs.p99)} ms; ratio events/s ${s.ratioEventsPerSec} (DESIGN: ≥ 0.8)` : 'no comparable baseline'}`);
    const budget: BudgetLine[] = [];
    for (const s of bySize) {
      // DESIGN.md's kube-apiserver figures are for ServiceAccounts
      if (s.watchers === 1000 && load0.rate === 100 && target === serviceAccounts) {
        // DESIGN.md's ≥ 100k events/s at 100 writes/s is every event of every accepted write delivered
        budget.push({ what: 'watch fan-out, 1,000 watchers, 100 writes/s offered (kube-apiserver: 42 writes/s accepted, 42k events/s, p99 407 ms)', target: 'every write accepted and its event delivered to every watcher; commit→receipt p99 ≤ 100 ms', measured: `${s.ours.accepted}/${s.ours.offered} accepted; ${fmt(s.ours.eventsDelivered)} of ${fmt(s.ours.expectedEvents)} events (${fmt(s.ours.eventsPerSec)}/s); p99 ${fmt(eventLatency(s.ours).p99)} ms`, within: s.ours.accepted === s.ours.offered && s.ours.eventsDelivered >= s.ours.expectedEvents && eventLatency(s.ours).p99 <= 100 });
      }
      if (s.watchers === 5000 && load0.rate === 100 && target === serviceAccounts) {
        budget.push({ what: 'watch fan-out, 5,000 watchers, same writer (kube-apiserver: 11 writes/s, 56k events/s, p99 1.5 s)', target: 'every write accepted; ≥ 226k events/s; commit→receipt p99 ≤ 450 ms', measured: `${s.ours.accepted}/${s.ours.offered} accepted; ${fmt(s.ours.eventsPerSec)} events/s; p99 ${fmt(eventLatency(s.ours).p99)} ms`, within: s.ours.accepted === s.ours.offered && s.ours.eventsPerSec >= 226_000 && eventLatency(s.ours).p99 <= 450 });
      }
      if (comparable) budget.push({ what: `fan-out against the bare TLS baseline, ${s.watchers} watchers`, target: '≥ 0.8 of its events/s', measured: String(s.ratioEventsPerSec), within: s.ratioEventsPerSec >= 0.8 });
    }
    const categories = bySize.map((s) => s.watchers.toLocaleString('en-US'));
    return {
      lines, ratios, budget,
      tables: [{
        title: `${load0.rate} creates/s offered for ${load0.seconds} s to every watcher (${describeLoad(load0, target)}), watchers spread over ${load0.procs} load process(es); latency on 1 event in ${sampleEvery}; ± is the spread of one-second windows${comparable ? '' : '; no comparable baseline (its columns repeat ours)'}`,
        columns: ['watchers', 'ours events/s', 'spread', 'accepted writes/s', 'send→receipt p50 ms', 'p99 ms', 'commit→receipt p50 ms', 'p99 ms', 'server CPU %', 'server RSS MiB (median of 1 s samples)', 'baseline events/s', 'baseline p99 ms', 'ratio events/s'],
        rows: bySize.map((s) => [s.watchers.toLocaleString('en-US'), fmt(s.ours.eventsPerSec), `±${fmt(s.ours.windowEventsPerSec.spreadPct)}%`, fmt(s.ours.acceptedPerSec), fmt(s.ours.latencyMs.p50), fmt(s.ours.latencyMs.p99), fmt(s.ours.commitLatencyMs?.p50 ?? NaN), fmt(s.ours.commitLatencyMs?.p99 ?? NaN), s.ours.serverCpuPercent, s.ours.serverRssMiB, fmt(s.baseline.eventsPerSec), fmt(s.baseline.latencyMs.p99), fmt(s.ratioEventsPerSec)]),
      }],
      charts: [
        {
          id: 'watch-fanout-events', title: 'Watch events delivered per second against watchers', kind: 'line', xLabel: 'watchers', yLabel: 'events/s',
          categories, series: [
            { name: 'ours', color: '#1f77b4', values: bySize.map((s) => s.ours.eventsPerSec) },
            { name: 'bare TLS baseline', color: '#2ca02c', dashed: true, values: bySize.map((s) => s.baseline.eventsPerSec) },
            { name: 'offered x watchers', color: '#7f7f7f', dashed: true, values: bySize.map((s) => load0.rate * s.watchers) },
          ],
        },
        {
          id: 'watch-fanout-latency', title: 'Commit-to-receipt latency percentiles (ms) against watchers', kind: 'bar', xLabel: 'watchers', yLabel: 'ms',
          categories, series: [
            { name: 'ours p50', color: '#9ecae1', values: bySize.map((s) => eventLatency(s.ours).p50) },
            { name: 'ours p90', color: '#4292c6', values: bySize.map((s) => eventLatency(s.ours).p90) },
            { name: 'ours p99', color: '#08519c', values: bySize.map((s) => eventLatency(s.ours).p99) },
            { name: 'baseline p50', color: '#c7e9c0', values: bySize.map((s) => s.baseline.latencyMs.p50) },
            { name: 'baseline p99', color: '#41ab5d', values: bySize.map((s) => s.baseline.latencyMs.p99) },
          ],
        },
      ],
      figures: { ...load0, objects: target.objects, sampleEvery, bySize, server: process.env.ORCH_BENCH_SERVER ?? 'this checkout' },
    };
  },
};
