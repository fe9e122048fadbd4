/**
 * `npm run bench [-- <scenario>... [--<size> a,b,c]... [--smoke] [--out dir] [--timeout s]]`
 *
 * With no scenario named, runs all of them at their default sizes and writes
 * bench/results/<date>.json, .html (self-contained, inline SVG charts), .md (figures for the
 * README) and bench/results/<date>/<chart>.svg. Named scenarios or changed sizes write to
 * bench/results/tmp/ instead, so a partial run never replaces the committed report. `--smoke`
 * runs every scenario at tiny sizes (CI), also into bench/results/tmp/.
 *
 * Every scenario runs in a child process of its own (its own process group, so a timeout ends
 * the servers and load processes it started too); a failed scenario is reported and the run goes
 * on, ending with exit code 1.
 * `npm run bench -- --render bench/results/<date>.json` renders the HTML and SVG charts again.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fmt, formatRatio, machineFacts, round, type Scenario, type ScenarioResult, type Sizes } from './harness.js';
import { registry, type Entry } from './registry.js';
import { writeReport, type RunDocument } from './report/document.js';
import type { ChartSpec } from './report/chart.js';

const benchDir = dirname(fileURLToPath(import.meta.url)); // dist/bench
const repoRoot = resolve(benchDir, '../..');

/** A mistake on the command line: reported as one line, exit code 2. */
class UsageError extends Error {}

interface Args {
  names: string[];
  smoke: boolean;
  help: boolean;
  out?: string;
  render?: string;
  child?: string;
  timeoutSec?: number;
  /** size flags as given */
  flags: Map<string, string>;
}

function parseArgs(argv: string[]): Args {
  const a: Args = { names: [], smoke: false, help: false, flags: new Map() };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) { if (arg === '-h') a.help = true; else a.names.push(arg); continue; }
    const [key, inline] = arg.slice(2).split(/=(.*)/s, 2);
    if (key === 'smoke') { a.smoke = true; continue; }
    if (key === 'help') { a.help = true; continue; }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new UsageError(`--${key} needs a value`);
    if (key === 'out') a.out = value;
    else if (key === 'render') a.render = value;
    else if (key === 'child') a.child = value;
    else if (key === 'timeout') a.timeoutSec = Number(value);
    else a.flags.set(key, value);
  }
  return a;
}

/** `1,16,64`, `10k`, `100_000` -> numbers */
function parseList(flag: string, value: string): number[] {
  return value.split(',').map((part) => {
    const m = /^([\d_.]+)([kKmM]?)$/.exec(part.trim());
    const n = m ? Number(m[1].replace(/_/g, '')) * (m[2] ? (m[2].toLowerCase() === 'k' ? 1e3 : 1e6) : 1) : NaN;
    if (!Number.isFinite(n)) throw new UsageError(`--${flag}: '${part}' is not a number`);
    return n;
  });
}

function sizesFor(sc: Scenario, smoke: boolean, flags: Map<string, string>): Sizes {
  const sizes: Sizes = { ...(smoke ? sc.smoke : sc.defaults) };
  for (const [k, v] of flags) if (k in sc.defaults) sizes[k] = parseList(k, v);
  return sizes;
}

const modulePath = (e: Entry) => join(benchDir, e.module);

/** Does the compiled module export `scenario` (the harness contract), or is it a plain script? */
function isHarnessModule(e: Entry): boolean {
  const text = readFileSync(modulePath(e), 'utf8');
  return /\bexport\s+(const|let|var)\s+scenario\b/.test(text) || /export\s*\{[^}]*\bscenario\b[^}]*\}/.test(text);
}

async function loadScenario(e: Entry): Promise<Scenario> {
  const mod = await import(pathToFileURL(modulePath(e)).href) as { scenario: Scenario };
  return mod.scenario;
}

// ---------------------------------------------------------------------------------------------
// child: runs one scenario and sends its result

async function child(args: Args): Promise<void> {
  const entry = registry.find((e) => e.name === args.child);
  if (!entry) throw new Error(`unknown scenario ${args.child}`);
  const sc = await loadScenario(entry);
  const sizes = sizesFor(sc, args.smoke, args.flags);
  const t0 = Date.now();
  const r = await sc.run({ sizes, smoke: args.smoke, log: (line) => console.log(`[${sc.name}] ${line}`) });
  const result: ScenarioResult = { scenario: sc.name, description: sc.description, sizes, seconds: round((Date.now() - t0) / 1000, 1), ...r };
  await new Promise<void>((res) => process.send!({ t: 'result', result }, () => res()));
}

