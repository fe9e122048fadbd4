// Lists of many ServiceAccounts: whole, and in pages (limit/continue). setup() fills the namespace
// with OBJECTS (default 10,000) ServiceAccounts labelled app=k6-list (idempotent: existing ones
// answer 409, which is expected); the lists select that label.
//
//   OBJECTS=10000 PAGE=500 VUS=4 DURATION=30s ORCH_URL=... ORCH_CERT=... ORCH_KEY=... k6/run.sh k6/list.js
//
// Thresholds: fewer than 1% failed requests, 99% of checks passing, p95 of one whole list under
// LIST_P95_MS (default 300) and of a full paged walk under PAGED_P95_MS (default 1000).
// ORCH_CLEANUP=1 deletes the filled objects in teardown().
import http from 'k6/http';
import { check, group } from 'k6';
import { Trend } from 'k6/metrics';
import { COLLECTION, ensureNamespace, params, serviceAccount, tlsOptions } from './lib/orch.js';

const OBJECTS = Number(__ENV.OBJECTS || 10000);
const PAGE = Number(__ENV.PAGE || 500);
const VUS = Number(__ENV.VUS || 4);
const DURATION = __ENV.DURATION || '30s';
const LIST_P95 = Number(__ENV.LIST_P95_MS || 300);
const PAGED_P95 = Number(__ENV.PAGED_P95_MS || 1000);

const pagedWalk = new Trend('list_paged_walk_duration', true);
const createdOrExists = http.expectedStatuses(201, 409);

export const options = Object.assign(tlsOptions(), {
  scenarios: {
    list: { executor: 'constant-vus', vus: VUS, duration: DURATION, gracefulStop: '30s' },
  },
  thresholds: {
    http_req_failed: ['rate<0.01'],
    checks: ['rate>0.99'],
    'http_req_duration{op:list}': [`p(95)<${LIST_P95}`],
    list_paged_walk_duration: [`p(95)<${PAGED_P95}`],
  },
  setupTimeout: '10m',
});

const name = (i) => `k6-list-${String(i).padStart(6, '0')}`;

export function setup() {
  ensureNamespace();
  // idempotent: objects from an earlier run answer 409, which is expected
  for (let from = 0; from < OBJECTS; from += 100) {
    const batch = [];
    for (let i = from; i < Math.min(OBJECTS, from + 100); i++) {
      batch.push(['POST', COLLECTION, serviceAccount(name(i), { app: 'k6-list' }), params('fill', { responseCallback: createdOrExists })]);
    }
    for (const r of http.batch(batch)) {
      if (r.status !== 201 && r.status !== 409) throw new Error(`fill: ${r.status} ${r.body}`);
    }
  }
  return {};
}

export default function () {
  group('one call', () => {
    const r = http.get(`${COLLECTION}?labelSelector=app%3Dk6-list`, params('list'));
    check(r, {
      'list is 200': (x) => x.status === 200,
      'list has every object': (x) => x.status === 200 && x.json('items.#') >= OBJECTS,
    });
  });
  group('paged', () => {
    const t0 = Date.now();
    let token = '';
    let total = 0;
    let ok = true;
    do {
      const r = http.get(`${COLLECTION}?labelSelector=app%3Dk6-list&limit=${PAGE}${token ? `&continue=${encodeURIComponent(token)}` : ''}`, params('page'));
      ok = check(r, { 'page is 200': (x) => x.status === 200 });
      if (!ok) break;
      total += r.json('items.#');
      token = r.json('metadata.continue') || '';
    } while (token);
    if (ok) {
      pagedWalk.add(Date.now() - t0);
      check(total, { 'pages hold every object': (n) => n >= OBJECTS });
    }
  });
}

export function teardown() {
  if (__ENV.ORCH_CLEANUP === '1') {
    const r = http.del(`${COLLECTION}?labelSelector=app%3Dk6-list`, null, params('cleanup'));
    check(r, { 'cleanup is 200': (x) => x.status === 200 });
  }
}
