/**
 * The scenarios `npm run bench` knows, in the order a full run takes them. A module either exports
 * `scenario: Scenario` (bench/harness.ts), or is a plain script that measures when run and prints
 * its report as JSON (the style of bench/store.ts): the runner then reads the last JSON object it
 * printed, its `ratio*` fields and any `charts` (ChartSpec[]) in it, and `adapt` (when given)
 * turns its figures into tables, ratios and charts for the report.
 *
 * `optional` modules come from other issues; a run picks them up as soon as their compiled file
 * exists and says "not present" until then.
 */
import type { Ratio, ScenarioResult, Table } from './harness.js';
import { fmt, ratio } from './harness.js';
import type { ChartSpec } from './report/chart.js';

export interface Entry {
  name: string;
  /** path relative to dist/bench/ */
  module: string;
  optional?: boolean;
  /** for plain scripts: what the report says it measures */
  description?: string;
  /** for plain scripts: the flags bench:smoke passes (scripts without them are skipped by smoke) */
  smokeArgs?: string[];
  /** for plain scripts: figures -> report parts; a throw falls back to the generic table */
  adapt?: (figures: any) => Partial<Pick<ScenarioResult, 'lines' | 'ratios' | 'tables' | 'charts' | 'budget'>>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

interface StoreEngine { createsPerSecond: number; createMs: { median: number; p99: number }; commitToWatchMs: { median: number; p99: number } }

/** bench/store.ts prints { creates, concurrency, samples, sqlite: StoreEngine, etcd: StoreEngine, ratio... }. */
function adaptStore(f: { creates: number; concurrency: number; samples: number; sqlite: StoreEngine; etcd: StoreEngine }) {
  const engines = [['SQLite', f.sqlite], ['etcd (one member)', f.etcd]] as const;
  for (const [, e] of engines) if (typeof e.createsPerSecond !== 'number') throw new Error('unexpected store figures');
  const ratios: Ratio[] = [
    ratio(`durable creates/s, ${f.concurrency} clients: etcd vs SQLite`, f.etcd.createsPerSecond, f.sqlite.createsPerSecond, 'higher'),
    ratio('commit-to-watch median: etcd vs SQLite', f.etcd.commitToWatchMs.median, f.sqlite.commitToWatchMs.median, 'lower'),
  ];
  const tables: Table[] = [{
    title: `${f.creates} Secrets created by ${f.concurrency} concurrent clients (each answered once committed); commit-to-watch over ${f.samples} creates one at a time; ms`,
    columns: ['engine', 'creates/s', 'create p50', 'create p99', 'commit-to-watch p50', 'commit-to-watch p99'],
    rows: engines.map(([n, e]) => [n, fmt(e.createsPerSecond), fmt(e.createMs.median), fmt(e.createMs.p99), fmt(e.commitToWatchMs.median), fmt(e.commitToWatchMs.p99)]),
  }];
  const charts: ChartSpec[] = [
    {
      id: 'store-creates', title: `Durable creates/s, ${f.concurrency} clients, by storage engine`, kind: 'bar', xLabel: 'engine', yLabel: 'creates/s',
      categories: engines.map(([n]) => n), series: [{ name: 'creates/s', color: '#1f77b4', values: engines.map(([, e]) => e.createsPerSecond) }],
    },
    {
      id: 'store-latency', title: 'Create and commit-to-watch latency (ms) by storage engine', kind: 'bar', xLabel: 'engine', yLabel: 'ms',
      categories: engines.map(([n]) => n), series: [
        { name: 'create p50', color: '#9ecae1', values: engines.map(([, e]) => e.createMs.median) },
        { name: 'create p99', color: '#08519c', values: engines.map(([, e]) => e.createMs.p99) },
        { name: 'commit-to-watch p50', color: '#a1d99b', values: engines.map(([, e]) => e.commitToWatchMs.median) },
        { name: 'commit-to-watch p99', color: '#31a354', values: engines.map(([, e]) => e.commitToWatchMs.p99) },
      ],
    },
  ];
  // no budget line: this script's client shares the bench process (see crud for the server's creates/s)
  return { ratios, tables, charts };
}

interface Stat { median: number; p99: number; min: number; max: number }

/** bench/codec.ts prints { objects, rounds, results: [{ codec, encodeMs, decodeMs, bytesPerObject }], ratio... }. */
function adaptCodec(f: { objects: number; rounds: number; results: { codec: string; encodeMs: Stat; decodeMs: Stat; bytesPerObject: number }[]; messages?: { message: string; bytes: number; cloneMs: number; msgpackrMs: number; packMs: number; ratio: number }[] }) {
  const base = f.results[0];
  if (!base || typeof base.encodeMs.median !== 'number') throw new Error('unexpected codec figures');
  const short = (c: string) => c.replace(/ \(baseline\)$/, '').replace('JSON.stringify/parse', 'JSON (built-in)');
  const ratios: Ratio[] = f.results.slice(1).flatMap((r) => [
    ratio(`${r.codec} encode vs JSON.stringify`, r.encodeMs.median, base.encodeMs.median, 'lower'),
    ratio(`${r.codec} decode vs JSON.parse`, r.decodeMs.median, base.decodeMs.median, 'lower'),
  ]);
  const tables: Table[] = [{
    title: `${f.objects} ServiceAccounts encoded and decoded, median of ${f.rounds} rounds (ms); JSON.stringify/parse is the baseline`,
    columns: ['encoding', 'encode ms', 'decode ms', 'bytes/object', 'encode ratio', 'decode ratio'],
    rows: f.results.map((r) => [r.codec, fmt(r.encodeMs.median), fmt(r.decodeMs.median), r.bytesPerObject, fmt(r.encodeMs.median / base.encodeMs.median), fmt(r.decodeMs.median / base.decodeMs.median)]),
  }];
  if (f.messages) {
    for (const m of f.messages) ratios.push(ratio(`${m.message}: msgpackr vs structured clone`, m.msgpackrMs, m.cloneMs, 'lower'));
    tables.push({
      title: 'Thread messages of the watch path through a worker, per message (ms): structured clone is the baseline',
      columns: ['message', 'msgpackr bytes', 'structured clone ms', 'msgpackr ms', 'pack alone ms', 'ratio'],
      rows: f.messages.map((m) => [m.message, m.bytes, m.cloneMs, m.msgpackrMs, m.packMs, m.ratio]),
    });
  }
  const charts: ChartSpec[] = [{
    id: 'codec-ms', title: `Encode and decode ${f.objects} ServiceAccounts (ms) by encoding`, kind: 'bar', xLabel: 'encoding', yLabel: 'ms',
    categories: f.results.map((r) => short(r.codec)),
    series: [
      { name: 'encode', color: '#1f77b4', values: f.results.map((r) => r.encodeMs.median) },
      { name: 'decode', color: '#ff7f0e', values: f.results.map((r) => r.decodeMs.median) },
    ],
  }];
  return { ratios, tables, charts };
}

/** bench/apply.ts prints { objects, secretsPerObject, concurrency, rounds, appliesPerSecond, putsPerSecond, ratioApplyToPut }. */
function adaptApply(f: { objects: number; secretsPerObject: number; concurrency: number; rounds: number; appliesPerSecond: Stat; putsPerSecond: Stat }) {
  if (typeof f.appliesPerSecond.median !== 'number') throw new Error('unexpected apply figures');
  const rows = [['server-side apply', f.appliesPerSecond], ['PUT (baseline)', f.putsPerSecond]] as const;
  return {
    ratios: [ratio(`applies/s vs PUTs/s, ${f.concurrency} clients`, f.appliesPerSecond.median, f.putsPerSecond.median, 'higher')],
    tables: [{
      title: `${f.objects} ServiceAccounts with ${f.secretsPerObject} secrets each, ${f.concurrency} clients, ${f.rounds} rounds (requests/s)`,
      columns: ['verb', 'median', 'min', 'max'],
      rows: rows.map(([n, v]) => [n, fmt(v.median), fmt(v.min), fmt(v.max)]),
    }],
    charts: [{
      id: 'apply-rate', title: `Server-side apply against PUT, ${f.concurrency} clients (requests/s)`, kind: 'bar', xLabel: 'verb', yLabel: 'requests/s',
      categories: rows.map(([n]) => n),
      series: [
        { name: 'median', color: '#1f77b4', values: rows.map(([, v]) => v.median) },
        { name: 'min', color: '#aec7e8', values: rows.map(([, v]) => v.min) },
        { name: 'max', color: '#08519c', values: rows.map(([, v]) => v.max) },
      ],
    }] as ChartSpec[],
  };
}

export const registry: Entry[] = [
  { name: 'crud', module: './scenarios/crud.js' },
  { name: 'audit', module: './scenarios/audit.js' },
  { name: 'scale', module: './scenarios/scale.js' },
  { name: 'list', module: './scenarios/list.js' },
  { name: 'watch-fanout', module: './scenarios/watch-fanout.js' },
  { name: 'authn', module: './scenarios/authn.js' },
  { name: 'authz', module: './scenarios/authz.js' },
  { name: 'apf', module: './scenarios/apf.js' },
  { name: 'slow-clients', module: './scenarios/slow-clients.js' },
  { name: 'custom-resources', module: './scenarios/custom-resources.js' },
  { name: 'crd-scale', module: './scenarios/crd-scale.js' },
  {
    name: 'store', module: './store.js', optional: true,
    description: 'Durable creates/s (Secrets, 64 concurrent clients, from the bench process) and commit-to-watch latency on the two storage engines: SQLite against a one-member etcd on loopback (bench/store.ts).',
    smokeArgs: ['--creates', '100', '--concurrency', '8', '--samples', '10'],
    adapt: adaptStore,
  },
  {
    name: 'codec', module: './codec.js', optional: true,
    description: 'Encode and decode N ServiceAccounts in every wire encoding (JSON, YAML, Protobuf, CBOR), in one process; baseline: JSON.stringify/JSON.parse of the same objects (bench/codec.ts).',
    smokeArgs: ['--objects', '200', '--rounds', '2'],
    adapt: adaptCodec,
  },
  {
    name: 'apply', module: './apply.js', optional: true,
    description: 'Server-side applies per second on ServiceAccounts with 10 secrets each, from the bench process; baseline: plain PUTs making the same change in the same run (bench/apply.ts).',
    smokeArgs: ['--objects', '20', '--rounds', '2', '--concurrency', '4'],
    adapt: adaptApply,
  },
  {
    name: 'stalled-watch', module: './stalled-watch.js',
    description: 'N watchers reading Secrets of ~270 KiB while one watcher of the same resource reads nothing: time to write them, lag of the last receipt behind the last write, and whether the server ended the stalled watcher (bench/stalled-watch.ts).',
    smokeArgs: ['--readers', '3', '--events', '12', '--kib', '50'],
  },
];
