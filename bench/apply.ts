/**
 * bench/apply: server-side applies per second on ServiceAccounts with 10 secrets each, beside
 * plain PUTs making the same change in the same run; prints the ratio.
 * Usage: node dist/bench/apply.js [--objects 200] [--rounds 5] [--concurrency 16]
 */
import { agentFor, call, flag, pool, startServer, summarize } from './support.js';

const objects = flag('objects', 200);
const rounds = flag('rounds', 5);
const concurrency = flag('concurrency', 16);

const server = await startServer({ args: ['--log-level', 'warn'] });
const agent = agentFor(server, concurrency);
const base = '/api/v1/namespaces/bench/serviceaccounts';
const secrets = (i: number) => Array.from({ length: 10 }, (_, j) => ({ name: `s-${i}-${j}` }));
try {
  await call(server, agent, 'POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: 'bench' } }));
  await pool(objects, concurrency, async (i) => {
    const r = await call(server, agent, 'POST', base, JSON.stringify({ metadata: { name: `put-${i}` }, secrets: secrets(i) }));
    if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`);
  });

  /** One round: every object gets the change `round`, `concurrency` requests at a time; returns requests/s. */
  const applyRound = async (round: number) => {
    const t = process.hrtime.bigint();
    await pool(objects, concurrency, async (i) => {
      const body = JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: `apply-${i}`, labels: { round: String(round) } }, secrets: secrets(i) });
      const r = await callPatch(`${base}/apply-${i}?fieldManager=bench`, body);
      if (r !== 200 && r !== 201) throw new Error(`apply: ${r}`);
    });
    return objects / (Number(process.hrtime.bigint() - t) / 1e9);
  };
  const putRound = async (round: number) => {
    const t = process.hrtime.bigint();
    await pool(objects, concurrency, async (i) => {
      const body = JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: `put-${i}`, labels: { round: String(round) } }, secrets: secrets(i) });
      const r = await call(server, agent, 'PUT', `${base}/put-${i}`, body);
      if (r.status !== 200) throw new Error(`put: ${r.status} ${r.text}`);
    });
    return objects / (Number(process.hrtime.bigint() - t) / 1e9);
  };
  async function callPatch(path: string, body: string): Promise<number> {
    const { request } = await import('node:https');
    return new Promise((resolve, reject) => {
      const req = request(`${server.url}${path}`, { method: 'PATCH', agent, headers: { 'content-type': 'application/apply-patch+yaml' } }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode ?? 0)); });
      req.on('error', reject);
      req.end(body);
    });
  }

  await applyRound(0); // creates the applied objects: not measured
  await putRound(0);
  const applies: number[] = [];
  const puts: number[] = [];
  for (let r = 1; r <= rounds; r++) {
    applies.push(await applyRound(r));
    puts.push(await putRound(r));
  }
  const a = summarize(applies);
  const p = summarize(puts);
  const report = {
    scenario: 'apply', objects, secretsPerObject: 10, concurrency, rounds,
    appliesPerSecond: a, putsPerSecond: p, ratioApplyToPut: +(a.median / p.median).toFixed(2),
  };
  console.log(JSON.stringify(report, null, 2));
  console.log(`apply ${objects} SAs x10 secrets, ${concurrency} clients: ${a.median.toFixed(0)} applies/s vs ${p.median.toFixed(0)} PUTs/s (ratio ${report.ratioApplyToPut})`);
} finally {
  agent.destroy();
  await server.dispose();
}