// ---------------------------------------------------------------------------------------------
// plain scripts: read the JSON they print

function parsePlainOutput(entry: Entry, stdout: string, seconds: number, args: string[]): ScenarioResult {
  const name = entry.name;
  const lines = stdout.split('\n');
  const objects: Record<string, unknown>[] = [];
  const text: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    const t = l.trim();
    if (t === '{') {
      const indent = l.indexOf('{');
      const close = lines.findIndex((x, j) => j > i && x === `${' '.repeat(indent)}}`);
      if (close > i) {
        try { objects.push(JSON.parse(lines.slice(i, close + 1).join('\n'))); i = close; continue; } catch { /* not JSON after all */ }
      }
    } else if (t.startsWith('{') && t.endsWith('}')) {
      try { objects.push(JSON.parse(t)); continue; } catch { /* text */ }
    }
    if (t) text.push(t);
  }
  if (objects.length === 0) throw new Error(`${name} printed no JSON report`);
  const ratios: ScenarioResult['ratios'] = [];
  const rows: (string | number)[][] = [];
  const walk = (v: unknown, path: string) => {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      for (const [k, x] of Object.entries(v)) {
        if (k === 'charts') continue;
        walk(x, path ? `${path}.${k}` : k);
      }
      return;
    }
    if (typeof v === 'number') {
      rows.push([path, fmt(v)]);
      if (/(^|\.)ratio/i.test(path)) ratios.push({ name: path, ours: NaN, baseline: NaN, value: v });
    } else if (typeof v === 'string' || typeof v === 'boolean') rows.push([path, String(v)]);
  };
  objects.forEach((o, i) => walk(o, objects.length > 1 ? `#${i + 1}` : ''));
  const charts = objects.flatMap((o) => (Array.isArray(o.charts) ? o.charts as ChartSpec[] : []));
  const figures = objects.length === 1 ? objects[0] : objects;
  const description = entry.description ?? (typeof objects[0].description === 'string' ? objects[0].description : `bench/${name}.ts (a plain script; figures read from its JSON output)`);
  const result: ScenarioResult = {
    scenario: name, description, sizes: {}, argv: args, seconds, lines: text, ratios, charts, budget: [],
    tables: [{ title: 'figures as the script printed them', columns: ['figure', 'value'], rows: rows.slice(0, 200) }],
    figures,
  };
  if (entry.adapt) {
    try {
      const adapted = entry.adapt(figures);
      return { ...result, ...adapted, charts: [...(adapted.charts ?? []), ...charts] };
    } catch (err) {
      console.error(`[bench] ${name}: figures not in the expected shape (${(err as Error).message}); reporting them as printed`);
    }
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// parent

function runChild(cmd: ChildProcess, name: string, timeoutSec: number | undefined): Promise<{ result?: ScenarioResult; stdout: string; code: number | null; timedOut: boolean }> {
  return new Promise((resolvePromise) => {
    let stdout = '';
    let result: ScenarioResult | undefined;
    let timedOut = false;
    cmd.stdout?.on('data', (c: Buffer) => { const s = c.toString(); stdout += s; process.stdout.write(s); });
    cmd.on('message', (m: { t: string; result: ScenarioResult }) => { if (m.t === 'result') result = m.result; });
    const timer = timeoutSec ? setTimeout(() => {
      timedOut = true;
      console.error(`[bench] ${name}: no result after ${timeoutSec} s; ending its process group`);
      try { process.kill(-(cmd.pid as number), 'SIGKILL'); } catch { /* gone */ }
    }, timeoutSec * 1000) : undefined;
    let code: number | null = null;
    cmd.on('exit', (c) => {
      code = c;
      if (timer) clearTimeout(timer);
      // whatever the scenario started and left behind (servers, load processes) ends with it
      try { process.kill(-(cmd.pid as number), 'SIGKILL'); } catch { /* already gone */ }
    });
    // 'close' comes once its output is read to the end (a plain script's JSON report)
    cmd.on('close', () => resolvePromise({ result, stdout, code, timedOut }));
  });
}

let current: ChildProcess | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (current?.pid) { try { process.kill(-current.pid, 'SIGTERM'); } catch { /* gone */ } }
    process.exit(130);
  });
}

