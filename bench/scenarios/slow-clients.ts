/**
 * slow-clients: clients that stop reading must not grow the server's memory nor hold up the
 * others. Live watchers (bench/watch-client.ts) watch a namespace while a writer offers creates at
 * a steady rate; then a separate process (bench/stalled-client.ts) opens watch streams on the same
 * namespace and lists of a large namespace (~9 MB each), each on its own connection, and reads
 * none of them; later it reads them all, then drops them. Reported: server RSS sampled through
 * every phase, whether each live watcher received every write, their commit-to-receipt latency,
 * how the stalled streams ended, and the server's cuts by reason. The baseline is the same
 * server's RSS before any stalled client arrived.
 */
import type { ChildProcess } from 'node:child_process';
import { agentFor, call } from '../support.js';
import {
  LoadProcess, fmt, forkModule, memoryOf, nextMessage, one, percentiles, ratio, round, startServer, stopChild,
  type BudgetLine, type Scenario,
} from '../harness.js';

const sampleEvery = 20;
const phases = ['before', 'connecting', 'stalled', 'reading', 'dropped'] as const;
/** writes in flight at most: past it the server is behind, and a write is skipped rather than queued in the client */
const maxWritesInFlight = 64;
type Phase = (typeof phases)[number];

interface LiveReport { events: number; perStream: number[]; latencies: number[]; sampledAt: number[]; open: number; cpuMs: number }
interface StalledReport {
  watches: { complete: number; cut: number; open: number; bytes: number };
  lists: { complete: number; cut: number; open: number; bytes: number };
}

