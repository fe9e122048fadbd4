/**
 * list: list N ServiceAccounts in one call and in pages of 500 (JSON), one request at a time from
 * this process, after the store was filled from a separate load process. Baseline in the same
 * run: the same N objects serialized by JSON.stringify in this process (no HTTP, TLS or storage).
 */
import { agentFor, call, timeRounds } from '../support.js';
import {
  LoadProcess, fmt, memoryOf, one, percentiles, ratio, spread, startServer,
  type BudgetLine, type Percentiles, type Ratio, type Scenario,
} from '../harness.js';

interface Size {
  objects: number;
  listMiB: number;
  fillCreatesPerSec: number;
  oneCallMs: Percentiles & { spreadPct: number };
  pagedMs: Percentiles & { spreadPct: number };
  baselineStringifyMs: Percentiles & { spreadPct: number };
  ratioOneCallToBaseline: number;
  serverRssMiB: number;
}

/** `rounds` timings after `warmup` unmeasured ones, as percentiles plus the spread. */
async function sample(rounds: number, warmup: number, fn: () => Promise<void> | void) {
  const ms = await timeRounds(rounds, warmup, fn);
  const p = percentiles(ms);
  return { ...p, spreadPct: spread(ms).spreadPct };
}

export const scenario: Scenario = {
  name: 'list',
  description: 'List N ServiceAccounts in one call and in pages of 500 (JSON); baseline: JSON.stringify of the same objects in the client process.',
  defaults: { objects: [1_000, 10_000], rounds: [10], warmup: [2], page: [500] },
  smoke: { objects: [300], rounds: [3], warmup: [1], page: [100] },
  help: { objects: 'stored ServiceAccounts (list, filled in increasing order)', rounds: 'measured lists per size', warmup: 'unmeasured lists first', page: 'page size (limit) of the paged list' },
  async run(ctx) {
    const sizes = [...ctx.sizes.objects].sort((a, b) => a - b);
    const rounds = one(ctx.sizes, 'rounds');
    const warmup = one(ctx.sizes, 'warmup');
    const pageSize = one(ctx.sizes, 'page');
    const server = await startServer({ args: ['--log-level', 'warn'] });
    const agent = agentFor(server, 4);
    const load = await LoadProcess.start(server.url, server.admin);
    try {
      const ns = await call(server, agent, 'POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: 'bench' } }));
      if (ns.status !== 201) throw new Error(`namespace: ${ns.status} ${ns.text}`);
      const results: Size[] = [];
      let stored = 0;
      for (const objects of sizes) {
        const fill = await load.fill('bench', 'sa', stored, objects - stored, 64);
        stored = objects;
        let listBytes = 0;
        let listed = '';
        const whole = await sample(rounds, warmup, async () => {
          const r = await call(server, agent, 'GET', '/api/v1/namespaces/bench/serviceaccounts');
          if (r.status !== 200) throw new Error(`list: ${r.status}`);
          listBytes = r.bytes;
          listed = r.text;
        });
        const paged = await sample(rounds, Math.max(1, warmup - 1), async () => {
          let token = '';
          let total = 0;
          do {
            const r = await call(server, agent, 'GET', `/api/v1/namespaces/bench/serviceaccounts?limit=${pageSize}${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
            const page = JSON.parse(r.text) as { metadata: { continue?: string }; items: unknown[] };
            total += page.items.length;
            token = page.metadata.continue ?? '';
          } while (token);
          if (total < objects) throw new Error(`paged list returned ${total} of ${objects}`);
        });
        const items = (JSON.parse(listed) as { items: unknown[] }).items;
        if (items.length < objects) throw new Error(`list returned ${items.length} of ${objects}`);
        const baseline = await sample(rounds, warmup, () => { JSON.stringify({ kind: 'ServiceAccountList', apiVersion: 'v1', metadata: {}, items }); });
        const size: Size = {
          objects, listMiB: +(listBytes / 1048576).toFixed(2), fillCreatesPerSec: fill.requestsPerSec,
          oneCallMs: round3(whole), pagedMs: round3(paged), baselineStringifyMs: round3(baseline),
          ratioOneCallToBaseline: +(whole.p50 / baseline.p50).toFixed(2), serverRssMiB: memoryOf(server.process.pid as number).rssMiB,
        };
        results.push(size);
        ctx.log(`list ${objects} SAs (${size.listMiB} MiB): one call ${fmt(whole.p50)} ms, pages of ${pageSize} ${fmt(paged.p50)} ms; JSON.stringify baseline ${fmt(baseline.p50)} ms; ratio ${size.ratioOneCallToBaseline}; server RSS ${fmt(size.serverRssMiB)} MiB`);
      }

      const ratios: Ratio[] = results.map((s) => ratio(`one-call list of ${s.objects} vs JSON.stringify`, s.oneCallMs.p50, s.baselineStringifyMs.p50, 'lower'));
      const lines = results.map((s) => `list ${s.objects} SAs (${s.listMiB} MiB): one call p50 ${fmt(s.oneCallMs.p50)} ms (max ${fmt(s.oneCallMs.max)}, ±${fmt(s.oneCallMs.spreadPct)}%), pages of ${pageSize} p50 ${fmt(s.pagedMs.p50)} ms; JSON.stringify baseline ${fmt(s.baselineStringifyMs.p50)} ms; ratio ${s.ratioOneCallToBaseline}; server RSS ${fmt(s.serverRssMiB)} MiB`);
      const budget: BudgetLine[] = [];
      const tenK = results.find((s) => s.objects === 10_000);
      if (tenK) {
        budget.push({ what: 'list 10,000 ServiceAccounts, one call (kube-apiserver 1.32 + etcd: 59 ms)', target: '≤ 18 ms', measured: `${fmt(tenK.oneCallMs.p50)} ms`, within: tenK.oneCallMs.p50 <= 18 });
        if (pageSize === 500) budget.push({ what: 'list 10,000 ServiceAccounts in pages of 500 (kube-apiserver: 253 ms)', target: '≤ 75 ms', measured: `${fmt(tenK.pagedMs.p50)} ms`, within: tenK.pagedMs.p50 <= 75 });
      }
      return {
        lines, ratios, budget,
        tables: [{
          title: `milliseconds over ${rounds} lists after ${warmup} warm-up(s), one request at a time; ± is (max-min)/median`,
          columns: ['objects', 'list MiB', 'one call p50', 'one call max', 'spread', `pages of ${pageSize} p50`, 'pages max', 'JSON.stringify p50', 'ratio', 'server RSS MiB'],
          rows: results.map((s) => [s.objects.toLocaleString('en-US'), fmt(s.listMiB), fmt(s.oneCallMs.p50), fmt(s.oneCallMs.max), `±${fmt(s.oneCallMs.spreadPct)}%`, fmt(s.pagedMs.p50), fmt(s.pagedMs.max), fmt(s.baselineStringifyMs.p50), fmt(s.ratioOneCallToBaseline), fmt(s.serverRssMiB)]),
        }],
        charts: [{
          id: 'list-latency', title: 'List latency (ms) against stored objects', kind: 'bar', xLabel: 'ServiceAccounts listed', yLabel: 'ms',
          categories: results.map((s) => s.objects.toLocaleString('en-US')),
          series: [
            { name: 'one call p50', color: '#1f77b4', values: results.map((s) => s.oneCallMs.p50) },
            { name: 'one call max', color: '#aec7e8', values: results.map((s) => s.oneCallMs.max) },
            { name: `pages of ${pageSize} p50`, color: '#ff7f0e', values: results.map((s) => s.pagedMs.p50) },
            { name: 'JSON.stringify baseline p50', color: '#2ca02c', values: results.map((s) => s.baselineStringifyMs.p50) },
          ],
        }],
        figures: { pageSize, rounds, warmup, bySize: results },
      };
    } finally {
      await load.close();
      agent.destroy();
      await server.dispose();
    }
  },
};

function round3<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, typeof v === 'number' ? +v.toFixed(3) : v])) as T;
}
