/**
 * authz: GETs of one ServiceAccount per request by a user that is not in system:masters (so the
 * chain really decides), 64 in flight from a separate load process, against servers with RBAC and
 * 1,000 / 10,000 bindings of other subjects beside the reader's own. Baseline, in the same run
 * with the rounds interleaved: a server with AlwaysAllow. Then the decision latency after a
 * binding change: a RoleBinding for a new user is created, and that user GETs until allowed.
 */
import { Agent, request } from 'node:https';
import { userFor } from '../../test/support/certs.js';
import type { Credentials } from '../../test/support/server.js';
import { agentFor, call, pool } from '../support.js';
import {
  LoadProcess, cpuMsOf, fmt, measureRounds, one, percentiles, ratio, spread, startServer,
  type PhaseResult, type Ratio, type Scenario, type TestServer,
} from '../harness.js';

const namespace = 'authz';
const rbacGroup = 'rbac.authorization.k8s.io';

function binding(i: number): string {
  // other users and groups, half of them bound cluster-wide: what the index must see past
  const subject = i % 3 === 0 ? { kind: 'Group', name: `team-${i}`, apiGroup: rbacGroup } : { kind: 'User', name: `user-${i}`, apiGroup: rbacGroup };
  return JSON.stringify({
    metadata: { name: `noise-${i}` },
    roleRef: { apiGroup: rbacGroup, kind: 'ClusterRole', name: i % 2 === 0 ? 'view' : 'edit' },
    subjects: [subject],
  });
}

async function bindNoise(server: TestServer, count: number): Promise<void> {
  const agent = agentFor(server, 64);
  try {
    await pool(count, 64, async (i) => {
      const namespaced = i % 2 === 0;
      const path = namespaced ? `/apis/${rbacGroup}/v1/namespaces/${namespace}/rolebindings` : `/apis/${rbacGroup}/v1/clusterrolebindings`;
      const res = await call(server, agent, 'POST', path, binding(i));
      if (res.status !== 201) throw new Error(`binding ${i}: ${res.status} ${res.text}`);
    });
  } finally {
    agent.destroy();
  }
}

function get(agent: Agent, server: TestServer, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, { agent }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode ?? 0)); });
    req.on('error', reject);
    req.end();
  });
}

/** ms from a binding's acknowledgement to its subject's first allowed GET, and the GETs it took */
async function decisionLatency(server: TestServer, samples: number): Promise<{ ms: number[]; attempts: number[] }> {
  const admin = agentFor(server, 4);
  const ms: number[] = [];
  const attempts: number[] = [];
  try {
    for (let i = 0; i < samples; i++) {
      const user = `late-${i}`;
      const creds: Credentials = userFor(server, user);
      const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: creds.ca, cert: creds.cert, key: creds.key });
      try {
        const path = `/api/v1/namespaces/${namespace}/serviceaccounts/sa-000000`;
        if (await get(agent, server, path) !== 403) throw new Error(`${user} was allowed before its binding`);
        const res = await call(server, admin, 'POST', `/apis/${rbacGroup}/v1/namespaces/${namespace}/rolebindings`, JSON.stringify({
          metadata: { name: user }, roleRef: { apiGroup: rbacGroup, kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'User', name: user, apiGroup: rbacGroup }],
        }));
        if (res.status !== 201) throw new Error(`binding ${user}: ${res.status}`);
        const acked = performance.now();
        let tries = 1;
        while (await get(agent, server, path) !== 200) tries++;
        ms.push(performance.now() - acked);
        attempts.push(tries);
      } finally {
        agent.destroy();
      }
    }
  } finally {
    admin.destroy();
  }
  return { ms, attempts };
}

