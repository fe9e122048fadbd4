// Long-lived watches over WebSocket while another scenario writes. WATCHERS VUs each hold one
// watch (wss://.../api/v1/namespaces/NS/serviceaccounts?watch=true; the server sends one JSON
// watch event per text message) for DURATION; the `writer` scenario starts after WARMUP and
// creates RATE ServiceAccounts per second, each stamped with the time it was sent, so watchers
// measure send-to-receipt delay on one event in SAMPLE.
//
//   WATCHERS=500 RATE=20 DURATION=60s ORCH_URL=... ORCH_CERT=... ORCH_KEY=... k6/run.sh k6/watch.js
//
// Thresholds: no watch errors (handshake failures, socket errors, ERROR events), 99% of checks
// passing, fewer than 1% failed writes, watch_events at least EVENTS_FRACTION (default 0.9) of
// WATCHERS x writes, and p99 of the delay under DELAY_P99_MS (default 1000).
// teardown() deletes what the writer created unless ORCH_KEEP=1.
import http from 'k6/http';
import ws from 'k6/ws';
import { check } from 'k6';
import exec from 'k6/execution';
import { Counter, Trend } from 'k6/metrics';
import { COLLECTION, NAMESPACE, WS_BASE, authHeaders, durationMs, ensureNamespace, params, runId, serviceAccount, tlsOptions } from './lib/orch.js';

const WATCHERS = Number(__ENV.WATCHERS || 100);
const RATE = Number(__ENV.RATE || 20);
const DURATION = __ENV.DURATION || '60s';
const WARMUP = __ENV.WARMUP || '10s';
const SAMPLE = Number(__ENV.SAMPLE || 10);
const EVENTS_FRACTION = Number(__ENV.EVENTS_FRACTION || 0.9);
const DELAY_P99 = Number(__ENV.DELAY_P99_MS || 1000);

const holdMs = durationMs(DURATION);
const warmupMs = durationMs(WARMUP);
// the writer stops 5 s before the watches close, so its last events are counted
const writeSeconds = Math.floor((holdMs - warmupMs) / 1000) - 5;
if (writeSeconds < 1) throw new Error(`DURATION (${DURATION}) must be at least WARMUP (${WARMUP}) + 6s`);
const expectedEvents = Math.floor(WATCHERS * RATE * writeSeconds * EVENTS_FRACTION);

const watchEvents = new Counter('watch_events');
const watchErrors = new Counter('watch_errors');
const watchDelay = new Trend('watch_event_delay', true);

export const options = Object.assign(tlsOptions(), {
  scenarios: {
    watchers: {
      executor: 'per-vu-iterations', exec: 'watch', vus: WATCHERS, iterations: 1,
      maxDuration: `${Math.ceil(holdMs / 1000) + 30}s`, gracefulStop: '10s',
    },
    writer: {
      executor: 'constant-arrival-rate', exec: 'write', rate: RATE, timeUnit: '1s', duration: `${writeSeconds}s`,
      startTime: WARMUP, preAllocatedVUs: Math.max(2, Math.ceil(RATE / 10)), maxVUs: Math.max(10, RATE),
    },
  },
  thresholds: {
    watch_errors: ['count==0'],
    watch_events: [`count>=${expectedEvents}`],
    watch_event_delay: [`p(99)<${DELAY_P99}`],
    checks: ['rate>0.99'],
    'http_req_failed{op:create}': ['rate<0.01'],
  },
  setupTimeout: '60s',
});

export function setup() {
  ensureNamespace();
  // watch from the current revision: only the writer's events, no synthetic ADDED for what exists
  const list = http.get(`${COLLECTION}?limit=1`, params('setup'));
  if (list.status !== 200) throw new Error(`list: ${list.status} ${list.body}`);
  return { run: runId(), resourceVersion: list.json('metadata.resourceVersion') };
}

export function watch(data) {
  const url = `${WS_BASE}/api/v1/namespaces/${NAMESPACE}/serviceaccounts?watch=true&resourceVersion=${data.resourceVersion}`;
  let seen = 0;
  let errored = false;
  const failed = (what) => {
    if (!errored) watchErrors.add(1);
    errored = true;
    console.error(`watch ${exec.vu.idInTest}: ${what}`);
  };
  let res;
  try {
    res = ws.connect(url, { headers: authHeaders(), tags: { op: 'watch' } }, (socket) => {
      socket.on('message', (message) => {
        watchEvents.add(1);
        // an ERROR event (e.g. 410 Gone) ends a watch; found without parsing every event
        if (message.startsWith('{"type":"ERROR"')) failed(message);
        if (++seen % SAMPLE === 0) {
          const meta = (JSON.parse(message).object || {}).metadata || {};
          const sent = Number((meta.annotations || {})['k6.orch.io/sent']);
          if (sent) watchDelay.add(Date.now() - sent);
        }
      });
      socket.on('error', (e) => failed(e && e.error ? e.error() : String(e)));
      socket.setTimeout(() => socket.close(), holdMs);
    });
  } catch (e) {
    // k6/ws throws when the handshake fails (after calling the error handler)
    failed(String(e));
  }
  if (!check(res, { 'watch upgraded (101)': (r) => Boolean(r) && r.status === 101 })) failed(`handshake answered ${res ? res.status : 'nothing'}`);
}

export function write(data) {
  const name = `k6-w-${data.run}-${exec.scenario.iterationInTest}`;
  const r = http.post(COLLECTION, serviceAccount(name, { run: data.run }, { 'k6.orch.io/sent': String(Date.now()) }), params('create'));
  check(r, { 'create is 201': (x) => x.status === 201 });
}

export function teardown(data) {
  if (__ENV.ORCH_KEEP === '1') return;
  const r = http.del(`${COLLECTION}?labelSelector=run%3D${data.run}`, null, params('cleanup'));
  check(r, { 'cleanup is 200': (x) => x.status === 200 });
}
