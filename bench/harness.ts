/**
 * The harness every scenario runs in. A scenario is a module exporting `scenario: Scenario`; the
 * runner (bench/run.ts) gives it sizes from flags (or its defaults, or its smoke sizes), a log, and
 * collects a ScenarioResult: figures, the ratios to the baseline it measured in the same run,
 * tables and charts for the report.
 *
 * What the harness offers scenarios:
 * - `startServer` (from test/support) on a temp data dir and a free port, always its own process;
 * - `LoadProcess`: HTTP load from a separate Node process (bench/load-client.ts), so the client
 *   never shares an event loop with a server it measures;
 * - `measureRounds`: warm-up rounds, then measured rounds, reduced to median and spread;
 * - statistics (`percentiles`, `spread`), process CPU and RSS from /proc, machine facts.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { cpus, platform, release, totalmem, arch, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Credentials } from '../test/support/server.js';
import type { ChartSpec } from './report/chart.js';

export { startServer, type TestServer } from './support.js';

// ---------------------------------------------------------------------------------------------
// scenario contract

export type Sizes = Record<string, number[]>;

export interface ScenarioContext {
  /** sizes after flags: every size flag is a list (`--concurrency 1,16,64`) */
  sizes: Sizes;
  /** true under `bench:smoke`: tiny sizes, figures printed, nothing asserted */
  smoke: boolean;
  log(line: string): void;
}

export interface Ratio {
  /** what is compared, e.g. "get c64 requests/s" */
  name: string;
  ours: number;
  baseline: number;
  /** ours / baseline */
  value: number;
  /** "higher" when a bigger figure is better (throughput), "lower" for latency, memory, time; unknown for plain scripts */
  better?: 'higher' | 'lower';
}

export interface Table { title: string; columns: string[]; rows: (string | number)[][] }

/** A DESIGN.md performance-budget line, shown next to the figure; informational, never asserted. */
export interface BudgetLine { what: string; target: string; measured: string; within: boolean | null }

export interface ScenarioResult {
  scenario: string;
  description: string;
  sizes: Sizes;
  /** for plain scripts: the arguments they ran with */
  argv?: string[];
  seconds: number;
  /** human summary, one line each */
  lines: string[];
  ratios: Ratio[];
  tables: Table[];
  charts: ChartSpec[];
  budget: BudgetLine[];
  /** every measured figure, scenario-specific */
  figures: unknown;
}

export interface Scenario {
  name: string;
  description: string;
  /** the sizes `npm run bench` uses (DESIGN.md's budget) */
  defaults: Sizes;
  /** the sizes `npm run bench:smoke` uses: seconds, not minutes */
  smoke: Sizes;
  /** what each size flag means, for --help */
  help: Record<string, string>;
  run(ctx: ScenarioContext): Promise<Omit<ScenarioResult, 'scenario' | 'description' | 'sizes' | 'seconds'>>;
}

export function one(sizes: Sizes, name: string): number {
  const v = sizes[name];
  if (!v || v.length === 0 || !Number.isFinite(v[0])) throw new Error(`size --${name} is missing`);
  return v[0];
}

export function ratio(name: string, ours: number, baseline: number, better: 'higher' | 'lower'): Ratio {
  return { name, ours, baseline, value: round(baseline === 0 ? NaN : ours / baseline, 3), better };
}

export function formatRatio(r: Ratio): string {
  return `${r.name}: ours ${fmt(r.ours)} / baseline ${fmt(r.baseline)} = ${fmt(r.value)}`;
}

// ---------------------------------------------------------------------------------------------
// statistics

export interface Percentiles { count: number; mean: number; min: number; p50: number; p90: number; p99: number; max: number }

