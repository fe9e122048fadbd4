/**
 * bench/managed-fields: the managed-fields bookkeeping of one write, in-process: a ServiceAccount
 * created by one manager, then updated (a label changed) by another, as every create and update
 * request does it. With `--before <built checkout>` the same runs use that checkout's code too,
 * rounds alternating, and the ratios are printed.
 * Usage: node dist/bench/managed-fields.js [--writes 20000] [--rounds 6] [--before <dir>]
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { KindDeclaration } from '../src/api/kind.js';
import type { KObject, ManagedFieldsEntry } from '../src/api/meta.js';
import { flag, summarize } from './support.js';

const writes = flag('writes', 20_000);
const rounds = flag('rounds', 6);
const at = process.argv.indexOf('--before');
const beforeDir = at >= 0 ? process.argv[at + 1] : undefined;

type Update = (next: KObject, old: KObject | undefined, o: { kind: KindDeclaration; manager: string; now: number }) => ManagedFieldsEntry[];
interface Build { name: string; update: Update; kind: KindDeclaration }

async function load(name: string, root: URL): Promise<Build> {
  const mf = await import(new URL('src/patch/managed-fields.js', root).href) as { updateManagedFields: Update };
  const sa = await import(new URL('src/api/core/service-account.js', root).href) as { serviceAccountKind: KindDeclaration };
  return { name, update: mf.updateManagedFields, kind: sa.serviceAccountKind };
}

const serviceAccount = (i: number): KObject => ({
  apiVersion: 'v1', kind: 'ServiceAccount',
  metadata: { name: `sa-${i}`, namespace: 'bench', labels: { app: 'bench', tier: 'web' }, annotations: { 'bench.orch.io/sent': String(i) } },
  // a secret of its own, as the load clients' ServiceAccounts have: its key differs per object
  secrets: [{ name: `token-${i}` }], automountServiceAccountToken: false,
} as KObject);

/** µs per create and per update, over `writes` of each. */
function measure(b: Build): { create: number; update: number } {
  const now = 1_764_000_000_000;
  let created: ManagedFieldsEntry[] = [];
  let t = process.hrtime.bigint();
  for (let i = 0; i < writes; i++) created = b.update(serviceAccount(i), undefined, { kind: b.kind, manager: 'kubectl-create', now });
  const create = Number(process.hrtime.bigint() - t) / 1e3 / writes;
  const live = serviceAccount(0);
  live.metadata.managedFields = created;
  t = process.hrtime.bigint();
  for (let i = 0; i < writes; i++) {
    const next = serviceAccount(0);
    (next.metadata.labels as Record<string, string>).round = String(i % 7);
    b.update(next, live, { kind: b.kind, manager: 'kubectl-edit', now: now + i * 10 });
  }
  return { create, update: Number(process.hrtime.bigint() - t) / 1e3 / writes };
}

const builds = [await load('this build', new URL('../', import.meta.url))];
if (beforeDir) builds.push(await load('before', pathToFileURL(`${resolve(beforeDir, 'dist')}/`)));
for (const b of builds) measure(b); // warm-up: V8 compiles both builds' code before anything is timed
const samples = new Map(builds.map((b) => [b.name, { create: [] as number[], update: [] as number[] }]));
for (let r = 0; r < rounds; r++) {
  for (const b of r % 2 === 0 ? builds : [...builds].reverse()) {
    const m = measure(b);
    const s = samples.get(b.name) as { create: number[]; update: number[] };
    s.create.push(m.create);
    s.update.push(m.update);
  }
}
const report: Record<string, unknown> = { scenario: 'managed-fields', writes, rounds };
for (const [name, s] of samples) report[name] = { createUs: summarize(s.create), updateUs: summarize(s.update) };
if (beforeDir) {
  const median = (name: string, op: 'create' | 'update') => summarize((samples.get(name) as Record<string, number[]>)[op]).median;
  report.ratio = {
    create: +(median('this build', 'create') / median('before', 'create')).toFixed(2),
    update: +(median('this build', 'update') / median('before', 'update')).toFixed(2),
  };
}
console.log(JSON.stringify(report, null, 2));
