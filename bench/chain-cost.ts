/**
 * bench/chain-cost: what the request pipeline costs. This build and a build from before the
 * pipeline (main 6313749: authentication and authorization as two calls in the front door),
 * both with their default flags (AlwaysAllow, no audit policy), answer the same ServiceAccount
 * create, get, update and delete at 64 in flight from separate load processes, in interleaved
 * rounds so that drift on a shared machine hits both alike.
 * `--after-flags '<flags>'` starts this build with extra flags (`--enable-priority-and-fairness=false`
 * shows what the chain costs without flow control, whose own cost bench/apf measures).
 * Usage: node dist/bench/chain-cost.js --before <checkout of 6313749, built> [--ops 3000] [--rounds 5] [--concurrency 64] [--after-flags '...']
 */
import { LoadProcess, cpuMsOf, measureRounds, spread, type Op, type PhaseResult } from './harness.js';
import { agentFor, builtServerScript, call, flag, startServer, type TestServer } from './support.js';

const ops: Op[] = ['create', 'get', 'update', 'delete'];
const count = flag('ops', 3000);
const rounds = flag('rounds', 5);
const concurrency = flag('concurrency', 64);

function beforeScript(): string {
  const at = process.argv.indexOf('--before');
  const dir = at >= 0 ? process.argv[at + 1] : process.env.ORCH_BENCH_BEFORE;
  if (!dir) throw new Error('--before <dir>: a checkout of the pre-pipeline commit (6313749) with `npm ci && npm run build` done');
  return builtServerScript(dir);
}

function afterFlags(): string[] {
  const at = process.argv.indexOf('--after-flags');
  return at >= 0 ? (process.argv[at + 1] ?? '').split(/\s+/).filter(Boolean) : [];
}

async function prepared(script: string | undefined, flags: string[]): Promise<{ server: TestServer; load: LoadProcess }> {
  const server = await startServer({ ...(script ? { script } : {}), args: ['--log-level', 'warn', ...flags] });
  const agent = agentFor(server, 1);
  const ns = await call(server, agent, 'POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: 'crud' } }));
  agent.destroy();
  if (ns.status !== 201) throw new Error(`namespace: ${ns.status} ${ns.text}`);
  return { server, load: await LoadProcess.start(server.url, server.admin, 2) };
}

const sides = { before: await prepared(beforeScript(), []), after: await prepared(undefined, afterFlags()) };
try {
  const measured = await measureRounds(rounds, 1, async (r, warm) => {
    const out = {} as Record<'before' | 'after', Record<Op, PhaseResult & { cpuUsPerRequest: number }>>;
    // alternate which side goes first, so neither always runs on a warmer machine
    const order = r % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const);
    for (const side of order) {
      out[side] = {} as Record<Op, PhaseResult & { cpuUsPerRequest: number }>;
      const pid = sides[side].server.process.pid as number;
      for (const op of ops) {
        // the server's CPU time per request: what load from other processes disturbs least
        const cpuBefore = cpuMsOf(pid);
        const phase = await sides[side].load.run({ op, namespace: 'crud', prefix: `${warm ? 'w' : 'r'}${r}`, from: 0, count, concurrency, expect: [] });
        out[side][op] = { ...phase, cpuUsPerRequest: ((cpuMsOf(pid) - cpuBefore) * 1000) / count };
      }
    }
    process.stderr.write(`chain-cost round ${r + 1}: ${ops.map((op) => `${op} ${out.after[op].requestsPerSec}/s ${Math.round(out.after[op].cpuUsPerRequest)} µs vs ${out.before[op].requestsPerSec}/s ${Math.round(out.before[op].cpuUsPerRequest)} µs`).join(', ')}\n`);
    return out;
  });
  const byOp = Object.fromEntries(ops.map((op) => {
    const before = spread(measured.map((m) => m.before[op].requestsPerSec));
    const after = spread(measured.map((m) => m.after[op].requestsPerSec));
    const cpuBefore = spread(measured.map((m) => m.before[op].cpuUsPerRequest));
    const cpuAfter = spread(measured.map((m) => m.after[op].cpuUsPerRequest));
    return [op, {
      requestsPerSec: { before, after, ratio: +(after.median / before.median).toFixed(3) },
      serverCpuUsPerRequest: { before: cpuBefore, after: cpuAfter, ratio: +(cpuAfter.median / cpuBefore.median).toFixed(3) },
    }];
  }));
  console.log(JSON.stringify({ ops: count, rounds, concurrency, afterFlags: afterFlags(), byOp }));
} finally {
  for (const side of Object.values(sides)) {
    await side.load.close();
    await side.server.dispose();
  }
}