/** Percentiles by nearest rank over the samples (any unit). */
export function percentiles(samples: ArrayLike<number>): Percentiles {
  const n = samples.length;
  if (n === 0) return { count: 0, mean: NaN, min: NaN, p50: NaN, p90: NaN, p99: NaN, max: NaN };
  const s = Float64Array.from(samples).sort();
  let sum = 0;
  for (let i = 0; i < n; i++) sum += s[i];
  const at = (q: number) => s[Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1))];
  return { count: n, mean: sum / n, min: s[0], p50: at(0.5), p90: at(0.9), p99: at(0.99), max: s[n - 1] };
}

/** Median of the rounds and how far they spread: min, max, and (max-min)/median in percent. */
export interface Spread { median: number; min: number; max: number; spreadPct: number; rounds: number[] }

export function spread(values: number[]): Spread {
  const s = [...values].sort((a, b) => a - b);
  const n = s.length;
  const median = n === 0 ? NaN : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  return {
    median: round(median, 3), min: round(s[0], 3), max: round(s[n - 1], 3),
    spreadPct: round(median ? ((s[n - 1] - s[0]) / median) * 100 : NaN, 1), rounds: values.map((v) => round(v, 3)),
  };
}

/**
 * A 95% confidence interval for the median of `values`, free of any assumption on their
 * distribution (the sign test's): the j-th smallest and the j-th largest value, where j is the
 * largest count with P(X < j) ≤ 2.5% for X ~ Binomial(n, 1/2). Per-round ratios on a shared
 * machine are skewed by bursts, so a mean ± deviation would mislead. Undefined below 6 values,
 * where no such j exists.
 */
export function medianInterval(values: readonly number[]): [low: number, high: number] | undefined {
  const s = [...values].sort((a, b) => a - b);
  const n = s.length;
  let below = 0; // P(X < j) for X ~ Binomial(n, 1/2)
  let term = 0.5 ** n; // P(X = j)
  let j = 0;
  while (below + term <= 0.025) {
    below += term;
    term *= (n - j) / (j + 1);
    j++;
  }
  return j === 0 ? undefined : [round(s[j - 1], 3), round(s[n - j], 3)];
}

export function round(v: number, digits = 2): number {
  if (!Number.isFinite(v)) return v;
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

/** Compact number: 12,345 / 123 / 12.3 / 1.23 / 0.123. */
export function fmt(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1000) return Math.round(v).toLocaleString('en-US');
  if (a >= 100) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1);
  if (a >= 1) return v.toFixed(2);
  return v.toFixed(3);
}

/** Runs `warmup` unmeasured rounds, then `rounds` measured ones, each returning its figures. */
export async function measureRounds<T>(rounds: number, warmup: number, fn: (round: number, warm: boolean) => Promise<T>): Promise<T[]> {
  for (let i = 0; i < warmup; i++) await fn(-1 - i, true);
  const out: T[] = [];
  for (let i = 0; i < rounds; i++) out.push(await fn(i, false));
  return out;
}

// ---------------------------------------------------------------------------------------------
// processes

/**
 * CPU time of a process's threads in milliseconds: the scheduler's runtime of each thread in
 * nanoseconds (/proc/<pid>/task/<tid>/schedstat), so a phase of 200 ms of CPU is not read in
 * 10 ms clock ticks (±5%); utime + stime from /proc/<pid>/stat where the kernel has no schedstat.
 * A thread that exited no longer counts: the servers' threads live as long as they do.
 */
export function cpuMsOf(pid: number): number {
  if (existsSync(`/proc/${pid}/schedstat`)) {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      } catch { /* the thread exited meanwhile */ }
    }
    return ns / 1e6;
  }
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Resident set size now and its peak (VmHWM), in MiB. */
export function memoryOf(pid: number): { rssMiB: number; peakMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
  return { rssMiB: round(kb('VmRSS') / 1024, 1), peakMiB: round(kb('VmHWM') / 1024, 1) };
}

/** Bytes under a directory (the store files). */
export function dirBytes(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    total += st.isDirectory() ? dirBytes(p) : st.size;
  }
  return total;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

