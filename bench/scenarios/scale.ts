/**
 * scale: server RSS and start-to-ready time with N stored ServiceAccounts. The store is filled
 * once per size (from a separate load process, 64 in flight), then the server is restarted on
 * that data dir several times: each restart is timed from spawn to the first /readyz 200, and its
 * RSS read from /proc once it has settled. Baseline in the same run: the same restarts on an
 * empty store (initialized once, so certificate generation is not timed).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentFor, call } from '../support.js';
import {
  LoadProcess, dirBytes, fmt, measureRounds, memoryOf, one, ratio, sleep, spread, startServer,
  type BudgetLine, type Ratio, type Scenario, type Spread,
} from '../harness.js';

const args = ['--log-level', 'warn'];
const settleMs = 1000;

interface Restarts { startMs: Spread; rssMiB: Spread; peakRssMiB: Spread; storeMiB: number; objectsSeen: number }

/** Restarts the server on `dataDir` (one unmeasured start, then `rounds`), reading time to ready and memory. */
async function restarts(dataDir: string, rounds: number, log: (l: string) => void, label: string, countIn?: string): Promise<Restarts> {
  let objectsSeen = -1;
  const runs = await measureRounds(rounds, 1, async (r, warm) => {
    const t0 = process.hrtime.bigint();
    const server = await startServer({ dataDir, args, timeoutMs: 180_000 });
    const startMs = Number(process.hrtime.bigint() - t0) / 1e6;
    try {
      await sleep(settleMs);
      const mem = memoryOf(server.process.pid as number);
      if (!warm) log(`scale ${label}: restart ${r + 1}/${rounds}: ready in ${fmt(startMs)} ms, RSS ${fmt(mem.rssMiB)} MiB (peak ${fmt(mem.peakMiB)} MiB)`);
      if (countIn && r === rounds - 1) {
        // the store really holds what was written: one item and the count of the rest
        const agent = agentFor(server, 1);
        const res = await call(server, agent, 'GET', `/api/v1/namespaces/${countIn}/serviceaccounts?limit=1`);
        agent.destroy();
        const page = JSON.parse(res.text) as { items: unknown[]; metadata: { remainingItemCount?: number } };
        objectsSeen = page.items.length + (page.metadata.remainingItemCount ?? 0);
      }
      return { startMs, ...mem };
    } finally {
      await server.stop();
    }
  });
  return {
    startMs: spread(runs.map((x) => x.startMs)), rssMiB: spread(runs.map((x) => x.rssMiB)), peakRssMiB: spread(runs.map((x) => x.peakMiB)),
    storeMiB: +(dirBytes(dataDir) / 1048576).toFixed(1), objectsSeen,
  };
}