export const scenario: Scenario = {
  name: 'authz',
  description: 'GETs of a ServiceAccount by a non-admin user, 64 in flight from a separate load process, with RBAC and 1,000 / 10,000 bindings of other subjects; baseline: AlwaysAllow in the same rounds. Then ms from a RoleBinding\'s acknowledgement to its user\'s first allowed GET.',
  defaults: { concurrency: [64], ops: [4000], rounds: [3], warmup: [1], procs: [1], bindings: [1000, 10000], samples: [30] },
  smoke: { concurrency: [8], ops: [100], rounds: [1], warmup: [1], procs: [1], bindings: [100], samples: [3] },
  help: { concurrency: 'requests in flight', ops: 'GETs per server per round', rounds: 'measured rounds', warmup: 'unmeasured rounds first', procs: 'load processes', bindings: 'RBAC bindings of other subjects (one server each)', samples: 'binding changes timed' },
  async run(ctx) {
    const concurrency = one(ctx.sizes, 'concurrency');
    const count = one(ctx.sizes, 'ops');
    const rounds = one(ctx.sizes, 'rounds');
    const warmup = one(ctx.sizes, 'warmup');
    const procs = one(ctx.sizes, 'procs');
    const samples = one(ctx.sizes, 'samples');
    const sizes = ctx.sizes.bindings;
    const labels = ['AlwaysAllow', ...sizes.map((n) => `RBAC, ${n} bindings`)];
    const servers: TestServer[] = [];
    const loads: LoadProcess[] = [];
    try {
      servers.push(await startServer({ args: ['--log-level', 'warn'] }));
      for (const _ of sizes) servers.push(await startServer({ args: ['--log-level', 'warn', '--authorization-mode', 'Node,RBAC'] }));
      for (const server of servers) {
        const agent = agentFor(server, 1);
        const created = await call(server, agent, 'POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: namespace } }));
        agent.destroy();
        if (created.status !== 201) throw new Error(`namespace: ${created.status} ${created.text}`);
      }
      for (const [i, n] of sizes.entries()) {
        const server = servers[i + 1];
        const agent = agentFor(server, 1);
        const own = await call(server, agent, 'POST', `/apis/${rbacGroup}/v1/namespaces/${namespace}/rolebindings`, JSON.stringify({
          metadata: { name: 'readers' }, roleRef: { apiGroup: rbacGroup, kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'Group', name: 'readers', apiGroup: rbacGroup }],
        }));
        agent.destroy();
        if (own.status !== 201) throw new Error(`reader binding: ${own.status} ${own.text}`);
        const started = performance.now();
        await bindNoise(server, n);
        ctx.log(`authz: ${n} bindings created in ${fmt((performance.now() - started) / 1000)} s`);
      }
      for (const server of servers) {
        const adminLoad = await LoadProcess.start(server.url, server.admin, 1);
        await adminLoad.fill(namespace, 'sa', 0, count);
        await adminLoad.close();
        loads.push(await LoadProcess.start(server.url, userFor(server, 'reader', ['readers']), procs));
      }

      const measured = await measureRounds(rounds, warmup, async (r, warm) => {
        const out: { phase: PhaseResult; cpuUsPerRequest: number }[] = [];
        // interleaved, so drift on a noisy machine hits every server alike; the server's CPU time
        // per request is the figure load from other processes disturbs least
        for (const [i, load] of loads.entries()) {
          const pid = servers[i].process.pid as number;
          const cpuBefore = cpuMsOf(pid);
          const phase = await load.run({ op: 'get', namespace, prefix: 'sa', from: 0, count, concurrency, expect: [200] });
          out.push({ phase, cpuUsPerRequest: ((cpuMsOf(pid) - cpuBefore) * 1000) / count });
        }
        if (!warm) ctx.log(`authz round ${r + 1}/${rounds}: ${labels.map((l, i) => `${l} ${fmt(out[i].phase.requestsPerSec)}/s ${fmt(out[i].cpuUsPerRequest)} µs CPU`).join(', ')}`);
        return out;
      });
      const cells = labels.map((_, i) => ({
        requestsPerSec: spread(measured.map((m) => m[i].phase.requestsPerSec)),
        p99Ms: spread(measured.map((m) => m[i].phase.latencyMs.p99)),
        cpuUsPerRequest: spread(measured.map((m) => m[i].cpuUsPerRequest)),
      }));
      const latency = await decisionLatency(servers[servers.length - 1], samples);
      const lat = percentiles(latency.ms);
      const ratios: Ratio[] = sizes.flatMap((n, i) => [
        ratio(`GET requests/s with RBAC and ${n} bindings vs AlwaysAllow`, cells[i + 1].requestsPerSec.median, cells[0].requestsPerSec.median, 'higher'),
        ratio(`server CPU per GET with RBAC and ${n} bindings vs AlwaysAllow`, cells[i + 1].cpuUsPerRequest.median, cells[0].cpuUsPerRequest.median, 'lower'),
      ]);
      return {
        lines: [
          `authz c=${concurrency}: ${labels.map((l, i) => `${l} ${fmt(cells[i].requestsPerSec.median)}/s`).join('; ')}`,
          `authz: binding acknowledged → first allowed GET p50 ${fmt(lat.p50)} ms, p99 ${fmt(lat.p99)} ms (${Math.max(...latency.attempts)} GET(s) at most)`,
        ],
        ratios,
        tables: [{
          title: `GET one ServiceAccount as a user bound through a group, ${concurrency} in flight: median of ${rounds} rounds of ${count} requests; ± is the spread (max-min)/median`,
          columns: ['authorization', 'req/s', 'spread', 'p99 ms', 'server CPU µs/GET', 'req/s ratio to AlwaysAllow', 'CPU ratio to AlwaysAllow'],
          rows: labels.map((l, i) => [l, fmt(cells[i].requestsPerSec.median), `±${fmt(cells[i].requestsPerSec.spreadPct)}%`, fmt(cells[i].p99Ms.median),
            fmt(cells[i].cpuUsPerRequest.median), fmt(cells[i].requestsPerSec.median / cells[0].requestsPerSec.median), fmt(cells[i].cpuUsPerRequest.median / cells[0].cpuUsPerRequest.median)]),
        }, {
          title: `A RoleBinding for a new user with ${sizes[sizes.length - 1]} other bindings: from its 201 to the user's first 200, ${samples} samples`,
          columns: ['p50 ms', 'p99 ms', 'max ms', 'GETs needed (max)'],
          rows: [[fmt(lat.p50), fmt(lat.p99), fmt(lat.max), Math.max(...latency.attempts)]],
        }],
        charts: [{
          id: 'authz-throughput', title: `GETs/s by authorization, ${concurrency} in flight`, kind: 'bar', xLabel: 'authorization', yLabel: 'requests/s',
          categories: labels, series: [{ name: 'requests/s', color: '#1f77b4', values: cells.map((c) => c.requestsPerSec.median) }],
        }],
        budget: sizes.map((n, i) => {
          // CPU per request: throughput on a shared machine moves with whoever else runs
          const cost = cells[i + 1].cpuUsPerRequest.median / cells[0].cpuUsPerRequest.median - 1;
          return { what: `RBAC cost (server CPU per GET) with ${n} bindings`, target: '< 10%', measured: `${fmt(cost * 100)}%`, within: cost < 0.1 };
        }),
        figures: { concurrency, count, rounds, warmup, procs, labels, cells, decisionLatencyMs: lat, attempts: latency.attempts },
      };
    } finally {
      for (const load of loads) await load.close();
      for (const server of servers) await server.dispose();
    }
  },
};