export const scenario: Scenario = {
  name: 'slow-clients',
  description: 'Stalled watchers and ~9 MB lists that never read, beside live watchers under a steady write rate: live watchers miss nothing, their latency, and server RSS before, during and after the stalled clients read or disconnect; baseline: RSS before the stalled clients came.',
  defaults: { stalled: [500], lists: [60], live: [50], rate: [200], listObjects: [19_000], pad: [512], before: [5], stall: [45], after: [10] },
  smoke: { stalled: [20], lists: [4], live: [5], rate: [20], listObjects: [1_000], pad: [512], before: [1], stall: [3], after: [2] },
  help: {
    stalled: 'watch streams that never read', lists: 'list requests that never read', live: 'watchers that read',
    rate: 'creates offered per second, watched by every watcher', listObjects: 'ServiceAccounts in the listed namespace (19,000: ~9 MB of JSON)',
    pad: 'bytes of annotation padding per created object (event size)', before: 'seconds of writes before the stalled clients come',
    stall: 'seconds the stalled clients read nothing', after: 'seconds they then read, and seconds after they disconnect',
  },
  async run(ctx) {
    const n = (name: string) => one(ctx.sizes, name);
    const load = { stalled: n('stalled'), lists: n('lists'), live: n('live'), rate: n('rate'), listObjects: n('listObjects'), pad: n('pad'), before: n('before'), stall: n('stall'), after: n('after') };
    const server = await startServer({ args: ['--log-level', 'warn'] });
    const pid = server.process.pid as number;
    const agent = agentFor(server, maxWritesInFlight);
    const children: ChildProcess[] = [];
    const samples: { phase: Phase; second: number; rssMiB: number }[] = [];
    let phase: Phase = 'before';
    let sampler: NodeJS.Timeout | undefined;
    try {
      for (const name of ['big', 'fanout']) {
        const r = await call(server, agent, 'POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name } }));
        if (r.status !== 201) throw new Error(`namespace ${name}: ${r.status} ${r.text}`);
      }
      const filler = await LoadProcess.start(server.url, server.admin);
      const fill = await filler.fill('big', 'sa', 0, load.listObjects, 64);
      await filler.close();
      const list = await call(server, agent, 'GET', '/api/v1/namespaces/big/serviceaccounts');
      if (list.status !== 200) throw new Error(`list: ${list.status}`);
      const listMB = round(list.bytes / 1e6, 2);
      ctx.log(`filled ${load.listObjects} ServiceAccounts at ${fmt(fill.requestsPerSec)}/s: one list is ${listMB} MB`);
      const fanout = await call(server, agent, 'GET', '/api/v1/namespaces/fanout/serviceaccounts');
      const rv = (JSON.parse(fanout.text) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
      const watchPath = `/api/v1/namespaces/fanout/serviceaccounts?watch=1&resourceVersion=${rv}`;

      const live = forkModule('./watch-client.js');
      children.push(live);
      live.send({ url: `${server.url}${watchPath}`, count: load.live, ...server.admin, sampleEvery });
      await new Promise<void>((resolve, reject) => {
        live.once('message', () => resolve());
        live.once('exit', (code) => reject(new Error(`watch client exited (${code}) before its streams were open`)));
      });
      live.send({ t: 'reset' });

      const t0 = Date.now();
      sampler = setInterval(() => samples.push({ phase, second: round((Date.now() - t0) / 1000, 1), rssMiB: memoryOf(pid).rssMiB }), 250);
      const padding = 'p'.repeat(load.pad);
      let offered = 0;
      let skipped = 0;
      let accepted = 0;
      let failed = 0;
      let inFlight = 0;
      const writes: Promise<void>[] = [];
      let writing = true;
      const writer = (async () => {
        const interval = 1000 / load.rate;
        let ticks = 0;
        while (writing) {
          const due = Math.floor((Date.now() - t0) / interval);
          for (; ticks < due; ticks++) {
            if (inFlight >= maxWritesInFlight) { skipped++; continue; }
            const i = offered++;
            inFlight++;
            // stamped as it is sent: latency includes the durable commit, not a queue in this client
            const body = JSON.stringify({ metadata: { name: `sa-${i}`, annotations: { 'bench.orch.io/sent': String(Date.now()), 'bench.orch.io/pad': padding } } });
            writes.push(call(server, agent, 'POST', '/api/v1/namespaces/fanout/serviceaccounts', body)
              .then((r) => { if (r.status === 201) accepted++; else failed++; }, () => { failed++; })
              .finally(() => { inFlight--; }));
          }
          await new Promise((r) => setTimeout(r, Math.min(interval, 5)));
        }
      })();
      const startedAt = new Map<Phase, number>();
      const at = (p: Phase) => {
        phase = p;
        startedAt.set(p, Date.now());
        ctx.log(`${p} (${round((Date.now() - t0) / 1000, 1)} s, server RSS ${memoryOf(pid).rssMiB} MiB)`);
      };

      at('before');
      await new Promise((r) => setTimeout(r, load.before * 1000));
      at('connecting');
      const stalled = forkModule('./stalled-client.js');
      children.push(stalled);
      const ready = nextMessage(stalled, 'ready');
      stalled.send({ url: server.url, watchCollection: '/api/v1/namespaces/fanout/serviceaccounts', watches: load.stalled, listPath: '/api/v1/namespaces/big/serviceaccounts', lists: load.lists, ...server.admin });
      await ready;
      at('stalled');
      await new Promise((r) => setTimeout(r, load.stall * 1000));
      at('reading');
      stalled.send({ t: 'read' });
      // they read for `after` seconds, and on until every stream they hold has ended (cut or complete), for 2 minutes at most
      let readReport: StalledReport;
      for (const since = Date.now(); ;) {
        await new Promise((r) => setTimeout(r, 1000));
        const reported = nextMessage<StalledReport>(stalled, 'report');
        stalled.send({ t: 'report' });
        readReport = await reported;
        const waited = Date.now() - since;
        if (waited >= load.after * 1000 && (readReport.watches.open + readReport.lists.open === 0 || waited > 120_000)) break;
      }
      at('dropped');
      const dropped = nextMessage<StalledReport>(stalled, 'report');
      stalled.send({ t: 'drop' });
      await dropped;
      await new Promise((r) => setTimeout(r, load.after * 1000));
      writing = false;
      await writer;
      await Promise.race([Promise.all(writes), new Promise((r) => setTimeout(r, 30_000).unref())]);
      // the last events reach the live watchers (a watcher still short after 30 s has missed them)
      for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
        const counted = nextMessage<{ fewest: number }>(live, 'count');
        live.send({ t: 'count' });
        if ((await counted).fewest >= accepted) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      clearInterval(sampler);
      sampler = undefined;
      const liveReport = nextMessage<LiveReport>(live, 'report');
      live.send({ t: 'report' });
      const lr = await liveReport;

      const perPhase = phases.map((p) => {
        const rss = samples.filter((s) => s.phase === p).map((s) => s.rssMiB);
        return { phase: p, samples: rss.length, maxRssMiB: rss.length ? Math.max(...rss) : NaN, lastRssMiB: rss.length ? rss[rss.length - 1] : NaN };
      });
      const minEvents = Math.min(...lr.perStream);
      const maxEvents = Math.max(...lr.perStream);
      const latencyMs = percentiles(lr.latencies);
      const latencyByPhase = phases.map((p, i) => {
        const from = startedAt.get(p) ?? Number.POSITIVE_INFINITY;
        const to = startedAt.get(phases[i + 1]) ?? Number.POSITIVE_INFINITY;
        return { phase: p, ...percentiles(lr.latencies.filter((_, j) => lr.sampledAt[j] >= from && lr.sampledAt[j] < to)) };
      });
      const cuts: Record<string, number> = {};
      for (const line of server.logs) {
        if (!line.includes('cut a response whose client is not reading')) continue;
        const reason = /"reason":"([^"]+)"/.exec(line)?.[1] ?? 'unknown';
        cuts[reason] = (cuts[reason] ?? 0) + 1;
      }
      const peak = Math.max(...perPhase.map((p) => p.maxRssMiB));
      const beforeRss = perPhase[0].maxRssMiB;
      const figures = {
        ...load, listMB, offered, skippedWhileServerBehind: skipped, accepted, failedWrites: failed,
        live: { streams: lr.perStream.length, eventsPerStreamMin: minEvents, eventsPerStreamMax: maxEvents, missedByWorst: accepted - minEvents, latencyMs, latencyByPhase, clientCpuMs: round(lr.cpuMs, 0) },
        stalledAfterReading: readReport, cuts, rssByPhase: perPhase, rssTimeline: samples,
      };
      const lines = [
        `${load.stalled} stalled watchers + ${load.lists} stalled lists of ${listMB} MB beside ${load.live} live watchers, ${load.rate} creates/s scheduled: ${offered} sent, ${accepted} accepted${failed ? `, ${failed} failed` : ''}${skipped ? `, ${skipped} skipped while ${maxWritesInFlight} were in flight` : ''}`,
        `live watchers: every one received ${minEvents === maxEvents ? minEvents : `${minEvents}..${maxEvents}`} events of ${accepted} writes (missed by the worst: ${accepted - minEvents}); commit-to-receipt p50 ${fmt(latencyMs.p50)} ms, p99 ${fmt(latencyMs.p99)} ms (1 event in ${sampleEvery})`,
        `live latency p50/p99 by phase: ${latencyByPhase.map((p) => `${p.phase} ${fmt(p.p50)}/${fmt(p.p99)} ms`).join(', ')}`,
        `server RSS max by phase: ${perPhase.map((p) => `${p.phase} ${fmt(p.maxRssMiB)} MiB`).join(', ')} (target: < 1024 MiB throughout)`,
        `stalled clients when read: watches ${readReport.watches.cut} cut, ${readReport.watches.open} open, ${readReport.watches.complete} complete; lists ${readReport.lists.complete} complete, ${readReport.lists.cut} cut, ${readReport.lists.open} open; server cuts by reason: ${Object.entries(cuts).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}`,
      ];
      for (const l of lines) ctx.log(l);
      const budget: BudgetLine[] = [
        { what: 'live watchers miss nothing while others stall', target: 'every live watcher receives every accepted write', measured: `worst missed ${accepted - minEvents} of ${accepted}`, within: minEvents === accepted && maxEvents === accepted },
        { what: 'server RSS with stalled watchers and lists, in every phase', target: '< 1 GiB', measured: `${fmt(peak)} MiB peak`, within: peak < 1024 },
      ];
      return {
        lines, budget, figures,
        ratios: [ratio('server RSS peak vs before the stalled clients', peak, beforeRss, 'lower')],
        tables: [
          {
            title: 'Server RSS by phase (MiB, sampled every 250 ms)',
            columns: ['phase', 'what the stalled clients do', 'samples', 'max', 'last'],
            rows: perPhase.map((p) => [p.phase, { before: 'not there yet', connecting: 'opening their requests', stalled: 'connected, read nothing', reading: 'read everything', dropped: 'disconnected' }[p.phase], p.samples, fmt(p.maxRssMiB), fmt(p.lastRssMiB)]),
          },
          {
            title: `Live watchers (${lr.perStream.length}) against ${accepted} accepted writes`,
            columns: ['events per watcher, min', 'max', 'missed by the worst', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
            rows: [[minEvents, maxEvents, accepted - minEvents, fmt(latencyMs.p50), fmt(latencyMs.p90), fmt(latencyMs.p99), fmt(latencyMs.max)]],
          },
          {
            title: `Live watchers' commit-to-receipt latency by phase (ms; 1 event in ${sampleEvery})`,
            columns: ['phase', 'samples', 'p50', 'p90', 'p99', 'max'],
            rows: latencyByPhase.map((p) => [p.phase, p.count, fmt(p.p50), fmt(p.p90), fmt(p.p99), fmt(p.max)]),
          },
        ],
        charts: [{
          id: 'slow-clients-rss', title: 'Server RSS (MiB) through the phases', kind: 'line', xLabel: 'seconds', yLabel: 'MiB',
          categories: samples.filter((_, i) => i % 4 === 0).map((s) => String(s.second)),
          series: [{ name: 'RSS', color: '#1f77b4', values: samples.filter((_, i) => i % 4 === 0).map((s) => s.rssMiB) }],
          refLines: [{ value: 1024, label: '1 GiB' }],
        }],
      };
    } finally {
      if (sampler) clearInterval(sampler);
      await Promise.all(children.map((c) => stopChild(c)));
      agent.destroy();
      await server.dispose();
    }
  },
};