export const scenario: Scenario = {
  name: 'scale',
  description: 'Server start-to-ready time and RSS with 10,000 and 100,000 stored ServiceAccounts (store filled once, server restarted on it); baseline: the same restarts on an empty store.',
  defaults: { objects: [10_000, 100_000], restarts: [3] },
  smoke: { objects: [200, 600], restarts: [1] },
  help: { objects: 'stored ServiceAccounts (list, filled in increasing order)', restarts: 'measured restarts per size (after one unmeasured)' },
  async run(ctx) {
    const sizes = [...ctx.sizes.objects].sort((a, b) => a - b);
    const rounds = one(ctx.sizes, 'restarts');
    const emptyDir = mkdtempSync(join(tmpdir(), 'orch-bench-empty-'));
    const dataDir = mkdtempSync(join(tmpdir(), 'orch-bench-scale-'));
    try {
      // baseline: an empty store, initialized once
      const init = await startServer({ dataDir: emptyDir, args });
      await init.stop();
      const empty = await restarts(emptyDir, rounds, ctx.log, 'empty store');

      const bySize: { objects: number; fillCreatesPerSec: number; rssAfterFillMiB: number; restarts: Restarts }[] = [];
      let stored = 0;
      for (const n of sizes) {
        const server = await startServer({ dataDir, args, timeoutMs: 180_000 });
        let load: LoadProcess | undefined;
        try {
          if (stored === 0) {
            const agent = agentFor(server, 1);
            const ns = await call(server, agent, 'POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: 'scale' } }));
            agent.destroy();
            if (ns.status !== 201) throw new Error(`namespace: ${ns.status} ${ns.text}`);
          }
          load = await LoadProcess.start(server.url, server.admin);
          const filled = await load.fill('scale', 'sa', stored, n - stored, 64);
          stored = n;
          await sleep(settleMs);
          const rssAfterFillMiB = memoryOf(server.process.pid as number).rssMiB;
          ctx.log(`scale: filled to ${n} objects at ${fmt(filled.requestsPerSec)} creates/s; RSS before restart ${fmt(rssAfterFillMiB)} MiB`);
          await load.close();
          load = undefined;
          await server.stop();
          const r = await restarts(dataDir, rounds, ctx.log, `${n} objects`, 'scale');
          // ours plus the namespace's own `default` ServiceAccount
          if (r.objectsSeen < n || r.objectsSeen > n + 1) throw new Error(`after restart the namespace lists ${r.objectsSeen} ServiceAccounts, expected ${n} (+1)`);
          bySize.push({ objects: n, fillCreatesPerSec: filled.requestsPerSec, rssAfterFillMiB, restarts: r });
        } finally {
          await load?.close();
          await server.stop();
        }
      }

      const ratios: Ratio[] = [];
      const lines = [`scale empty store: ready in ${fmt(empty.startMs.median)} ms (±${fmt(empty.startMs.spreadPct)}%), RSS ${fmt(empty.rssMiB.median)} MiB, peak ${fmt(empty.peakRssMiB.median)} MiB`];
      for (const s of bySize) {
        const start = ratio(`start to ready, ${s.objects} objects vs empty`, s.restarts.startMs.median, empty.startMs.median, 'lower');
        const rss = ratio(`RSS, ${s.objects} objects vs empty`, s.restarts.rssMiB.median, empty.rssMiB.median, 'lower');
        ratios.push(start, rss);
        lines.push(`scale ${s.objects} objects (store ${fmt(s.restarts.storeMiB)} MiB): ready in ${fmt(s.restarts.startMs.median)} ms (±${fmt(s.restarts.startMs.spreadPct)}%), RSS ${fmt(s.restarts.rssMiB.median)} MiB, peak ${fmt(s.restarts.peakRssMiB.median)} MiB; RSS before restart ${fmt(s.rssAfterFillMiB)} MiB; filled at ${fmt(s.fillCreatesPerSec)} creates/s; ratio to empty: start ${fmt(start.value)}, RSS ${fmt(rss.value)}`);
      }
      const categories = ['empty', ...bySize.map((s) => s.objects.toLocaleString('en-US'))];
      const budget: BudgetLine[] = [
        { what: 'start to ready, empty store (kube-apiserver 1.32 + etcd: 2.3 s)', target: '≤ 0.5 s', measured: `${fmt(empty.startMs.median / 1000)} s`, within: empty.startMs.median <= 500 },
      ];
      const big = bySize.find((s) => s.objects === 100_000);
      if (big) {
        budget.push({ what: 'start to ready, 100,000 objects (kube-apiserver: 7.9 s)', target: '≤ 2.4 s', measured: `${fmt(big.restarts.startMs.median / 1000)} s`, within: big.restarts.startMs.median <= 2400 });
        budget.push({ what: '100,000 ServiceAccounts stored, RSS (kube-apiserver + etcd: 1,114 MiB)', target: '≤ 450 MiB, also right after filling', measured: `${fmt(big.restarts.rssMiB.median)} MiB after restart, ${fmt(big.rssAfterFillMiB)} MiB after filling`, within: Math.max(big.restarts.rssMiB.median, big.rssAfterFillMiB) <= 450 });
      }
      return {
        lines, ratios, budget,
        tables: [{
          title: `median of ${rounds} restarts after one unmeasured; RSS read ${settleMs} ms after ready; peak is VmHWM; ± is the restarts' spread`,
          columns: ['stored objects', 'store on disk MiB', 'start to ready ms', 'spread', 'RSS MiB', 'peak RSS MiB', 'RSS before restart MiB', 'fill creates/s', 'start ratio', 'RSS ratio'],
          rows: [
            ['empty (baseline)', fmt(empty.storeMiB), fmt(empty.startMs.median), `±${fmt(empty.startMs.spreadPct)}%`, fmt(empty.rssMiB.median), fmt(empty.peakRssMiB.median), '', '', '1', '1'],
            ...bySize.map((s) => [s.objects.toLocaleString('en-US'), fmt(s.restarts.storeMiB), fmt(s.restarts.startMs.median), `±${fmt(s.restarts.startMs.spreadPct)}%`, fmt(s.restarts.rssMiB.median), fmt(s.restarts.peakRssMiB.median), fmt(s.rssAfterFillMiB), fmt(s.fillCreatesPerSec), fmt(s.restarts.startMs.median / empty.startMs.median), fmt(s.restarts.rssMiB.median / empty.rssMiB.median)]),
          ],
        }],
        charts: [
          {
            id: 'scale-startup', title: 'Start to ready (ms) against stored objects', kind: 'bar', xLabel: 'stored ServiceAccounts', yLabel: 'ms',
            categories, series: [{ name: 'start to /readyz 200 (median)', color: '#1f77b4', values: [empty.startMs.median, ...bySize.map((s) => s.restarts.startMs.median)] },
              { name: 'slowest restart', color: '#aec7e8', values: [empty.startMs.max, ...bySize.map((s) => s.restarts.startMs.max)] }],
          },
          {
            id: 'scale-rss', title: 'Server memory (MiB) against stored objects', kind: 'bar', xLabel: 'stored ServiceAccounts', yLabel: 'MiB',
            categories, series: [
              { name: 'RSS after restart', color: '#2ca02c', values: [empty.rssMiB.median, ...bySize.map((s) => s.restarts.rssMiB.median)] },
              { name: 'peak RSS during start', color: '#98df8a', values: [empty.peakRssMiB.median, ...bySize.map((s) => s.restarts.peakRssMiB.median)] },
              { name: 'RSS after filling', color: '#ff7f0e', values: [null, ...bySize.map((s) => s.rssAfterFillMiB)] },
            ],
            refLines: big ? [{ value: 450, label: 'budget at 100,000: 450 MiB' }] : [],
          },
        ],
        figures: { restarts: rounds, settleMs, empty, bySize },
      };
    } finally {
      rmSync(emptyDir, { recursive: true, force: true });
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
};
