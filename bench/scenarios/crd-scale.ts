/**
 * crd-scale: restarting on a store that holds N CustomResourceDefinitions (the Widget CRD of
 * bench/widget-crd.ts, one group each) and M custom resources spread over them. The store is
 * filled once (CRDs one after another, then the Widgets from a separate load process, 64 in
 * flight), then the server is restarted on that data dir several times; each restart is timed
 * from spawn to the first /readyz 200, to every CRD's resource answering a LIST with all its
 * objects (each poll round asks the CRDs not yet seen served, 16 in flight), and to aggregated
 * discovery listing all N groups (the two polled side by side), and its RSS read from /proc once
 * it has settled. Baseline in the same run: the same restarts on an empty store (initialized
 * once, so certificate generation is not timed).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentFor, call, pool, type TestServer } from '../support.js';
import { established, widgetCrd } from '../widget-crd.js';
import {
  LoadProcess, dirBytes, fmt, measureRounds, memoryOf, one, ratio, sleep, spread, startServer,
  type Ratio, type Scenario, type Spread,
} from '../harness.js';

const args = ['--log-level', 'warn'];
const settleMs = 1000;
const pollMs = 10;
const namespace = 'crs';
const groupOf = (i: number) => `c${i}.scale.bench.example.com`;
const groupSuffix = '.scale.bench.example.com';
const listPath = (i: number, limit: number) => `/apis/${groupOf(i)}/v1/namespaces/${namespace}/widgets?limit=${limit}`;
const aggregatedAccept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

/** Widgets stored under CRD i when `objects` are spread over `crds`: the first ones take the remainder. */
const share = (objects: number, crds: number, i: number) => Math.floor(objects / crds) + (i < objects % crds ? 1 : 0);

interface Store { crds: number; objects: number }

interface Restart { readyMs: number; servedMs: number; discoveryMs: number; rssMiB: number; peakMiB: number }

interface Restarts { readyMs: Spread; servedMs: Spread; discoveryMs: Spread; rssMiB: Spread; peakRssMiB: Spread; storeMiB: number }

/** Objects a LIST of CRD i's resource reports (first page plus remainingItemCount), or -1 while it is not served. */
async function listed(server: TestServer, agent: ReturnType<typeof agentFor>, i: number): Promise<number> {
  const r = await call(server, agent, 'GET', listPath(i, 1));
  if (r.status !== 200) return -1;
  const page = JSON.parse(r.text) as { items: unknown[]; metadata: { remainingItemCount?: number } };
  return page.items.length + (page.metadata.remainingItemCount ?? 0);
}

/** Polls `done` every pollMs until it holds, for at most `deadlineMs`; returns when it held, in ms since t0. */
async function until(t0: bigint, deadlineMs: number, what: () => string, done: () => Promise<boolean>): Promise<number> {
  for (;;) {
    if (await done()) return Number(process.hrtime.bigint() - t0) / 1e6;
    if (Number(process.hrtime.bigint() - t0) / 1e6 > deadlineMs) throw new Error(`${what()}: not within ${deadlineMs} ms of spawn`);
    await sleep(pollMs);
  }
}

/** One start on `dataDir`: ready, then every CRD served with its objects and discovered; memory once settled. */
async function restartOnce(dataDir: string, store: Store): Promise<Restart> {
  const t0 = process.hrtime.bigint();
  const server = await startServer({ dataDir, args, timeoutMs: 300_000 });
  const readyMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const agent = agentFor(server, 17); // the sweep's 16 and the discovery poll
  try {
    let servedMs = readyMs;
    let discoveryMs = readyMs;
    if (store.crds > 0) {
      const pending = new Set(Array.from({ length: store.crds }, (_, i) => i));
      [servedMs, discoveryMs] = await Promise.all([
        until(t0, 300_000, () => `${pending.size} CRDs not served with their objects (${groupOf([...pending][0])} among them)`, async () => {
          const ids = [...pending];
          await pool(ids.length, 16, async (k) => {
            if ((await listed(server, agent, ids[k])) === share(store.objects, store.crds, ids[k])) pending.delete(ids[k]);
          });
          return pending.size === 0;
        }),
        until(t0, 300_000, () => `aggregated discovery listing ${store.crds} groups`, async () => {
          const r = await call(server, agent, 'GET', '/apis', undefined, { accept: aggregatedAccept });
          if (r.status !== 200) return false;
          const doc = JSON.parse(r.text) as { items?: { metadata: { name: string } }[] };
          return (doc.items ?? []).filter((g) => g.metadata.name.endsWith(groupSuffix)).length === store.crds;
        }),
      ]);
    }
    await sleep(settleMs);
    const mem = memoryOf(server.process.pid as number);
    return { readyMs, servedMs, discoveryMs, ...mem };
  } finally {
    agent.destroy();
    await server.stop();
  }
}