/** Forks a Node process running one of the bench/ modules; messages use structured clone. */
export function forkModule(file: string, args: string[] = []): ChildProcess {
  return fork(here(file), args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced' });
}

/** The next message of `type` from a child (or its exit, as an error). */
export function nextMessage<T>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: { t?: string; error?: string }) => {
      if (m?.t === 'error') { cleanup(); reject(new Error(m.error)); return; }
      if (m?.t === type) { cleanup(); resolve(m as T); }
    };
    const onExit = (code: number | null) => { cleanup(); reject(new Error(`load process exited (${code}) before '${type}'`)); };
    const cleanup = () => { child.off('message', onMessage); child.off('exit', onExit); };
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
    child.once('exit', () => { clearTimeout(timer); resolve(); });
    child.kill('SIGTERM');
  });
}

// ---------------------------------------------------------------------------------------------
// HTTP load from separate processes

export type Op = 'create' | 'get' | 'update' | 'delete';

export interface PhaseSpec {
  op: Op;
  /** what is written and read: ServiceAccounts (default) or the custom resource of bench/scenarios/custom-resources */
  object?: 'ServiceAccount' | 'Widget';
  /** for Widgets: the group of their CRD (`widgetGroup` when not given; bench/scenarios/crd-scale registers many) */
  group?: string;
  namespace: string;
  /** objects are named objectName(prefix, index) */
  prefix: string;
  /** first index (so several processes split one range) and how many */
  from: number;
  count: number;
  concurrency: number;
  /** statuses that count as success; others are errors (the first few are reported) */
  expect: number[];
  /** count other statuses in the result's `errors` instead of failing the phase */
  tolerateErrors?: boolean;
}

export interface PhaseReport {
  op: Op;
  count: number;
  errors: number;
  firstErrors: string[];
  /** hrtime (ms, CLOCK_MONOTONIC: comparable across processes) of the first start and last end */
  startMs: number;
  endMs: number;
  latenciesMs: Float64Array;
  cpuMs: number;
}

export interface PhaseResult {
  op: Op;
  count: number;
  errors: number;
  seconds: number;
  requestsPerSec: number;
  latencyMs: Percentiles;
  clientCpuMs: number;
}

export const expectedStatus: Record<Op, number[]> = { create: [201], get: [200], update: [200], delete: [200] };

/**
 * `procs` load processes, each with a keep-alive HTTPS agent (one connection per concurrent
 * worker) to `url` with the given client certificate. `run` splits a phase over them and merges
 * what they measured.
 */
export class LoadProcess {
  private constructor(private readonly children: ChildProcess[]) {}

  /** `headers` go with every request (a bearer token; then `creds` may carry an empty cert and key) */
  static async start(url: string, creds: Credentials, procs = 1, headers?: Record<string, string>): Promise<LoadProcess> {
    const children = Array.from({ length: procs }, () => forkModule('./load-client.js'));
    await Promise.all(children.map(async (c) => {
      const ready = nextMessage(c, 'ready');
      c.send({ t: 'start', url, ca: creds.ca, cert: creds.cert, key: creds.key, headers });
      await ready;
    }));
    return new LoadProcess(children);
  }

  async run(spec: PhaseSpec): Promise<PhaseResult> {
    // never more processes than requests in flight: concurrency 1 stays 1
    const active = this.children.slice(0, Math.max(1, Math.min(this.children.length, spec.concurrency)));
    const n = active.length;
    const reports = await Promise.all(active.map((c, p) => {
      const count = Math.floor(spec.count / n) + (p < spec.count % n ? 1 : 0);
      const from = spec.from + p * Math.floor(spec.count / n) + Math.min(p, spec.count % n);
      const concurrency = Math.floor(spec.concurrency / n) + (p < spec.concurrency % n ? 1 : 0);
      const done = nextMessage<{ report: PhaseReport }>(c, 'done');
      c.send({ t: 'phase', spec: { ...spec, from, count, concurrency } });
      return done.then((m) => m.report);
    }));
    const errors = reports.reduce((a, r) => a + r.errors, 0);
    if (errors > 0 && !spec.tolerateErrors) {
      const first = reports.flatMap((r) => r.firstErrors).slice(0, 3).join('; ');
      throw new Error(`${spec.op}: ${errors} of ${spec.count} requests failed: ${first}`);
    }
    const all = new Float64Array(reports.reduce((a, r) => a + r.latenciesMs.length, 0));
    let at = 0;
    for (const r of reports) { all.set(r.latenciesMs, at); at += r.latenciesMs.length; }
    const seconds = (Math.max(...reports.map((r) => r.endMs)) - Math.min(...reports.map((r) => r.startMs))) / 1000;
    return {
      op: spec.op, count: spec.count, errors, seconds: round(seconds, 3), requestsPerSec: round(spec.count / seconds, 1),
      latencyMs: mapValues(percentiles(all), (v) => round(v, 3)), clientCpuMs: round(reports.reduce((a, r) => a + r.cpuMs, 0), 0),
    };
  }

