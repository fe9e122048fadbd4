/**
 * apf: what priority and fairness and /metrics cost, and what fairness buys. GETs and durable
 * creates of ServiceAccounts by one ordinary user (classified into global-default, so every
 * request is queued and dispatched by APF) against three servers, rounds interleaved: APF off
 * (the max-inflight limiter: the baseline), APF on, and APF on with /metrics scraped every second;
 * `servers` of each, all started anew every round, since two server processes of one build
 * differ by as much as the effect; the ratios to APF off come with their 95% intervals.
 * Then, on APF on and off, on servers with small in-flight limits: the p99 of a well-behaved user's
 * GETs (few in flight) while another user floods the server beyond its limits (with APF, from a
 * priority level of its own).
 */
import { agentFor, call, scrapeMetricsEverySecond } from '../support.js';
import {
  LoadProcess, cpuMsOf, fmt, measureRounds, medianInterval, one, ratio, spread, startServer,
  type Op, type PhaseResult, type Ratio, type Scenario, type Spread, type Table, type TestServer,
} from '../harness.js';
import type { ChartSpec } from '../report/chart.js';
import { userFor } from '../../test/support/certs.js';

interface Variant { name: string; apf: boolean; scrape: boolean }

const variants: Variant[] = [
  { name: 'APF off (max-inflight)', apf: false, scrape: false },
  { name: 'APF on', apf: true, scrape: false },
  { name: 'APF on, /metrics every 1 s', apf: true, scrape: true },
];
const ops: Op[] = ['create', 'get'];
const ns = 'apf';

interface Running { variant: Variant; replica: number; server: TestServer; load: LoadProcess; stopScraping?: () => void }
/** a median of per-round ratios, with its 95% confidence interval where there are rounds enough */
type Paired = Spread & { interval: [number, number] | undefined };

const withInterval = (p: Paired): string => (p.interval ? `${fmt(p.median)} (95%: ${fmt(p.interval[0])}-${fmt(p.interval[1])})` : `${fmt(p.median)} ±${fmt(p.spreadPct)}%`);
type Cells = Record<Op, PhaseResult & { cpuUs: number }>;

async function stop(run: Running): Promise<void> {
  run.stopScraping?.();
  await run.load.close();
  await run.server.dispose();
}

