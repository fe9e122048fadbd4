// CRUD load on ServiceAccounts: each iteration creates one, gets it, replaces it (PUT) and deletes
// it, every request tagged with its verb so the thresholds hold per verb.
//
//   VUS=64 DURATION=60s ORCH_URL=https://127.0.0.1:6443 \
//   ORCH_CERT=$PWD/data/pki/admin.crt ORCH_KEY=$PWD/data/pki/admin.key ORCH_CA=$PWD/data/pki/ca.crt \
//   k6/run.sh k6/crud.js
//
// Thresholds (override with env): fewer than 1% failed requests, 99% of checks passing, p99 of
// writes under P99_WRITE_MS (default 500) and of gets under P99_READ_MS (default 200).
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';
import { COLLECTION, ensureNamespace, params, runId, serviceAccount, tlsOptions } from './lib/orch.js';

const VUS = Number(__ENV.VUS || 16);
const DURATION = __ENV.DURATION || '30s';
const P99_WRITE = Number(__ENV.P99_WRITE_MS || 500);
const P99_READ = Number(__ENV.P99_READ_MS || 200);

export const options = Object.assign(tlsOptions(), {
  scenarios: {
    crud: { executor: 'constant-vus', vus: VUS, duration: DURATION, gracefulStop: '10s' },
  },
  thresholds: {
    http_req_failed: ['rate<0.01'],
    checks: ['rate>0.99'],
    'http_req_duration{op:create}': [`p(99)<${P99_WRITE}`],
    'http_req_duration{op:get}': [`p(99)<${P99_READ}`],
    'http_req_duration{op:update}': [`p(99)<${P99_WRITE}`],
    'http_req_duration{op:delete}': [`p(99)<${P99_WRITE}`],
  },
  setupTimeout: '60s',
});

export function setup() {
  ensureNamespace();
  return { run: runId() };
}

export default function (data) {
  const name = `k6-${data.run}-${exec.vu.idInTest}-${exec.vu.iterationInScenario}`;
  const one = `${COLLECTION}/${name}`;
  const created = http.post(COLLECTION, serviceAccount(name, { run: data.run }), params('create'));
  if (!check(created, { 'create is 201': (r) => r.status === 201 })) return;
  const got = http.get(one, params('get'));
  check(got, { 'get is 200': (r) => r.status === 200 });
  const updated = http.put(one, serviceAccount(name, { run: data.run, rev: '2' }), params('update'));
  check(updated, { 'update is 200': (r) => r.status === 200 });
  const deleted = http.del(one, null, params('delete'));
  check(deleted, { 'delete is 200': (r) => r.status === 200 });
}