function usage(harness: Scenario[]): string {
  const out = [
    'usage: npm run bench [-- [scenario...] [--<size> a,b,c]... [--smoke] [--out dir] [--timeout seconds]]',
    '       npm run bench -- --render bench/results/<date>.json',
    '',
    'scenarios (default sizes; --smoke sizes):',
  ];
  for (const sc of harness) {
    out.push(`  ${sc.name}: ${sc.description}`);
    for (const [k, v] of Object.entries(sc.defaults)) out.push(`      --${k} ${v.join(',')}  (smoke ${sc.smoke[k]?.join(',') ?? '-'})  ${sc.help[k] ?? ''}`);
  }
  for (const e of registry) {
    if (harness.some((s) => s.name === e.name)) continue;
    const source = `bench/${e.module.replace(/^\.\//, '').replace(/\.js$/, '.ts')}`;
    if (!existsSync(modulePath(e))) { out.push(`  ${e.name}: ${source} is not present yet`); continue; }
    out.push(`  ${e.name}: ${e.description ?? source}`);
    out.push(`      a plain script: its own flags pass through (see ${source}); smoke: ${e.smokeArgs?.join(' ') ?? 'skipped'}`);
  }
  return out.join('\n');
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  if (args.child) { await child(args); return 0; }
  if (args.render) {
    const doc = JSON.parse(readFileSync(args.render, 'utf8')) as RunDocument;
    // plain scripts' figures go through their adapters again, so a better adapter improves old reports
    doc.scenarios = doc.scenarios.map((s) => {
      const entry = registry.find((e) => e.name === s.scenario);
      if (!s.argv || !entry?.adapt) return s;
      try { return { ...s, ...entry.adapt(s.figures) }; } catch { return s; }
    });
    const file = resolve(args.render);
    const w = writeReport(doc, dirname(file), file.replace(/^.*\//, '').replace(/\.json$/, ''));
    console.log(`rendered ${w.html}, ${w.markdown} and ${w.svgs.length} SVG charts`);
    return 0;
  }

  const unknown = args.names.filter((n) => !registry.some((e) => e.name === n));
  const loadHarness = async (entries: Entry[]) => {
    const out: Scenario[] = [];
    for (const e of entries) if (existsSync(modulePath(e)) && isHarnessModule(e)) out.push(await loadScenario(e));
    return out;
  };
  if (args.help || unknown.length) {
    if (unknown.length) console.error(`unknown scenario(s): ${unknown.join(', ')}\n`);
    console.log(usage(await loadHarness(registry)));
    return unknown.length ? 2 : 0;
  }
  const selected = args.names.length ? registry.filter((e) => args.names.includes(e.name)) : registry;
  const present = selected.filter((e) => existsSync(modulePath(e)));
  const harness = await loadHarness(present);
  const plainSelected = present.some((e) => !harness.some((s) => s.name === e.name));
  for (const k of args.flags.keys()) {
    if (!harness.some((s) => k in s.defaults) && !plainSelected) throw new UsageError(`--${k} is not a size of ${selected.map((e) => e.name).join(', ')} (see --help)`);
  }

  const full = !args.smoke && args.names.length === 0 && args.flags.size === 0;
  const date = new Date().toISOString().slice(0, 10);
  const outDir = resolve(args.out ?? (full ? join(repoRoot, 'bench/results') : join(repoRoot, 'bench/results/tmp')));
  const stem = full ? date : `${new Date().toISOString().replace(/:/g, '-').slice(0, 19)}-${args.smoke ? 'smoke' : 'partial'}`;
  const timeoutSec = args.timeoutSec ?? (args.smoke ? 240 : undefined);
  const doc: RunDocument = {
    date, startedAt: new Date().toISOString(), finishedAt: '', mode: args.smoke ? 'smoke' : full ? 'full' : 'partial',
    command: `npm run ${args.smoke ? 'bench:smoke' : 'bench'}${process.argv.length > 2 && !args.smoke ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    machine: machineFacts(),
    notes: [
      `The server, its load processes and (per scenario) the baseline share this machine's ${machineFacts().cores} cores; figures are what one machine does with client and server on it, as DESIGN.md's reference figures were taken.`,
      'Servers run with --log-level warn (no per-request log lines) on a temporary data dir (SQLite, WAL, synchronous=FULL).',
      ...(args.smoke ? ['Smoke run: tiny sizes that check the harness works; its figures say nothing about speed.'] : []),
    ],
    scenarios: [], failed: [], skipped: [],
  };

  for (const e of selected) {
    if (!existsSync(modulePath(e))) {
      const reason = `bench/${e.module.replace(/^\.\//, '').replace(/\.js$/, '.ts')} is not present (yet)`;
      if (args.names.includes(e.name)) doc.failed.push({ scenario: e.name, error: reason });
      else doc.skipped.push({ scenario: e.name, reason });
      console.log(`[bench] ${e.name}: skipped, ${reason}`);
      continue;
    }
    const sc = harness.find((s) => s.name === e.name);
    const flagArgs = [...args.flags].flatMap(([k, v]) => [`--${k}`, v]);
    let cmd: ChildProcess;
    let plainArgs: string[] = [];
    if (sc) {
      console.log(`[bench] ${e.name}: ${Object.entries(sizesFor(sc, args.smoke, args.flags)).map(([k, v]) => `--${k} ${v.join(',')}`).join(' ')}`);
      cmd = fork(fileURLToPath(import.meta.url), ['--child', e.name, ...(args.smoke ? ['--smoke'] : []), ...flagArgs], {
        stdio: ['ignore', 'pipe', 'inherit', 'ipc'], serialization: 'advanced', detached: true,
      });
    } else {
      if (args.smoke && !e.smokeArgs) {
        doc.skipped.push({ scenario: e.name, reason: 'a plain script with no smoke sizes registered in bench/registry.ts' });
        console.log(`[bench] ${e.name}: skipped by smoke (plain script without smoke sizes)`);
        continue;
      }
      plainArgs = args.smoke ? e.smokeArgs ?? [] : flagArgs;
      console.log(`[bench] ${e.name}: node ${e.module} ${plainArgs.join(' ')}`);
      cmd = spawn(process.execPath, [modulePath(e), ...plainArgs], { stdio: ['ignore', 'pipe', 'inherit'], detached: true });
    }
    current = cmd;
    const t0 = Date.now();
    const r = await runChild(cmd, e.name, timeoutSec);
    current = undefined;
    const seconds = round((Date.now() - t0) / 1000, 1);
    try {
      if (r.timedOut) throw new Error(`timed out after ${timeoutSec} s`);
      if (sc) {
        if (!r.result) throw new Error(`exited with ${r.code} without a result`);
        doc.scenarios.push(r.result);
      } else {
        if (r.code !== 0) throw new Error(`exited with ${r.code}`);
        const parsed = parsePlainOutput(e, r.stdout, seconds, plainArgs);
        doc.scenarios.push(parsed);
      }
    } catch (err) {
      doc.failed.push({ scenario: e.name, error: (err as Error).message });
      console.error(`[bench] ${e.name} FAILED: ${(err as Error).message}`);
    }
  }
  doc.finishedAt = new Date().toISOString();
  doc.machine.loadAverageAtEnd = machineFacts().loadAverageAtStart;

  const written = writeReport(doc, outDir, stem);
  console.log('\n=== summary ===');
  console.log(`${doc.machine.cpuModel}, ${doc.machine.cores} cores, ${doc.machine.memoryMiB} MiB, Node ${doc.machine.node}, kernel ${doc.machine.kernel}`);
  for (const s of doc.scenarios) {
    console.log(`\n${s.scenario} (${s.seconds} s)`);
    for (const l of s.lines) console.log(`  ${l}`);
    for (const r of s.ratios) console.log(`  ratio ${formatRatio(r)}`);
  }
  for (const s of doc.skipped) console.log(`\nskipped ${s.scenario}: ${s.reason}`);
  for (const f of doc.failed) console.log(`\nFAILED ${f.scenario}: ${f.error}`);
  console.log(`\nwrote ${written.json}\n      ${written.html}\n      ${written.markdown}\n      ${written.svgs.length} SVG charts in ${join(outDir, stem)}/`);
  return doc.failed.length ? 1 : 0;
}

main().then((code) => process.exit(code), (err: unknown) => {
  console.error(err instanceof UsageError ? `bench: ${err.message}` : err instanceof Error ? err.stack ?? err.message : err);
  process.exit(2);
});