async function start(apf: boolean, extraArgs: string[] = []): Promise<TestServer> {
  const server = await startServer({ args: ['--log-level', 'warn', ...extraArgs, ...(apf ? [] : ['--enable-priority-and-fairness=false'])] });
  const agent = agentFor(server, 1);
  const res = await call(server, agent, 'POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: ns } }));
  agent.destroy();
  if (res.status !== 201) throw new Error(`namespace: ${res.status} ${res.text}`);
  return server;
}

/** A priority level of the flooding user's own (the shares of global-default, no borrowing), and the FlowSchema that puts it there. */
async function confineFlood(server: TestServer): Promise<void> {
  const agent = agentFor(server, 1);
  const group = '/apis/flowcontrol.apiserver.orch.io/v1';
  const level = { metadata: { name: 'flood' }, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 20, borrowingLimitPercent: 0, limitResponse: { type: 'Queue', queuing: { queues: 64, handSize: 6, queueLengthLimit: 50 } } } } };
  const schema = { metadata: { name: 'flood' }, spec: { priorityLevelConfiguration: { name: 'flood' }, matchingPrecedence: 500, distinguisherMethod: { type: 'ByUser' }, rules: [{ subjects: [{ kind: 'User', user: { name: 'flood' } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }] }] } };
  for (const [path, body] of [[`${group}/prioritylevelconfigurations`, level], [`${group}/flowschemas`, schema]] as const) {
    const res = await call(server, agent, 'POST', path, JSON.stringify(body));
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${res.text}`);
  }
  agent.destroy();
  // the classifier follows the change feed: give it a moment
  await new Promise((r) => setTimeout(r, 500));
}

export const scenario: Scenario = {
  name: 'apf',
  description: 'ServiceAccount creates and GETs by an ordinary user with APF off (baseline), on, and on with /metrics scraped every second, rounds interleaved; then the p99 of a well-behaved user\'s GETs while another user floods, APF on and off.',
  defaults: { concurrency: [64], ops: [2000], rounds: [2], warmup: [1], servers: [1], flood: [128], calm: [4], calmOps: [1000] },
  smoke: { concurrency: [8], ops: [50], rounds: [1], warmup: [0], servers: [1], flood: [16], calm: [2], calmOps: [50] },
  help: {
    concurrency: 'requests in flight (throughput part)', ops: 'creates, then GETs, per round and server', rounds: 'measured rounds',
    warmup: 'unmeasured rounds first', servers: 'server processes of each variant, new every round', flood: 'the flooding user\'s requests in flight', calm: 'the well-behaved user\'s requests in flight',
    calmOps: 'the well-behaved user\'s GETs (and the objects both users GET)',
  },
  async run(ctx) {
    const c = one(ctx.sizes, 'concurrency');
    const count = one(ctx.sizes, 'ops');
    const rounds = one(ctx.sizes, 'rounds');
    const warmup = one(ctx.sizes, 'warmup');
    const replicas = one(ctx.sizes, 'servers');
    const floodConcurrency = one(ctx.sizes, 'flood');
    const calmConcurrency = one(ctx.sizes, 'calm');
    const calmOps = one(ctx.sizes, 'calmOps');
    const running: Running[] = [];
    const extra: TestServer[] = [];
    const loads: LoadProcess[] = [];
    try {
      const slots = Array.from({ length: replicas }, (_, replica) => variants.map((variant) => ({ variant, replica }))).flat();
      /** one pass of creates, then GETs of them, on one server: its cells, its server's CPU per request */
      const pass = async (run: Running, prefix: string, n: number): Promise<Cells> => {
        const cells = {} as Cells;
        const pid = run.server.process.pid as number;
        for (const op of ops) {
          // the server's CPU per request: what other processes on a shared machine disturb least
          const cpuBefore = cpuMsOf(pid);
          const phase = await run.load.run({ op, namespace: ns, prefix, from: 0, count: n, concurrency: c, expect: [] });
          cells[op] = { ...phase, cpuUs: ((cpuMsOf(pid) - cpuBefore) * 1000) / n };
        }
        return cells;
      };
      // throughput. Every round runs on new server processes, started and measured in an order that
      // rotates from round to round, each warmed by a pass of its own: one process keeps a speed of
      // its own for its life, and two of them differed by more than APF costs (README, 2026-11-27)
      const measured = await measureRounds(rounds, warmup, async (r) => {
        const round = r < 0 ? `w${-r}` : `${r}`;
        const shift = ((r % slots.length) + slots.length) % slots.length;
        for (const { variant, replica } of [...slots.slice(shift), ...slots.slice(0, shift)]) {
          const server = await start(variant.apf);
          const run: Running = { variant, replica, server, load: await LoadProcess.start(server.url, userFor(server, 'bench-user', ['bench']), 1) };
          // scraped from the start, warm-up included, as Prometheus scrapes a server that has run a while
          if (variant.scrape) run.stopScraping = scrapeMetricsEverySecond(server);
          running.push(run);
        }
        const out = new Map<string, Cells[]>();
        try {
          for (const run of running) await pass(run, `warm${round}-`, Math.ceil(count / 2));
          for (const run of running) {
            const cells = await pass(run, `r${round}-`, count);
            out.set(run.variant.name, [...out.get(run.variant.name) ?? [], cells]);
            if (r >= 0) ctx.log(`apf ${run.variant.name} #${run.replica + 1} round ${r + 1}/${rounds}: ${ops.map((op) => `${op} ${fmt(cells[op].requestsPerSec)}/s p99 ${fmt(cells[op].latencyMs.p99)} ms ${fmt(cells[op].cpuUs)} µs CPU`).join('; ')}`);
          }
        } finally {
          for (const run of running.splice(0)) await stop(run);
        }
        return out;
      });

      // every round of every server of the variant
      const cell = (v: Variant, op: Op, pick: (p: Cells[Op]) => number): Spread => spread(measured.flatMap((m) => (m.get(v.name) ?? []).map((cells) => pick(cells[op]))));
      const base = variants[0];
      /**
       * The variant against APF off round by round (each round measures every server back to
       * back), the median of those ratios and its 95% interval: the machine's drift between
       * rounds, often larger than the effect, cancels out of each ratio.
       */
      const paired = (v: Variant, op: Op, pick: (p: Cells[Op]) => number): Paired => {
        const perRound = measured.map((m) => {
          const of = (w: Variant) => spread((m.get(w.name) ?? []).map((cells) => pick(cells[op]))).median;
          return of(v) / of(base);
        });
        return { ...spread(perRound), interval: medianInterval(perRound) };
      };
      const ratios: Ratio[] = [];
      const rows: (string | number)[][] = variants.map((v) => {
        const row: (string | number)[] = [v.name];
        for (const op of ops) {
          const rps = cell(v, op, (p) => p.requestsPerSec);
          const cpu = cell(v, op, (p) => p.cpuUs);
          const rpsVsOff = paired(v, op, (p) => p.requestsPerSec);
          const cpuVsOff = paired(v, op, (p) => p.cpuUs);
          row.push(fmt(rps.median), `±${fmt(rps.spreadPct)}%`, fmt(cell(v, op, (p) => p.latencyMs.p99).median), withInterval(rpsVsOff), fmt(cpu.median), withInterval(cpuVsOff));
          if (v !== base) {
            ratios.push(ratio(`${op} c${c} requests/s, ${v.name} vs APF off (median of per-round ratios)`, rpsVsOff.median, 1, 'higher'));
            ratios.push(ratio(`${op} c${c} server CPU per request, ${v.name} vs APF off (median of per-round ratios)`, cpuVsOff.median, 1, 'lower'));
          }
        }
        return row;
      });

      // a flood beyond the server's limits (kept small, 40 + 20, so a few load processes exceed them):
      // APF confines the flooding user to a level of its own; without APF it takes every seat
      const flood: Array<{ name: string; calm: PhaseResult; flood: { requests: number; seconds: number; requestsPerSec: number; rejected: number } }> = [];
      for (const apf of [false, true]) {
        const server = await start(apf, ['--max-requests-inflight', '40', '--max-mutating-requests-inflight', '20']);
        extra.push(server);
        if (apf) await confineFlood(server);
        const admin = await LoadProcess.start(server.url, server.admin, 1);
        loads.push(admin);
        await admin.fill(ns, 'sa', 0, calmOps, 16);
        const calmLoad = await LoadProcess.start(server.url, userFor(server, 'calm', ['bench']), 1);
        const floodLoad = await LoadProcess.start(server.url, userFor(server, 'flood', ['bench']), 2);
        loads.push(calmLoad, floodLoad);
        // the flood GETs the same objects over and over until the well-behaved user is done
        let calmDone = false;
        const flooding = (async () => {
          const phases: PhaseResult[] = [];
          while (!calmDone) phases.push(await floodLoad.run({ op: 'get', namespace: ns, prefix: 'sa', from: 0, count: calmOps, concurrency: floodConcurrency, expect: [200], tolerateErrors: true }));
          return phases;
        })();
        await new Promise((r) => setTimeout(r, 1000));
        const calm = await calmLoad.run({ op: 'get', namespace: ns, prefix: 'sa', from: 0, count: calmOps, concurrency: calmConcurrency, expect: [200], tolerateErrors: true });
        calmDone = true;
        const phases = await flooding;
        const floodCount = phases.reduce((a, p) => a + p.count, 0);
        const floodSeconds = phases.reduce((a, p) => a + p.seconds, 0);
        const flooded = { requests: floodCount, seconds: floodSeconds, requestsPerSec: floodCount / floodSeconds, rejected: phases.reduce((a, p) => a + p.errors, 0) };
        const name = apf ? 'APF on' : 'APF off (max-inflight)';
        flood.push({ name, calm, flood: flooded });
        ctx.log(`apf flood, ${name}: well-behaved GETs p50 ${fmt(calm.latencyMs.p50)} ms p99 ${fmt(calm.latencyMs.p99)} ms, ${calm.errors} of ${calm.count} refused, over ${fmt(calm.seconds)} s; flood ${fmt(flooded.requestsPerSec)}/s, ${flooded.rejected} of ${flooded.requests} refused, over ${fmt(flooded.seconds)} s`);
      }
      const [off, on] = flood;
      ratios.push(ratio(`well-behaved user's GET p99 while another floods (c${floodConcurrency}): APF on vs off`, on.calm.latencyMs.p99, off.calm.latencyMs.p99, 'lower'));
      const tables: Table[] = [
        {
          title: `ServiceAccount creates then GETs by one ordinary user (global-default level) at concurrency ${c}: median of ${rounds} rounds of ${count} each on each of ${replicas} server(s) per variant, new processes every round, after ${warmup} warm-up round(s); "vs off": the median over rounds of each round's ratio to APF off, with its 95% confidence interval (± the spread below 6 rounds)`,
          columns: ['server', 'creates/s', 'spread', 'create p99 ms', 'creates vs off (per round)', 'server µs/create', 'CPU vs off (per round)', 'GETs/s', 'spread', 'GET p99 ms', 'GETs vs off (per round)', 'server µs/GET', 'CPU vs off (per round)'],
          rows,
        },
        {
          title: `Servers limited to 40 + 20 requests in flight: a well-behaved user's ${calmOps} GETs at concurrency ${calmConcurrency} (global-default), started 1 s into another user's flood of GETs at concurrency ${floodConcurrency} (with APF: its own level, the shares of global-default), which lasts until they are done; a refused request is a 429`,
          columns: ['server', 'well-behaved p50 ms', 'well-behaved p99 ms', 'well-behaved refused', 'flood req/s', 'flood refused'],
          rows: flood.map((f) => [f.name, fmt(f.calm.latencyMs.p50), fmt(f.calm.latencyMs.p99), `${f.calm.errors} of ${f.calm.count}`, fmt(f.flood.requestsPerSec), `${f.flood.rejected} of ${f.flood.requests}`]),
        },
      ];
      const charts: ChartSpec[] = [{
        id: 'apf-throughput', title: `Requests/s by APF and /metrics scraping, concurrency ${c}`, kind: 'bar', xLabel: 'server', yLabel: 'requests/s',
        categories: variants.map((v) => v.name),
        series: [
          { name: 'creates/s', color: '#1f77b4', values: variants.map((v) => cell(v, 'create', (p) => p.requestsPerSec).median) },
          { name: 'GETs/s', color: '#2ca02c', values: variants.map((v) => cell(v, 'get', (p) => p.requestsPerSec).median) },
        ],
      }];
      const scraped = variants[2];
      const scrapedCreates = paired(scraped, 'create', (p) => p.requestsPerSec);
      const scrapedGets = paired(scraped, 'get', (p) => p.requestsPerSec);
      const budget = [{
        what: 'GETs and creates with APF on and /metrics scraped every second: under 5% cost',
        target: '≥ 0.95 of APF off (median of per-round ratios)',
        measured: `creates ${withInterval(scrapedCreates)}, GETs ${withInterval(scrapedGets)}`,
        within: scrapedCreates.median >= 0.95 && scrapedGets.median >= 0.95,
      }];
      const lines = rows.map((r) => `apf ${r[0]}: creates ${r[1]}/s (p99 ${r[3]} ms), GETs ${r[7]}/s (p99 ${r[9]} ms)`);
      return { lines, ratios, tables, charts, budget, figures: { concurrency: c, count, rounds, warmup, measured: Object.fromEntries(variants.map((v) => [v.name, ops.map((op) => cell(v, op, (p) => p.requestsPerSec))])), flood } };
    } finally {
      for (const run of running) await stop(run);
      for (const load of loads) await load.close();
      for (const server of extra) await server.dispose();
    }
  },
};
