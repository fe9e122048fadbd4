/**
 * bench/chain-cost: what the request pipeline costs. This build and a build from before the
 * pipeline (main 6313749: authentication and authorization as two calls in the front door),
 * both with their default flags (AlwaysAllow, no audit policy), answer the same ServiceAccount
 * create, get, update and delete at 64 in flight from separate load processes, in interleaved
 * slices (A B B A …) within each round, so that drift on a shared machine hits both alike; the
 * figures are the medians of the rounds' paired after/before ratios, each with the 95% confidence
 * interval of that median (`ratio95`, the sign test's: with 30 rounds, the 10th and 21st ratio).
 * Each round runs on new server processes (`--restart`), warmed first, as one process kept a
 * speed of its own for its life.
 * `--after-flags '<flags>'` starts this build with extra flags (`--enable-priority-and-fairness=false`
 * shows what the chain costs without flow control, whose own cost bench/apf measures; with
 * `--before` this checkout, what flow control costs). `--as-user 1` sends the requests as an
 * ordinary user (APF's global-default level, queued) rather than system:masters (exempt).
 * `--together 1` runs both sides' slices at the same time instead of A B B A: whatever slows the
 * shared machine at a moment slows both, and each side's figure is its own server's CPU time and
 * throughput while the other runs beside it. In both modes the sides' order alternates from slice
 * to slice, and which side's server starts first from round to round: an A/A run (this build on
 * both sides) in together mode with 'before' always first measured 'after' 6.6% faster per GET;
 * with both orders alternated, about ±4% is left, the method's floor. `--scrape before|after` scrapes that side's /metrics
 * once a second for the whole run (with `--before` this checkout and `--after-flags
 * '--enable-priority-and-fairness=false'`: what APF and a Prometheus scraping it cost together).
 * `--warm <n>` sets the requests per op of that unmeasured warm-up (default: `--ops`); a few
 * thousand measure a warmed server's steady state rather than its first minute of JIT compiling.
 * Usage: node dist/bench/chain-cost.js --before <checkout of 6313749, built> [--ops 3000] [--warm 3000] [--rounds 5] [--slices 4] [--restart 1] [--concurrency 64] [--as-user 1] [--together 1] [--after-flags '...'] [--scrape before|after]
 */
import { LoadProcess, cpuMsOf, measureRounds, medianInterval, spread, type Op } from './harness.js';
import { agentFor, builtServerScript, call, flag, scrapeMetricsEverySecond, startServer, type TestServer } from './support.js';
import { userFor } from '../test/support/certs.js';

const ops: Op[] = ['create', 'get', 'update', 'delete'];
const count = flag('ops', 3000);
const rounds = flag('rounds', 5);
const concurrency = flag('concurrency', 64);
const slices = flag('slices', 4);
/** new server processes every this many rounds (0: the same two for the whole run) */
const restartEvery = flag('restart', 1);
/** requests per op in the unmeasured pass that warms each new pair of servers (JIT, caches, heap) */
const warmCount = flag('warm', count);

function beforeScript(): string {
  const at = process.argv.indexOf('--before');
  const dir = at >= 0 ? process.argv[at + 1] : process.env.ORCH_BENCH_BEFORE;
  if (!dir) throw new Error('--before <dir>: a checkout of the pre-pipeline commit (6313749) with `npm ci && npm run build` done');
  return builtServerScript(dir);
}

/** `--as-user 1`: the requests come from an ordinary user instead of system:masters */
const asUser = flag('as-user', 0) === 1;
/** `--together 1`: both sides' slices run at the same time (paired in time) instead of one after the other */
const together = flag('together', 0) === 1;

function afterFlags(): string[] {
  const at = process.argv.indexOf('--after-flags');
  return at >= 0 ? (process.argv[at + 1] ?? '').split(/\s+/).filter(Boolean) : [];
}

type Side = 'before' | 'after';

/** `--scrape before|after`: the side whose /metrics is scraped every second */
function scrapedSide(): Side | undefined {
  const at = process.argv.indexOf('--scrape');
  if (at < 0) return undefined;
  const side = process.argv[at + 1];
  if (side !== 'before' && side !== 'after') throw new Error(`--scrape before|after, got ${side}`);
  return side;
}
const scraped = scrapedSide();

interface Prepared { server: TestServer; load: LoadProcess; stopScraping?: () => void }

