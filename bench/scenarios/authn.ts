/**
 * authn: authenticated GETs of one ServiceAccount per request, 64 in flight, from a separate load
 * process, once per authentication method: a client certificate, a static token-file token, a
 * service-account token (TokenRequest), an OIDC token from an HTTPS issuer on loopback, and a
 * token webhook's token (answered from the webhook cache after its first use). Baseline, in the
 * same run with the same rounds interleaved: the client certificate, the only method main has.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OidcIssuer } from '../../test/support/oidc-issuer.js';
import { ReviewWebhook } from '../../test/support/review-webhook.js';
import { agentFor, call } from '../support.js';
import {
  LoadProcess, fmt, measureRounds, one, ratio, spread, startServer,
  type PhaseResult, type Ratio, type Scenario, type Spread,
} from '../harness.js';
import type { ChartSpec } from '../report/chart.js';

const methods = ['client certificate', 'static token', 'service-account token', 'OIDC token', 'webhook token (cached)'] as const;
type Method = (typeof methods)[number];

interface Cell { requestsPerSec: Spread; p50Ms: Spread; p99Ms: Spread }

export const scenario: Scenario = {
  name: 'authn',
  description: 'Authenticated GETs of ServiceAccounts, 64 in flight from a separate load process, per authentication method (client certificate, static token, service-account token, OIDC token from an HTTPS issuer on loopback, webhook token answered from the cache); baseline: the client certificate, main\'s only method, in the same rounds.',
  defaults: { concurrency: [64], ops: [4000], rounds: [3], warmup: [1], procs: [1] },
  smoke: { concurrency: [8], ops: [100], rounds: [1], warmup: [1], procs: [1] },
  help: { concurrency: 'requests in flight', ops: 'GETs per method per round', rounds: 'measured rounds', warmup: 'unmeasured rounds first', procs: 'load processes' },
  async run(ctx) {
    const concurrency = one(ctx.sizes, 'concurrency');
    const count = one(ctx.sizes, 'ops');
    const rounds = one(ctx.sizes, 'rounds');
    const warmup = one(ctx.sizes, 'warmup');
    const procs = one(ctx.sizes, 'procs');
    const work = mkdtempSync(join(tmpdir(), 'orch-bench-authn-'));
    const issuer = await new OidcIssuer('bench-idp').start();
    await issuer.addKey('k1');
    const webhook = await new ReviewWebhook('bench-webhook', (review) => (review.spec.token === 'bench-webhook-token'
      ? { authenticated: true, user: { username: 'webhook-user', groups: ['wh'] } }
      : { authenticated: false })).start();
    webhook.writeKubeconfig(join(work, 'webhook.kubeconfig'));
    writeFileSync(join(work, 'tokens.csv'), 'bench-static-token-0123456789,static-user,u1,bench\n');
    writeFileSync(join(work, 'idp-ca.crt'), issuer.ca.pem);
    const server = await startServer({
      args: [
        '--log-level', 'warn', '--token-auth-file', join(work, 'tokens.csv'),
        `--oidc-issuer-url=${issuer.url}`, '--oidc-client-id=bench', `--oidc-ca-file=${join(work, 'idp-ca.crt')}`,
        `--authentication-token-webhook-config-file=${join(work, 'webhook.kubeconfig')}`,
      ],
    });
    const loads = new Map<Method, LoadProcess>();
    try {
      const agent = agentFor(server, 4);
      const ns = await call(server, agent, 'POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: 'authn' } }));
      const sa = await call(server, agent, 'POST', '/api/v1/namespaces/authn/serviceaccounts', JSON.stringify({ metadata: { name: 'bench' } }));
      const issued = await call(server, agent, 'POST', '/api/v1/namespaces/authn/serviceaccounts/bench/token', JSON.stringify({ apiVersion: 'authentication.orch.io/v1', kind: 'TokenRequest', spec: {} }));
      agent.destroy();
      if (ns.status !== 201 || sa.status !== 201 || issued.status !== 201) throw new Error(`setup: ${ns.status} ${sa.status} ${issued.status} ${issued.text}`);
      const tokens: Record<Exclude<Method, 'client certificate'>, string> = {
        'static token': 'bench-static-token-0123456789',
        'service-account token': (JSON.parse(issued.text) as { status: { token: string } }).status.token,
        'OIDC token': await issuer.sign({ sub: 'bench', aud: 'bench' }),
        'webhook token (cached)': 'bench-webhook-token',
      };
      const noCert = { ca: server.admin.ca, cert: '', key: '' };
      for (const method of methods) {
        loads.set(method, method === 'client certificate'
          ? await LoadProcess.start(server.url, server.admin, procs)
          : await LoadProcess.start(server.url, noCert, procs, { authorization: `Bearer ${tokens[method]}` }));
      }
      const admin = loads.get('client certificate') as LoadProcess;
      await admin.fill('authn', 'sa', 0, count);

      const measured = await measureRounds(rounds, warmup, async (r, warm) => {
        const out = {} as Record<Method, PhaseResult>;
        // interleaved, so drift on a noisy machine hits every method alike
        for (const method of methods) {
          out[method] = await (loads.get(method) as LoadProcess).run({ op: 'get', namespace: 'authn', prefix: 'sa', from: 0, count, concurrency, expect: [200] });
        }
        if (!warm) ctx.log(`authn round ${r + 1}/${rounds}: ${methods.map((m) => `${m} ${fmt(out[m].requestsPerSec)}/s`).join(', ')}`);
        return out;
      });
      const cells = Object.fromEntries(methods.map((m) => [m, {
        requestsPerSec: spread(measured.map((x) => x[m].requestsPerSec)),
        p50Ms: spread(measured.map((x) => x[m].latencyMs.p50)),
        p99Ms: spread(measured.map((x) => x[m].latencyMs.p99)),
      }])) as Record<Method, Cell>;
      const cert = cells['client certificate'];
      const ratios: Ratio[] = methods.slice(1).map((m) => ratio(`${m} GET requests/s vs client certificate`, cells[m].requestsPerSec.median, cert.requestsPerSec.median, 'higher'));
      const rows = methods.map((m) => [m, fmt(cells[m].requestsPerSec.median), `±${fmt(cells[m].requestsPerSec.spreadPct)}%`, fmt(cells[m].p50Ms.median), fmt(cells[m].p99Ms.median),
        fmt(cells[m].requestsPerSec.median / cert.requestsPerSec.median)]);
      const charts: ChartSpec[] = [{
        id: 'authn-throughput', title: `Authenticated GETs/s by method, ${concurrency} in flight`, kind: 'bar', xLabel: 'method', yLabel: 'requests/s',
        categories: [...methods], series: [{ name: 'requests/s', color: '#1f77b4', values: methods.map((m) => cells[m].requestsPerSec.median) }],
      }];
      return {
        lines: [`authn c=${concurrency}: ${methods.map((m) => `${m} ${fmt(cells[m].requestsPerSec.median)}/s p99 ${fmt(cells[m].p99Ms.median)} ms`).join('; ')}`],
        ratios,
        tables: [{
          title: `GET one ServiceAccount, ${concurrency} in flight: median of ${rounds} rounds of ${count} requests per method after ${warmup} warm-up round(s); ± is the spread (max-min)/median`,
          columns: ['method', 'req/s', 'spread', 'p50 ms', 'p99 ms', 'ratio to client certificate'],
          rows,
        }],
        charts,
        budget: [],
        figures: { concurrency, countPerMethod: count, rounds, warmup, procs, byMethod: cells },
      };
    } finally {
      for (const load of loads.values()) await load.close();
      await server.dispose();
      await issuer.stop();
      await webhook.stop();
      rmSync(work, { recursive: true, force: true });
    }
  },
};
