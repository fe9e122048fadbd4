/**
 * GET /metrics, parsed strictly (test/support/prometheus-text.ts): Kubernetes 1.32's metric
 * names, types, help and buckets, request counts by verb/scope/code measured between two scrapes,
 * long-running watches, stored objects, watch events, storage request durations, priority and
 * fairness, TLS handshake errors and prom-client's process metrics.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createNamespace, expectStatus, sleep } from '../support/api.js';
import { userFor } from '../support/certs.js';
import { parsePrometheusText, sampleValue, type Family } from '../support/prometheus-text.js';
import { h1Stream } from '../support/streams.js';
import { request, startServer, type Credentials, type TestServer } from '../support/server.js';

const latencyBuckets = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60, Infinity];

describe('/metrics', () => {
  let server: TestServer;
  let jane: Credentials;
  before(async () => {
    server = await startServer();
    jane = userFor(server, 'jane', ['dev']);
  });
  after(async () => { await server?.dispose(); });

  async function scrape(): Promise<Map<string, Family>> {
    const res = await request(server, '/metrics');
    expectStatus(res, 200, 'metrics');
    assert.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    return parsePrometheusText(res.body);
  }

  const count = (m: Map<string, Family>, labels: Record<string, string>) => {
    try { return sampleValue(m, 'apiserver_request_total', 'apiserver_request_total', labels); } catch { return 0; }
  };

  it('names, types, help and buckets as Kubernetes 1.32', async () => {
    expectStatus(await request(server, '/api/v1/namespaces'), 200, 'a list, for a response size');
    const m = await scrape();
    const expected: Array<[string, Family['type'], string]> = [
      ['apiserver_request_total', 'counter', '[STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.'],
      ['apiserver_request_duration_seconds', 'histogram', '[STABLE] Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.'],
      ['apiserver_response_sizes', 'histogram', '[STABLE] Response size distribution in bytes for each group, version, verb, resource, subresource, scope and component.'],
      ['apiserver_current_inflight_requests', 'gauge', '[STABLE] Maximal number of currently used inflight request limit of this apiserver per request kind in last second.'],
      ['apiserver_longrunning_requests', 'gauge', '[STABLE] Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.'],
      ['apiserver_requested_deprecated_apis', 'gauge', '[STABLE] Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.'],
      ['apiserver_storage_objects', 'gauge', '[STABLE] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.'],
      ['apiserver_watch_events_total', 'counter', '[ALPHA] Number of events sent in watch clients'],
      ['apiserver_watch_events_sizes', 'histogram', '[ALPHA] Watch event size distribution in bytes'],
      ['orch_watch_encoder_pool_utilization', 'gauge', '[ALPHA] Share of the watch encoder pool threads\' time spent encoding since the server started (0 to 1)'],
      ['apiserver_flowcontrol_dispatched_requests_total', 'counter', '[BETA] Number of requests executed by API Priority and Fairness subsystem'],
      ['apiserver_flowcontrol_rejected_requests_total', 'counter', '[BETA] Number of requests rejected by API Priority and Fairness subsystem'],
      ['apiserver_flowcontrol_current_inqueue_requests', 'gauge', '[BETA] Number of requests currently pending in queues of the API Priority and Fairness subsystem'],
      ['apiserver_flowcontrol_current_executing_requests', 'gauge', '[BETA] Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem'],
      ['apiserver_flowcontrol_nominal_limit_seats', 'gauge', '[BETA] Nominal number of execution seats configured for each priority level'],
      ['apiserver_flowcontrol_current_limit_seats', 'gauge', '[ALPHA] current derived number of execution seats available to each priority level'],
      ['apiserver_flowcontrol_request_wait_duration_seconds', 'histogram', '[BETA] Length of time a request spent waiting in its queue'],
      ['apiserver_flowcontrol_priority_level_seat_utilization', 'histogram', '[ALPHA] Observations, at the end of every nanosecond, of utilization of seats for any stage of execution (but only initial stage for WATCHes)'],
      ['etcd_request_duration_seconds', 'histogram', '[ALPHA] Etcd request latency in seconds for each operation and object type.'],
      ['apiserver_tls_handshake_errors_total', 'counter', '[ALPHA] Number of requests dropped with \'TLS handshake error from\' error'],
      ['process_cpu_user_seconds_total', 'counter', 'Total user CPU time spent in seconds.'],
      ['nodejs_eventloop_lag_seconds', 'gauge', 'Lag of event loop in seconds.'],
    ];
    for (const [name, type, help] of expected) {
      const f = m.get(name);
      assert.ok(f, `${name} is exported`);
      assert.equal(f.type, type, name);
      assert.equal(f.help, help, name);
    }
    const durations = (m.get('apiserver_request_duration_seconds') as Family).samples.filter((s) => s.name.endsWith('_bucket'));
    const les = [...new Set(durations.map((s) => Number(s.labels.le === '+Inf' ? Infinity : s.labels.le)))];
    assert.deepEqual(les, latencyBuckets);
    const sizes = (m.get('apiserver_response_sizes') as Family).samples.filter((s) => s.name.endsWith('_bucket')).map((s) => s.labels.le);
    assert.deepEqual([...new Set(sizes)], ['1000', '10000', '100000', '1000000', '10000000', '100000000', '1000000000', '10000000000', '+Inf']);
    for (const s of (m.get('apiserver_request_total') as Family).samples) {
      assert.deepEqual(Object.keys(s.labels).sort(), ['code', 'component', 'dry_run', 'group', 'resource', 'scope', 'subresource', 'verb', 'version'].sort());
    }
  });

  it('counts requests by verb, scope and code', async () => {
    await createNamespace(server, 'counted');
    const before = await scrape();
    const list = { verb: 'LIST', group: '', version: 'v1', resource: 'namespaces', scope: 'cluster', code: '200', component: 'apiserver', dry_run: '' };
    const missing = { verb: 'GET', resource: 'serviceaccounts', scope: 'resource', code: '404' };
    const dryCreate = { verb: 'POST', resource: 'configmaps', scope: 'namespace', code: '201', dry_run: 'All' };
    const unknown = { verb: 'LIST', resource: '', group: '', version: '', scope: 'cluster', code: '404' };
    for (let i = 0; i < 3; i++) expectStatus(await request(server, '/api/v1/namespaces', { credentials: jane }), 200, 'list');
    expectStatus(await request(server, '/api/v1/namespaces/counted/serviceaccounts/nobody'), 404, 'get');
    expectStatus(await request(server, '/api/v1/namespaces/counted/configmaps?dryRun=All', { method: 'POST', body: { metadata: { name: 'x' } } }), 201, 'dry run');
    expectStatus(await request(server, '/apis/nothing.example.com/v1/things'), 404, 'not served');
    const after = await scrape();
    assert.equal(count(after, list) - count(before, list), 3);
    assert.equal(count(after, missing) - count(before, missing), 1);
    assert.equal(count(after, dryCreate) - count(before, dryCreate), 1);
    assert.equal(count(after, unknown) - count(before, unknown), 1, 'an unserved resource leaves its labels empty');
    const metricsCount = { verb: 'GET', resource: '', scope: '', code: '200' };
    assert.equal(count(after, metricsCount) - count(before, metricsCount), 1, 'the scrape itself, a non-resource GET');
  });

  it('shows open watches as long-running requests, and counts their events', async () => {
    await createNamespace(server, 'watched');
    const watch = await h1Stream(server, '/api/v1/namespaces/watched/configmaps?watch=true&resourceVersion=1', { stalled: false, parseEvents: false });
    try {
      const labels = { verb: 'WATCH', group: '', version: 'v1', resource: 'configmaps', scope: 'namespace' };
      assert.equal(sampleValue(await scrape(), 'apiserver_longrunning_requests', 'apiserver_longrunning_requests', labels), 1);
      for (const name of ['a', 'b']) {
        expectStatus(await request(server, '/api/v1/namespaces/watched/configmaps', { method: 'POST', body: { metadata: { name } } }), 201, 'create');
      }
      let sent = 0;
      for (let i = 0; i < 50 && sent < 2; i++) {
        await sleep(100);
        try { sent = sampleValue(await scrape(), 'apiserver_watch_events_total', 'apiserver_watch_events_total', { group: '', version: 'v1', resource: 'configmaps' }); } catch { sent = 0; }
      }
      assert.equal(sent, 2);
      const m = await scrape();
      // each event's size, in Kubernetes' buckets (1 KiB doubling to 128 KiB): two small ConfigMaps
      const sizeLabels = { group: '', version: 'v1', resource: 'configmaps' };
      assert.equal(sampleValue(m, 'apiserver_watch_events_sizes', 'apiserver_watch_events_sizes_count', sizeLabels), 2);
      assert.equal(sampleValue(m, 'apiserver_watch_events_sizes', 'apiserver_watch_events_sizes_bucket', { ...sizeLabels, le: '1024' }), 2);
      assert.ok(sampleValue(m, 'apiserver_watch_events_sizes', 'apiserver_watch_events_sizes_sum', sizeLabels) > 100);
      // the events were encoded by the pool, whose threads have been busy some of the time
      const utilization = sampleValue(m, 'orch_watch_encoder_pool_utilization', 'orch_watch_encoder_pool_utilization', {});
      assert.ok(utilization > 0 && utilization <= 1, String(utilization));
      assert.ok(sampleValue(m, 'etcd_request_duration_seconds', 'etcd_request_duration_seconds_count', { operation: 'create', type: 'configmaps' }) >= 2);
      assert.ok(sampleValue(m, 'apiserver_storage_objects', 'apiserver_storage_objects', { resource: 'configmaps' }) >= 2);
      assert.ok(sampleValue(m, 'apiserver_storage_objects', 'apiserver_storage_objects', { resource: 'namespaces' }) >= 6);
    } finally {
      watch.destroy();
    }
  });

  it('reports priority and fairness: dispatches per schema and level, and the levels\' seats', async () => {
    for (let i = 0; i < 50; i++) {
      if ((await request(server, '/apis/flowcontrol.apiserver.orch.io/v1/prioritylevelconfigurations/global-default')).status === 200) break;
      await sleep(100);
    }
    const before = await scrape();
    const exempt = { flow_schema: 'exempt', priority_level: 'exempt' };
    const dispatched = (m: Map<string, Family>, labels: Record<string, string>) => {
      try { return sampleValue(m, 'apiserver_flowcontrol_dispatched_requests_total', 'apiserver_flowcontrol_dispatched_requests_total', labels); } catch { return 0; }
    };
    expectStatus(await request(server, '/api/v1/namespaces', { credentials: jane }), 200, 'jane lists');
    const after = await scrape();
    assert.equal(dispatched(after, exempt) - dispatched(before, exempt), 1, 'the admin\'s scrape (the one before was dispatched before it counted)');
    const janes = { flow_schema: 'global-default', priority_level: 'global-default' };
    assert.equal(dispatched(after, janes) - dispatched(before, janes), 1);
    const waited = (m: Map<string, Family>) => {
      const name = 'apiserver_flowcontrol_request_wait_duration_seconds';
      try { return sampleValue(m, name, `${name}_count`, { ...janes, execute: 'true' }); } catch { return 0; }
    };
    assert.equal(waited(after) - waited(before), 1, 'jane\'s request left its queue (at once) and ran');
    assert.ok(sampleValue(after, 'apiserver_flowcontrol_priority_level_seat_utilization', 'apiserver_flowcontrol_priority_level_seat_utilization_count',
      { priority_level: 'global-default', phase: 'executing' }) > 0, 'utilization is sampled');
    // NominalCL = ceil(600 * 20 / 245): the default levels' shares add up to 245
    assert.equal(sampleValue(after, 'apiserver_flowcontrol_nominal_limit_seats', 'apiserver_flowcontrol_nominal_limit_seats', { priority_level: 'global-default' }), 49);
    assert.equal(sampleValue(after, 'apiserver_flowcontrol_nominal_limit_seats', 'apiserver_flowcontrol_nominal_limit_seats', { priority_level: 'exempt' }), 0);
    assert.ok(sampleValue(after, 'apiserver_flowcontrol_current_limit_seats', 'apiserver_flowcontrol_current_limit_seats', { priority_level: 'catch-all' }) >= 13);
  });

  it('counts TLS handshakes that fail', async () => {
    const before = sampleValue(await scrape(), 'apiserver_tls_handshake_errors_total', 'apiserver_tls_handshake_errors_total', {});
    await new Promise<void>((resolve) => {
      const socket = connect(server.port, '127.0.0.1', () => socket.end('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
      socket.on('close', () => resolve());
      socket.on('error', () => {});
      socket.resume();
    });
    let after = before;
    for (let i = 0; i < 50 && after === before; i++) {
      await sleep(50);
      after = sampleValue(await scrape(), 'apiserver_tls_handshake_errors_total', 'apiserver_tls_handshake_errors_total', {});
    }
    assert.equal(after - before, 1);
  });
});
