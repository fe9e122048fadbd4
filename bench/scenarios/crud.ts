/**
 * crud: creates, gets, updates and deletes of ServiceAccounts at several concurrencies, from a
 * separate load process: requests/s and latency percentiles per verb. Baseline, in the same run
 * with the same load process code and the same rounds interleaved: a bare Node HTTPS server
 * (bench/baseline-server.ts) answering the same requests with a canned body.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentFor, call } from '../support.js';
import {
  LoadProcess, fmt, forkModule, measureRounds, nextMessage, one, ratio, spread, startServer, stopChild,
  type BudgetLine, type Op, type PhaseResult, type Ratio, type Scenario, type Spread, type Table,
} from '../harness.js';
import type { ChartSpec } from '../report/chart.js';

const ops: Op[] = ['create', 'get', 'update', 'delete'];

interface Cell { requestsPerSec: Spread; p50Ms: Spread; p90Ms: Spread; p99Ms: Spread; clientCpuMsPerRequest: number }
type Side = Record<Op, Cell>;

export const scenario: Scenario = {
  name: 'crud',
  description: 'ServiceAccount create, get, update (PUT) and delete at concurrency 1, 16 and 64 from a separate load process; baseline: a bare Node HTTPS server answering the same requests with a canned body.',
  defaults: { concurrency: [1, 16, 64], ops: [3000], rounds: [3], warmup: [1], procs: [1] },
  smoke: { concurrency: [1, 8], ops: [60], rounds: [2], warmup: [1], procs: [1] },
  help: {
    concurrency: 'requests in flight (list)',
    ops: 'requests per verb per round (each round creates, gets, updates and deletes this many objects)',
    rounds: 'measured rounds per concurrency', warmup: 'unmeasured rounds first', procs: 'load processes sharing the concurrency',
  },
  async run(ctx) {
    const concurrencies = ctx.sizes.concurrency;
    const count = one(ctx.sizes, 'ops');
    const rounds = one(ctx.sizes, 'rounds');
    const warmup = one(ctx.sizes, 'warmup');
    const procs = one(ctx.sizes, 'procs');

    const server = await startServer({ args: ['--log-level', 'warn'] });
    const baselineProcess = forkModule('./baseline-server.js');
    let ours: LoadProcess | undefined;
    let base: LoadProcess | undefined;
    try {
      const agent = agentFor(server, 1);
      const ns = await call(server, agent, 'POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: 'crud' } }));
      agent.destroy();
      if (ns.status !== 201) throw new Error(`namespace: ${ns.status} ${ns.text}`);
      const pki = join(server.dataDir, 'pki');
      const listening = nextMessage<{ port: number }>(baselineProcess, 'listening');
      baselineProcess.send({ t: 'start', cert: readFileSync(join(pki, 'apiserver.crt'), 'utf8'), key: readFileSync(join(pki, 'apiserver.key'), 'utf8'), ca: server.admin.ca });
      const { port } = await listening;
      ours = await LoadProcess.start(server.url, server.admin, procs);
      base = await LoadProcess.start(`https://127.0.0.1:${port}`, server.admin, procs);

      const figures: { concurrency: number; ours: Side; baseline: Side }[] = [];
      for (const c of concurrencies) {
        const measured = await measureRounds(rounds, warmup, async (r, warm) => {
          const prefix = `c${c}-${warm ? `w${-r}` : `r${r}`}`;
          const run = async (load: LoadProcess) => {
            const out = {} as Record<Op, PhaseResult>;
            for (const op of ops) out[op] = await load.run({ op, namespace: 'crud', prefix, from: 0, count, concurrency: c, expect: [] });
            return out;
          };
          // interleaved, so drift on a noisy machine hits both alike
          const o = await run(ours!);
          const b = await run(base!);
          if (!warm) ctx.log(`crud c=${c} round ${r + 1}/${rounds}: ${ops.map((op) => `${op} ${fmt(o[op].requestsPerSec)}/s (baseline ${fmt(b[op].requestsPerSec)}/s)`).join(', ')}`);
          return { o, b };
        });
        const side = (pick: (m: (typeof measured)[number]) => Record<Op, PhaseResult>): Side => Object.fromEntries(ops.map((op) => {
          const results = measured.map((m) => pick(m)[op]);
          return [op, {
            requestsPerSec: spread(results.map((x) => x.requestsPerSec)),
            p50Ms: spread(results.map((x) => x.latencyMs.p50)),
            p90Ms: spread(results.map((x) => x.latencyMs.p90)),
            p99Ms: spread(results.map((x) => x.latencyMs.p99)),
            clientCpuMsPerRequest: +(results.reduce((a, x) => a + x.clientCpuMs, 0) / results.reduce((a, x) => a + x.count, 0)).toFixed(4),
          }];
        })) as Side;
        figures.push({ concurrency: c, ours: side((m) => m.o), baseline: side((m) => m.b) });
      }

      const ratios: Ratio[] = [];
      const lines: string[] = [];
      const rows: (string | number)[][] = [];
      for (const f of figures) {
        for (const op of ops) {
          const o = f.ours[op];
          const b = f.baseline[op];
          const r = ratio(`${op} c${f.concurrency} requests/s`, o.requestsPerSec.median, b.requestsPerSec.median, 'higher');
          ratios.push(r);
          rows.push([op, f.concurrency, fmt(o.requestsPerSec.median), `±${fmt(o.requestsPerSec.spreadPct)}%`, fmt(o.p50Ms.median), fmt(o.p99Ms.median),
            fmt(b.requestsPerSec.median), fmt(b.p50Ms.median), fmt(b.p99Ms.median), fmt(r.value)]);
        }
        lines.push(`crud c=${f.concurrency}: ${ops.map((op) => `${op} ${fmt(f.ours[op].requestsPerSec.median)}/s p50 ${fmt(f.ours[op].p50Ms.median)} ms p99 ${fmt(f.ours[op].p99Ms.median)} ms`).join('; ')}`);
        lines.push(`crud c=${f.concurrency} baseline: ${ops.map((op) => `${op} ${fmt(f.baseline[op].requestsPerSec.median)}/s p99 ${fmt(f.baseline[op].p99Ms.median)} ms`).join('; ')}; ratio ${ops.map((op) => `${op} ${fmt(f.ours[op].requestsPerSec.median / f.baseline[op].requestsPerSec.median)}`).join(', ')}`);
      }
      const tables: Table[] = [{
        title: `requests/s and latency (ms): median of ${rounds} rounds of ${count} requests per verb, after ${warmup} warm-up round(s); ± is the rounds' spread (max-min)/median`,
        columns: ['verb', 'concurrency', 'ours req/s', 'spread', 'ours p50', 'ours p99', 'baseline req/s', 'baseline p50', 'baseline p99', 'ratio req/s'],
        rows,
      }];

      const colors: Record<Op, string> = { create: '#1f77b4', get: '#2ca02c', update: '#ff7f0e', delete: '#d62728' };
      const charts: ChartSpec[] = [{
        id: 'crud-throughput', title: 'CRUD requests/s against concurrency (dashed: baseline)', kind: 'line',
        xLabel: 'concurrency', yLabel: 'requests/s', categories: figures.map((f) => String(f.concurrency)),
        series: [
          ...ops.map((op) => ({ name: op, color: colors[op], values: figures.map((f) => f.ours[op].requestsPerSec.median) })),
          ...ops.map((op) => ({ name: `${op} baseline`, color: colors[op], dashed: true, values: figures.map((f) => f.baseline[op].requestsPerSec.median) })),
        ],
      }];
      for (const f of figures) {
        charts.push({
          id: `crud-latency-c${f.concurrency}`, title: `CRUD latency percentiles at concurrency ${f.concurrency} (ms)`, kind: 'bar',
          xLabel: 'verb', yLabel: 'ms', categories: ops,
          series: [
            { name: 'p50', color: '#9ecae1', values: ops.map((op) => f.ours[op].p50Ms.median) },
            { name: 'p90', color: '#4292c6', values: ops.map((op) => f.ours[op].p90Ms.median) },
            { name: 'p99', color: '#08519c', values: ops.map((op) => f.ours[op].p99Ms.median) },
            { name: 'baseline p50', color: '#c7e9c0', values: ops.map((op) => f.baseline[op].p50Ms.median) },
            { name: 'baseline p99', color: '#41ab5d', values: ops.map((op) => f.baseline[op].p99Ms.median) },
          ],
        });
      }

      const budget: BudgetLine[] = [];
      const at64 = figures.find((f) => f.concurrency === 64);
      if (at64) {
        const cr = at64.ours.create;
        const g = at64.ours.get;
        budget.push({ what: 'durable creates, 64 clients (kube-apiserver 1.32 + etcd: 1,400/s, p99 139 ms)', target: '≥ 5,600/s', measured: `${fmt(cr.requestsPerSec.median)}/s, p99 ${fmt(cr.p99Ms.median)} ms`, within: cr.requestsPerSec.median >= 5600 });
        budget.push({ what: 'get one object, 64 clients (kube-apiserver: 2,500/s, p99 71 ms)', target: '≥ 10,000/s', measured: `${fmt(g.requestsPerSec.median)}/s, p99 ${fmt(g.p99Ms.median)} ms`, within: g.requestsPerSec.median >= 10_000 });
      }
      return { lines, ratios, tables, charts, budget, figures: { countPerVerb: count, rounds, warmup, procs, byConcurrency: figures } };
    } finally {
      await ours?.close();
      await base?.close();
      baselineProcess.disconnect();
      await stopChild(baselineProcess);
      await server.dispose();
    }
  },
};
