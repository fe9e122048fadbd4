/**
 * audit: what auditing costs. Durable creates/s and GET requests/s of ServiceAccounts at one
 * concurrency from a separate load process, against servers auditing to a log file at Metadata
 * and at RequestResponse level, in batch and in blocking mode; baseline, in the same run with
 * rounds interleaved: the same server with no audit policy. Also the server's CPU per request
 * (from /proc), which shows the cost where throughput is bound elsewhere (the durable commit),
 * and, measured in this process (bench/audit-cost.ts), the CPU auditing adds to one request: the
 * figure that holds on a busy machine, where requests/s do not.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentFor, call } from '../support.js';
import {
  LoadProcess, cpuMsOf, dirBytes, fmt, measureRounds, one, ratio, spread, startServer,
  type Op, type Ratio, type Scenario, type Spread, type Table, type TestServer,
} from '../harness.js';
import type { ChartSpec } from '../report/chart.js';
import { tempDir } from '../../test/support/audit.js';
import { auditCpuPerRequest } from '../audit-cost.js';

interface Variant { name: string; level?: 'Metadata' | 'RequestResponse'; mode?: 'batch' | 'blocking' }

const variants: Variant[] = [
  { name: 'no audit' },
  { name: 'Metadata, batch', level: 'Metadata', mode: 'batch' },
  { name: 'Metadata, blocking', level: 'Metadata', mode: 'blocking' },
  { name: 'RequestResponse, batch', level: 'RequestResponse', mode: 'batch' },
  { name: 'RequestResponse, blocking', level: 'RequestResponse', mode: 'blocking' },
];
const ops: Op[] = ['create', 'get'];

interface Running { variant: Variant; server: TestServer; load: LoadProcess; dir: string }
interface Cell { requestsPerSec: Spread; p50Ms: Spread; p99Ms: Spread; serverCpuUsPerRequest: Spread }

function policy(level: string): string {
  return `apiVersion: audit.orch.io/v1\nkind: Policy\nrules:\n- level: None\n  nonResourceURLs: [/readyz*, /livez*, /healthz*]\n- level: ${level}\n`;
}

async function start(v: Variant): Promise<Running> {
  const dir = tempDir('bench-audit-');
  const args = ['--log-level', 'warn'];
  if (v.level && v.mode) {
    const policyPath = join(dir, 'policy.yaml');
    writeFileSync(policyPath, policy(v.level));
    args.push('--audit-policy-file', policyPath, '--audit-log-path', join(dir, 'audit', 'audit.log'), '--audit-log-mode', v.mode,
      '--audit-log-maxsize', '1024');
  }
  const server = await startServer({ args });
  const agent = agentFor(server, 1);
  const ns = await call(server, agent, 'POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: 'audit' } }));
  agent.destroy();
  if (ns.status !== 201) throw new Error(`namespace: ${ns.status} ${ns.text}`);
  return { variant: v, server, dir, load: await LoadProcess.start(server.url, server.admin, 1) };
}

export const scenario: Scenario = {
  name: 'audit',
  description: 'ServiceAccount creates and GETs at one concurrency with auditing to a log file at Metadata and RequestResponse level, in batch and blocking mode; baseline: the same server without an audit policy, rounds interleaved.',
  defaults: { concurrency: [64], ops: [3000], rounds: [3], warmup: [1], cost: [20000] },
  smoke: { concurrency: [8], ops: [60], rounds: [1], warmup: [0], cost: [500] },
  help: {
    concurrency: 'requests in flight', ops: 'creates, then GETs, per round and server', rounds: 'measured rounds', warmup: 'unmeasured rounds first',
    cost: 'requests whose auditing CPU is measured in-process, per level, mode and verb',
  },
  async run(ctx) {
    const c = one(ctx.sizes, 'concurrency');
    const count = one(ctx.sizes, 'ops');
    const rounds = one(ctx.sizes, 'rounds');
    const warmup = one(ctx.sizes, 'warmup');
    const costRequests = one(ctx.sizes, 'cost');
    const running: Running[] = [];
    try {
      for (const v of variants) running.push(await start(v));
      const measured = await measureRounds(rounds, warmup, async (r) => {
        const prefix = `r${r < 0 ? `w${-r}` : r}`;
        const out = new Map<string, Record<Op, { rps: number; p50: number; p99: number; cpuUs: number }>>();
        // interleaved, and each round in another order, so drift on a noisy machine hits every variant alike
        const shift = ((r % running.length) + running.length) % running.length;
        for (const run of [...running.slice(shift), ...running.slice(0, shift)]) {
          const cells = {} as Record<Op, { rps: number; p50: number; p99: number; cpuUs: number }>;
          for (const op of ops) {
            const cpuBefore = cpuMsOf(run.server.process.pid as number);
            const res = await run.load.run({ op, namespace: 'audit', prefix, from: 0, count, concurrency: c, expect: [] });
            const cpuUs = ((cpuMsOf(run.server.process.pid as number) - cpuBefore) * 1000) / count;
            cells[op] = { rps: res.requestsPerSec, p50: res.latencyMs.p50, p99: res.latencyMs.p99, cpuUs };
          }
          out.set(run.variant.name, cells);
          if (r >= 0) ctx.log(`audit ${run.variant.name} round ${r + 1}/${rounds}: ${ops.map((op) => `${op} ${fmt(cells[op].rps)}/s p99 ${fmt(cells[op].p99)} ms, ${fmt(cells[op].cpuUs)} µs CPU`).join('; ')}`);
        }
        return out;
      });

      const logBytes = (v: Variant) => {
        const dir = join(running.find((x) => x.variant === v)!.dir, 'audit');
        return existsSync(dir) ? dirBytes(dir) : 0;
      };
      const figures = variants.map((v) => ({
        variant: v.name,
        auditLogBytes: logBytes(v),
        ...Object.fromEntries(ops.map((op) => {
          const cells = measured.map((m) => m.get(v.name)![op]);
          const cell: Cell = {
            requestsPerSec: spread(cells.map((x) => x.rps)), p50Ms: spread(cells.map((x) => x.p50)),
            p99Ms: spread(cells.map((x) => x.p99)), serverCpuUsPerRequest: spread(cells.map((x) => x.cpuUs)),
          };
          return [op, cell];
        })) as Record<Op, Cell>,
      }));
      const base = figures[0];
      const ratios: Ratio[] = [];
      const rows: (string | number)[][] = [];
      const lines: string[] = [];
      for (const f of figures) {
        const row: (string | number)[] = [f.variant];
        for (const op of ops) {
          const o = f[op];
          const b = base[op];
          row.push(fmt(o.requestsPerSec.median), fmt(o.p99Ms.median), fmt(o.serverCpuUsPerRequest.median));
          if (f !== base) {
            ratios.push(ratio(`${op} c${c} requests/s, ${f.variant} vs no audit`, o.requestsPerSec.median, b.requestsPerSec.median, 'higher'));
            row.push(fmt(o.requestsPerSec.median / b.requestsPerSec.median));
          } else {
            row.push('1');
          }
        }
        rows.push(row);
        lines.push(`audit ${f.variant}: ${ops.map((op) => `${op} ${fmt(f[op].requestsPerSec.median)}/s (p99 ${fmt(f[op].p99Ms.median)} ms, server CPU ${fmt(f[op].serverCpuUsPerRequest.median)} µs/request)`).join('; ')}`);
      }
      const tables: Table[] = [{
        title: `ServiceAccount creates then GETs at concurrency ${c}: median of ${rounds} rounds of ${count} each, after ${warmup} warm-up round(s); audit log to a file, events of RequestReceived and ResponseComplete`,
        columns: ['audit', 'creates/s', 'create p99 ms', 'server CPU µs/create', 'creates vs none', 'GETs/s', 'GET p99 ms', 'server CPU µs/GET', 'GETs vs none'],
        rows: rows.map((r) => [r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8]]),
      }];
      const charts: ChartSpec[] = [{
        id: 'audit-throughput', title: `Requests/s with auditing, concurrency ${c}`, kind: 'bar', xLabel: 'audit', yLabel: 'requests/s',
        categories: figures.map((f) => f.variant),
        series: [
          { name: 'creates/s', color: '#1f77b4', values: figures.map((f) => f.create.requestsPerSec.median) },
          { name: 'GETs/s', color: '#2ca02c', values: figures.map((f) => f.get.requestsPerSec.median) },
        ],
      }];
      for (const r of running.splice(0)) {
        await r.load.close();
        await r.server.dispose();
        rmSync(r.dir, { recursive: true, force: true });
      }
      const costDir = tempDir('bench-audit-cost-');
      const cost: { variant: string; create: number; get: number }[] = [];
      try {
        for (const v of variants.slice(1)) {
          const cell = { variant: v.name, create: 0, get: 0 };
          for (const op of ['create', 'get'] as const) {
            await auditCpuPerRequest(costDir, v.level!, v.mode!, op, Math.ceil(costRequests / 10)); // warm-up
            cell[op] = await auditCpuPerRequest(costDir, v.level!, v.mode!, op, costRequests);
          }
          cost.push(cell);
          lines.push(`audit CPU per request, ${v.name}: create ${fmt(cell.create)} µs, GET ${fmt(cell.get)} µs`);
        }
      } finally {
        rmSync(costDir, { recursive: true, force: true });
      }
      tables.push({
        title: `CPU auditing adds to one request (policy, record, both stages' events, JSON, the log write), measured in-process over ${costRequests} requests; for scale, the server's own CPU per request without audit is in the table above`,
        columns: ['audit', 'µs per create', 'µs per GET'],
        rows: cost.map((c) => [c.variant, fmt(c.create), fmt(c.get)]),
      });
      const metaBatch = figures[1];
      const budget = [{
        what: 'creates and GETs with audit (Metadata, batch) on: within 10% of no audit',
        target: '≥ 0.9 of no audit',
        measured: `creates ${fmt(metaBatch.create.requestsPerSec.median / base.create.requestsPerSec.median)}, GETs ${fmt(metaBatch.get.requestsPerSec.median / base.get.requestsPerSec.median)}`,
        within: metaBatch.create.requestsPerSec.median >= 0.9 * base.create.requestsPerSec.median && metaBatch.get.requestsPerSec.median >= 0.9 * base.get.requestsPerSec.median,
      }];
      return { lines, ratios, tables, charts, budget, figures: { concurrency: c, count, rounds, warmup, variants: figures, cpuPerRequestUs: cost } };
    } finally {
      for (const r of running) {
        await r.load.close();
        await r.server.dispose();
        rmSync(r.dir, { recursive: true, force: true });
      }
    }
  },
};
