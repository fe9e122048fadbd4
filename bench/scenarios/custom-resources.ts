/**
 * custom-resources: creates/s and GET/s of a custom resource whose CRD declares a 20-field schema
 * and 3 CEL rules, against ServiceAccounts in the same run and the same load process (the
 * baseline); and the cost of many definitions: registering CRDs one after another, then the
 * aggregated discovery document and the OpenAPI v3 index and one group-version document.
 */
import { agentFor, call } from '../support.js';
import { established, widgetCrd } from '../widget-crd.js';
import { LoadProcess, fmt, measureRounds, one, ratio, spread, startServer, type Ratio, type Scenario, type Table } from '../harness.js';

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

export const scenario: Scenario = {
  name: 'custom-resources',
  description: 'A custom resource with a 20-field schema and 3 CEL rules against ServiceAccounts: creates/s and GET/s from a separate load process; then registering many CRDs and reading discovery and OpenAPI after them.',
  defaults: { ops: [2000], concurrency: [16], rounds: [2], warmup: [1], crds: [200] },
  smoke: { ops: [50], concurrency: [4], rounds: [1], warmup: [0], crds: [5] },
  help: { ops: 'objects created then read per kind per round', concurrency: 'requests in flight', rounds: 'measured rounds', warmup: 'unmeasured rounds first', crds: 'CRDs registered for the discovery/OpenAPI part' },
  async run(ctx) {
    const count = one(ctx.sizes, 'ops');
    const c = one(ctx.sizes, 'concurrency');
    const rounds = one(ctx.sizes, 'rounds');
    const warmup = one(ctx.sizes, 'warmup');
    const crds = one(ctx.sizes, 'crds');
    const server = await startServer({ args: ['--log-level', 'warn'] });
    let load: LoadProcess | undefined;
    const agent = agentFor(server, 4);
    try {
      if ((await call(server, agent, 'POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: 'cr' } }))).status !== 201) throw new Error('namespace');
      const created = await call(server, agent, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', widgetCrd('bench.example.com', 'widgets', 'Widget'));
      if (created.status !== 201) throw new Error(`CRD: ${created.status} ${created.text}`);
      await established(server, agent, 'widgets.bench.example.com');
      load = await LoadProcess.start(server.url, server.admin, 1);
      const kinds = ['ServiceAccount', 'Widget'] as const;
      const measured = await measureRounds(rounds, warmup, async (r, warm) => {
        const out: Record<string, { create: number; get: number }> = {};
        for (const object of kinds) {
          const prefix = `${object.toLowerCase()}-${warm ? `w${-r}` : `r${r}`}`;
          const create = await load!.run({ op: 'create', object, namespace: 'cr', prefix, from: 0, count, concurrency: c, expect: [201] });
          const get = await load!.run({ op: 'get', object, namespace: 'cr', prefix, from: 0, count, concurrency: c, expect: [200] });
          out[object] = { create: create.requestsPerSec, get: get.requestsPerSec };
        }
        if (!warm) ctx.log(`round ${r + 1}: ${kinds.map((k) => `${k} create ${fmt(out[k].create)}/s get ${fmt(out[k].get)}/s`).join('; ')}`);
        return out;
      });
      const med = (k: string, op: 'create' | 'get') => spread(measured.map((m) => m[k][op])).median;

      // many definitions: registered one after another, each waited for, then the documents read
      const registerMs = await timed(async () => {
        for (let i = 0; i < crds; i++) {
          const group = `g${i}.bench.example.com`;
          const r = await call(server, agent, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', widgetCrd(group, 'things', `Thing${i}`));
          if (r.status !== 201) throw new Error(`CRD ${i}: ${r.status} ${r.text}`);
        }
        await established(server, agent, `things.g${crds - 1}.bench.example.com`);
      });
      const aggregated = () => new Promise<void>((resolve, reject) => {
        import('node:https').then(({ request }) => {
          const req = request(`${server.url}/apis`, { agent, headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } }, (res) => { res.resume(); res.on('end', resolve); });
          req.on('error', reject);
          req.end();
        }, reject);
      });
      const discoveryFirstMs = await timed(aggregated);
      const discoveryAgainMs = await timed(aggregated);
      const openapiIndexMs = await timed(() => call(server, agent, 'GET', '/openapi/v3'));
      const openapiGroupMs = await timed(() => call(server, agent, 'GET', `/openapi/v3/apis/g${crds - 1}.bench.example.com/v1`));
      const openapiV2Ms = await timed(() => call(server, agent, 'GET', '/openapi/v2'));

      const ratios: Ratio[] = [
        ratio(`custom resource creates/s vs ServiceAccount, c${c}`, med('Widget', 'create'), med('ServiceAccount', 'create'), 'higher'),
        ratio(`custom resource GET/s vs ServiceAccount, c${c}`, med('Widget', 'get'), med('ServiceAccount', 'get'), 'higher'),
      ];
      const tables: Table[] = [
        {
          title: `requests/s, median of ${rounds} round(s) of ${count} objects at concurrency ${c}`,
          columns: ['object', 'creates/s', 'GET/s'],
          rows: kinds.map((k) => [k, fmt(med(k, 'create')), fmt(med(k, 'get'))]),
        },
        {
          title: `${crds} CRDs registered one after another, then discovery and OpenAPI (ms)`,
          columns: ['register all', 'aggregated discovery (first)', 'again (cached)', 'OpenAPI v3 index', 'OpenAPI v3 one group', 'OpenAPI v2'],
          rows: [[fmt(registerMs), fmt(discoveryFirstMs), fmt(discoveryAgainMs), fmt(openapiIndexMs), fmt(openapiGroupMs), fmt(openapiV2Ms)]],
        },
      ];
      const lines = [
        `Widget (20 fields, 3 CEL rules): create ${fmt(med('Widget', 'create'))}/s, GET ${fmt(med('Widget', 'get'))}/s; ServiceAccount: create ${fmt(med('ServiceAccount', 'create'))}/s, GET ${fmt(med('ServiceAccount', 'get'))}/s (c${c})`,
        `${crds} CRDs registered in ${fmt(registerMs)} ms; aggregated discovery ${fmt(discoveryFirstMs)} ms then ${fmt(discoveryAgainMs)} ms; OpenAPI v3 index ${fmt(openapiIndexMs)} ms, a group ${fmt(openapiGroupMs)} ms; v2 ${fmt(openapiV2Ms)} ms`,
      ];
      return { lines, ratios, tables, charts: [], budget: [], figures: { measured, registerMs, discoveryFirstMs, discoveryAgainMs, openapiIndexMs, openapiGroupMs, openapiV2Ms } };
    } finally {
      agent.destroy();
      await load?.close();
      await server.dispose();
    }
  },
};