async function prepared(script: string | undefined, flags: string[], scrape: boolean): Promise<Prepared> {
  const server = await startServer({ ...(script ? { script } : {}), args: ['--log-level', 'warn', ...flags] });
  const agent = agentFor(server, 1);
  const ns = await call(server, agent, 'POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: 'crud' } }));
  agent.destroy();
  if (ns.status !== 201) throw new Error(`namespace: ${ns.status} ${ns.text}`);
  // system:masters is exempt from priority and fairness; an ordinary user is queued by its global-default level
  const load = await LoadProcess.start(server.url, asUser ? userFor(server, 'bench-user', ['bench']) : server.admin, 2);
  return { server, load, ...(scrape ? { stopScraping: scrapeMetricsEverySecond(server) } : {}) };
}

interface Measured { requestsPerSec: number; cpuUsPerRequest: number }

/**
 * One op on both sides in `slices` slices, in the order A B B A A B B A …: drift on a shared
 * machine (seconds long, up to 2x) then falls on both sides alike within the round, and the
 * round's after/before ratio is paired. Each slice works on its own range of the round's names.
 */
async function measureOp(op: Op, prefix: string, n = count): Promise<Record<Side, Measured>> {
  const totals = { before: { seconds: 0, cpuMs: 0 }, after: { seconds: 0, cpuMs: 0 } };
  const per = Math.ceil(n / slices);
  const slice = async (side: Side, k: number): Promise<void> => {
    const pid = sides[side].server.process.pid as number;
    // the server's CPU time per request: what load from other processes disturbs least
    const cpuBefore = cpuMsOf(pid);
    const phase = await sides[side].load.run({ op, namespace: 'crud', prefix, from: k * per, count: per, concurrency, expect: [] });
    totals[side].cpuMs += cpuMsOf(pid) - cpuBefore;
    totals[side].seconds += phase.seconds;
  };
  for (let k = 0; k < slices; k++) {
    const pair: Side[] = k % 2 === 0 ? ['before', 'after'] : ['after', 'before'];
    if (together) {
      // both sides at once: whatever slows the machine at that moment slows both
      await Promise.all(pair.map((side) => slice(side, k)));
      continue;
    }
    for (const side of pair) await slice(side, k);
  }
  const done = per * slices;
  const of = (side: Side): Measured => ({ requestsPerSec: Math.round(done / totals[side].seconds), cpuUsPerRequest: (totals[side].cpuMs * 1000) / done });
  return { before: of('before'), after: of('after') };
}

let startsSoFar = 0;

/** Both sides' servers and load processes; which side starts first alternates from one start to the next. */
async function startSides(): Promise<Record<Side, Prepared>> {
  const start = (side: Side) => side === 'before' ? prepared(beforeScript(), [], scraped === 'before') : prepared(undefined, afterFlags(), scraped === 'after');
  const [first, second]: Side[] = startsSoFar++ % 2 === 0 ? ['before', 'after'] : ['after', 'before'];
  const started = { [first]: await start(first) } as Partial<Record<Side, Prepared>>;
  started[second] = await start(second);
  return started as Record<Side, Prepared>;
}

async function stopSides(): Promise<void> {
  for (const side of Object.values(sides)) {
    side.stopScraping?.();
    await side.load.close();
    await side.server.dispose();
  }
}

/** One unmeasured pass of every op on both new servers. */
async function warmSides(tag: string): Promise<void> {
  for (const op of ops) await measureOp(op, `w${tag}`, warmCount);
}

let sides = await startSides();
try {
  await warmSides('0');
  const measured = await measureRounds(rounds, 0, async (r) => {
    if (restartEvery > 0 && r > 0 && r % restartEvery === 0) {
      // a server process keeps its own speed for life (one of two identical builds measured 14%
      // slower in every round of an A/A run): new processes, warmed by one unmeasured pass
      await stopSides();
      sides = await startSides();
      await warmSides(String(r));
    }
    const out = { before: {}, after: {} } as Record<Side, Record<Op, Measured>>;
    for (const op of ops) {
      const m = await measureOp(op, `r${r}`);
      out.before[op] = m.before;
      out.after[op] = m.after;
    }
    process.stderr.write(`chain-cost round ${r + 1}: ${ops.map((op) => `${op} ${out.after[op].requestsPerSec}/s ${Math.round(out.after[op].cpuUsPerRequest)} µs vs ${out.before[op].requestsPerSec}/s ${Math.round(out.before[op].cpuUsPerRequest)} µs`).join(', ')}\n`);
    return out;
  });
  const byOp = Object.fromEntries(ops.map((op) => {
    const before = spread(measured.map((m) => m.before[op].requestsPerSec));
    const after = spread(measured.map((m) => m.after[op].requestsPerSec));
    const cpuBefore = spread(measured.map((m) => m.before[op].cpuUsPerRequest));
    const cpuAfter = spread(measured.map((m) => m.after[op].cpuUsPerRequest));
    // the median of each round's own ratio (rounds on a fast and a slow machine both count as
    // ratios), and the 95% confidence interval of that median
    const paired = (f: (m: Measured) => number) => {
      const ratios = measured.map((m) => f(m.after[op]) / f(m.before[op]));
      return { ratio: +spread(ratios).median.toFixed(3), ratio95: medianInterval(ratios) };
    };
    return [op, {
      requestsPerSec: { before, after, ...paired((m) => m.requestsPerSec) },
      serverCpuUsPerRequest: { before: cpuBefore, after: cpuAfter, ...paired((m) => m.cpuUsPerRequest) },
    }];
  }));
  console.log(JSON.stringify({ ops: count, warm: warmCount, rounds, slices, restartEvery, concurrency, asUser, together, afterFlags: afterFlags(), byOp }));
} finally {
  await stopSides();
}