async function restarts(dataDir: string, store: Store, rounds: number, log: (l: string) => void, label: string): Promise<Restarts> {
  const runs = await measureRounds(rounds, 1, async (r, warm) => {
    const x = await restartOnce(dataDir, store);
    const served = store.crds > 0 ? `, every CRD served at ${fmt(x.servedMs)} ms, discovery complete at ${fmt(x.discoveryMs)} ms` : '';
    if (!warm) log(`crd-scale ${label}: restart ${r + 1}/${rounds}: ready in ${fmt(x.readyMs)} ms${served}, RSS ${fmt(x.rssMiB)} MiB (peak ${fmt(x.peakMiB)} MiB)`);
    return x;
  });
  const of = (f: (x: Restart) => number) => spread(runs.map(f));
  return {
    readyMs: of((x) => x.readyMs), servedMs: of((x) => x.servedMs), discoveryMs: of((x) => x.discoveryMs),
    rssMiB: of((x) => x.rssMiB), peakRssMiB: of((x) => x.peakMiB), storeMiB: +(dirBytes(dataDir) / 1048576).toFixed(1),
  };
}

/** Fills `dataDir`: the namespace, `crds` Widget CRDs (each Established), `objects` Widgets spread over them. */
async function fill(dataDir: string, store: Store, log: (l: string) => void): Promise<{ registerMs: number; createsPerSec: number; rssAfterFillMiB: number }> {
  const server = await startServer({ dataDir, args, timeoutMs: 300_000 });
  const agent = agentFor(server, 4);
  let load: LoadProcess | undefined;
  try {
    const ns = await call(server, agent, 'POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: namespace } }));
    if (ns.status !== 201) throw new Error(`namespace: ${ns.status} ${ns.text}`);
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < store.crds; i++) {
      const r = await call(server, agent, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', widgetCrd(groupOf(i), 'widgets', 'Widget'));
      if (r.status !== 201) throw new Error(`CRD ${i}: ${r.status} ${r.text}`);
    }
    for (let i = 0; i < store.crds; i++) await established(server, agent, `widgets.${groupOf(i)}`);
    const registerMs = Number(process.hrtime.bigint() - t0) / 1e6;
    load = await LoadProcess.start(server.url, server.admin, 1);
    const t1 = process.hrtime.bigint();
    for (let i = 0; i < store.crds; i++) {
      const count = share(store.objects, store.crds, i);
      if (count > 0) await load.run({ op: 'create', object: 'Widget', group: groupOf(i), namespace, prefix: 'w', from: 0, count, concurrency: 64, expect: [201] });
    }
    const createsPerSec = store.objects / (Number(process.hrtime.bigint() - t1) / 1e9);
    await sleep(settleMs);
    const rssAfterFillMiB = memoryOf(server.process.pid as number).rssMiB;
    log(`crd-scale: ${store.crds} CRDs registered and Established in ${fmt(registerMs)} ms; ${store.objects} Widgets at ${fmt(createsPerSec)} creates/s; RSS before restart ${fmt(rssAfterFillMiB)} MiB`);
    return { registerMs, createsPerSec, rssAfterFillMiB };
  } finally {
    agent.destroy();
    await load?.close();
    await server.stop();
  }
}

export const scenario: Scenario = {
  name: 'crd-scale',
  description: 'Start-up with N CRDs (20-field schema, 3 CEL rules, one group each) and M custom resources spread over them: spawn to /readyz 200, to every CRD served with its objects, to aggregated discovery listing every group, and RSS; baseline: the same restarts on an empty store.',
  defaults: { crds: [200], objects: [100_000], restarts: [3] },
  smoke: { crds: [5], objects: [300], restarts: [1] },
  help: { crds: 'CustomResourceDefinitions stored, one group each', objects: 'custom resources stored, spread evenly over the CRDs', restarts: 'measured restarts (after one unmeasured)' },
  async run(ctx) {
    const store: Store = { crds: one(ctx.sizes, 'crds'), objects: one(ctx.sizes, 'objects') };
    if (store.crds < 1) throw new Error('--crds must be at least 1');
    const rounds = one(ctx.sizes, 'restarts');
    const emptyDir = mkdtempSync(join(tmpdir(), 'orch-bench-empty-'));
    const dataDir = mkdtempSync(join(tmpdir(), 'orch-bench-crd-scale-'));
    try {
      const init = await startServer({ dataDir: emptyDir, args });
      await init.stop();
      const empty = await restarts(emptyDir, { crds: 0, objects: 0 }, rounds, ctx.log, 'empty store');
      const filled = await fill(dataDir, store, ctx.log);
      const full = await restarts(dataDir, store, rounds, ctx.log, `${store.crds} CRDs, ${store.objects} objects`);

      const label = `${store.crds} CRDs, ${store.objects.toLocaleString('en-US')} CRs`;
      const ratios: Ratio[] = [
        ratio(`start to ready, ${label} vs empty`, full.readyMs.median, empty.readyMs.median, 'lower'),
        ratio(`start to every CRD served, ${label} vs empty store ready`, full.servedMs.median, empty.readyMs.median, 'lower'),
        ratio(`start to discovery complete, ${label} vs empty store ready`, full.discoveryMs.median, empty.readyMs.median, 'lower'),
        ratio(`RSS, ${label} vs empty`, full.rssMiB.median, empty.rssMiB.median, 'lower'),
      ];
      const lines = [
        `crd-scale empty store: ready in ${fmt(empty.readyMs.median)} ms (±${fmt(empty.readyMs.spreadPct)}%), RSS ${fmt(empty.rssMiB.median)} MiB, peak ${fmt(empty.peakRssMiB.median)} MiB`,
        `crd-scale ${label} (store ${fmt(full.storeMiB)} MiB): ready in ${fmt(full.readyMs.median)} ms (±${fmt(full.readyMs.spreadPct)}%), every CRD served at ${fmt(full.servedMs.median)} ms, discovery complete at ${fmt(full.discoveryMs.median)} ms, RSS ${fmt(full.rssMiB.median)} MiB, peak ${fmt(full.peakRssMiB.median)} MiB; RSS before restart ${fmt(filled.rssAfterFillMiB)} MiB; CRDs registered in ${fmt(filled.registerMs)} ms, CRs filled at ${fmt(filled.createsPerSec)} creates/s`,
      ];
      const row = (name: string, r: Restarts, served: boolean) => [
        name, fmt(r.storeMiB), fmt(r.readyMs.median), `±${fmt(r.readyMs.spreadPct)}%`, served ? fmt(r.servedMs.median) : '', served ? fmt(r.discoveryMs.median) : '',
        fmt(r.rssMiB.median), fmt(r.peakRssMiB.median), fmt(r.readyMs.median / empty.readyMs.median), fmt(r.rssMiB.median / empty.rssMiB.median),
      ];
      const categories = ['empty', label];
      return {
        lines, ratios, budget: [],
        tables: [{
          title: `median of ${rounds} restarts after one unmeasured; times from spawn (ms); RSS read ${settleMs} ms after every CRD is served; peak is VmHWM; ± is the restarts' spread`,
          columns: ['store', 'on disk MiB', 'ready ms', 'spread', 'every CRD served ms', 'discovery complete ms', 'RSS MiB', 'peak RSS MiB', 'ready ratio', 'RSS ratio'],
          rows: [row('empty (baseline)', empty, false), row(label, full, true)],
        }],
        charts: [
          {
            id: 'crd-scale-startup', title: 'Start-up with CRDs and custom resources (ms from spawn)', kind: 'bar', xLabel: 'store', yLabel: 'ms',
            categories, series: [
              { name: '/readyz 200', color: '#1f77b4', values: [empty.readyMs.median, full.readyMs.median] },
              { name: 'every CRD served', color: '#ff7f0e', values: [null, full.servedMs.median] },
              { name: 'discovery complete', color: '#2ca02c', values: [null, full.discoveryMs.median] },
            ],
          },
          {
            id: 'crd-scale-rss', title: 'Server memory (MiB) with CRDs and custom resources', kind: 'bar', xLabel: 'store', yLabel: 'MiB',
            categories, series: [
              { name: 'RSS after restart', color: '#2ca02c', values: [empty.rssMiB.median, full.rssMiB.median] },
              { name: 'peak RSS during start', color: '#98df8a', values: [empty.peakRssMiB.median, full.peakRssMiB.median] },
              { name: 'RSS after filling', color: '#ff7f0e', values: [null, filled.rssAfterFillMiB] },
            ],
          },
        ],
        figures: { restarts: rounds, settleMs, pollMs, store, filled, empty, full },
      };
    } finally {
      rmSync(emptyDir, { recursive: true, force: true });
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
};
