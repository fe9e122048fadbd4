/**
 * bench/list: list N ServiceAccounts in one call and in pages of 500 (JSON), against a baseline
 * measured in the same run: the same N objects serialized by JSON.stringify in this process.
 * Usage: node dist/bench/list.js [--objects 10000] [--rounds 10]
 */
import { agentFor, call, flag, pool, rssMiB, startServer, summarize, timeRounds } from './support.js';

const objects = flag('objects', 10_000);
const rounds = flag('rounds', 10);
const pageSize = 500;

const server = await startServer({ args: ['--log-level', 'warn'] });
const agent = agentFor(server);
try {
  await call(server, agent, 'POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: 'bench' } }));
  const loadStart = Date.now();
  await pool(objects, 64, async (i) => {
    const body = JSON.stringify({
      metadata: { name: `sa-${String(i).padStart(6, '0')}`, labels: { app: 'bench', shard: String(i % 16) } },
      secrets: [{ name: `token-${i}` }],
    });
    const r = await call(server, agent, 'POST', '/api/v1/namespaces/bench/serviceaccounts', body);
    if (r.status !== 201) throw new Error(`create failed: ${r.status} ${r.text}`);
  });
  const loadSeconds = (Date.now() - loadStart) / 1000;

  let listBytes = 0;
  let listed = '';
  const whole = summarize(await timeRounds(rounds, 2, async () => {
    const r = await call(server, agent, 'GET', '/api/v1/namespaces/bench/serviceaccounts');
    listBytes = r.bytes;
    listed = r.text;
  }));
  const paged = summarize(await timeRounds(rounds, 1, async () => {
    let token = '';
    let total = 0;
    do {
      const r = await call(server, agent, 'GET', `/api/v1/namespaces/bench/serviceaccounts?limit=${pageSize}${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
      const page = JSON.parse(r.text) as { metadata: { continue?: string }; items: unknown[] };
      total += page.items.length;
      token = page.metadata.continue ?? '';
    } while (token);
    if (total < objects) throw new Error(`paged list returned ${total} of ${objects}`);
  }));

  // the baseline: serializing the same objects once, in-process, with no HTTP, TLS or storage
  const items = (JSON.parse(listed) as { items: unknown[] }).items;
  const baseline = summarize(await timeRounds(rounds, 2, () => { JSON.stringify({ kind: 'ServiceAccountList', apiVersion: 'v1', metadata: {}, items }); }));

  const rss = rssMiB(server.process.pid as number);
  const report = {
    scenario: 'list', objects, listMiB: +(listBytes / 1048576).toFixed(2), loadRate: Math.round(objects / loadSeconds),
    oneCallMs: whole, pagedMs: paged, baselineStringifyMs: baseline,
    ratioOneCallToBaseline: +(whole.median / baseline.median).toFixed(2),
    serverRssMiB: Math.round(rss),
  };
  console.log(JSON.stringify(report, null, 2));
  console.log(`list ${objects} SAs (${report.listMiB} MiB): one call ${whole.median.toFixed(1)} ms, pages of ${pageSize} ${paged.median.toFixed(1)} ms; JSON.stringify baseline ${baseline.median.toFixed(1)} ms; ratio ${report.ratioOneCallToBaseline}; server RSS ${report.serverRssMiB} MiB`);
} finally {
  agent.destroy();
  await server.dispose();
}