  /** Creates `count` ServiceAccounts `${prefix}-${i}` in `namespace` (for scenarios that need a store filled). */
  fill(namespace: string, prefix: string, from: number, count: number, concurrency = 64): Promise<PhaseResult> {
    return this.run({ op: 'create', namespace, prefix, from, count, concurrency, expect: [201] });
  }

  async close(): Promise<void> {
    await Promise.all(this.children.map((c) => { c.send({ t: 'exit' }); return stopChild(c); }));
  }
}

function mapValues<T extends object>(o: T, f: (v: number) => number): T {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, typeof v === 'number' ? f(v) : v])) as T;
}

/** `sa-000042`: the names bench/list always used. */
export function objectName(prefix: string, index: number): string {
  return `${prefix}-${String(index).padStart(6, '0')}`;
}

/** The ServiceAccount every scenario writes: the shape bench/list always measured (3.8 MiB for 10,000 in a list). */
export function serviceAccountBody(name: string, index: number, extraLabels: Record<string, string> = {}): string {
  return JSON.stringify({
    apiVersion: 'v1', kind: 'ServiceAccount',
    metadata: { name, labels: { app: 'bench', shard: String(index % 16), ...extraLabels } },
    secrets: [{ name: `token-${index}` }],
  });
}

/** The group of the Widget CRD (bench/widget-crd.ts) the custom-resource scenarios register first. */
export const widgetGroup = 'bench.example.com';

/** The custom resource the custom-resource scenarios write: a 20-field spec its CRD validates with 3 CEL rules. */
export function widgetObject(name: string, index: number, extraLabels: Record<string, string> = {}, group = widgetGroup): { apiVersion: string; kind: string; metadata: { name: string; labels: Record<string, string>; annotations?: Record<string, string> }; spec: Record<string, unknown> } {
  const spec: Record<string, unknown> = { replicas: 1 + (index % 5), minReplicas: 1, maxReplicas: 10, mode: 'fast', owner: `team-${index % 7}` };
  for (let f = 0; f < 15; f++) spec[`field${f}`] = `value-${index}-${f}`;
  return { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name, labels: { app: 'bench', ...extraLabels } }, spec };
}

export function widgetBody(name: string, index: number, extraLabels: Record<string, string> = {}, group = widgetGroup): string {
  return JSON.stringify(widgetObject(name, index, extraLabels, group));
}

// ---------------------------------------------------------------------------------------------
// machine

export interface MachineFacts {
  cpuModel: string;
  cores: number;
  memoryMiB: number;
  node: string;
  kernel: string;
  platform: string;
  arch: string;
  loadAverageAtStart: number[];
  /** set when the run ends: other work on the machine shows here */
  loadAverageAtEnd?: number[];
}

export function machineFacts(): MachineFacts {
  const c = cpus();
  return {
    cpuModel: c[0]?.model.trim() ?? 'unknown', cores: c.length, memoryMiB: Math.round(totalmem() / 1048576),
    node: process.version, kernel: release(), platform: platform(), arch: arch(), loadAverageAtStart: loadavg().map((v) => round(v, 2)),
  };
}
