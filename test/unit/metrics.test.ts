/**
 * The metrics registry on its own: label children are bound once per tuple and found again
 * without binding, the deprecated-API hook sets its gauge to 1, and the exposition parses strictly.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiServerMetrics } from '../../src/metrics/apiserver-metrics.js';
import { LabelNode } from '../../src/metrics/label-cache.js';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text.js';

describe('metrics', () => {
  it('binds a label tuple once and finds the same child after', () => {
    const bound: string[][] = [];
    const root = new LabelNode((values) => { bound.push(values); return { values }; });
    const a = root.next('GET').next('').leaf('200');
    assert.equal(root.next('GET').next('').leaf('200'), a);
    const b = root.next('GET').next('').leaf('404');
    assert.notEqual(b, a);
    assert.deepEqual(bound, [['GET', '', '200'], ['GET', '', '404']]);
  });

  it('sets apiserver_requested_deprecated_apis through its hook, and counts observed requests', async () => {
    const metrics = new ApiServerMetrics();
    metrics.requestedDeprecatedApi('example.orch.io', 'v1beta1', 'widgets', '', '1.35');
    for (let i = 0; i < 3; i++) metrics.observe('LIST', '', '', 'v1', 'namespaces', '', 'cluster', 200, 0.01, 2000);
    const m = parsePrometheusText(await metrics.registry.metrics());
    assert.equal(sampleValue(m, 'apiserver_requested_deprecated_apis', 'apiserver_requested_deprecated_apis',
      { group: 'example.orch.io', version: 'v1beta1', resource: 'widgets', subresource: '', removed_release: '1.35' }), 1);
    assert.equal(sampleValue(m, 'apiserver_request_total', 'apiserver_request_total', { verb: 'LIST', code: '200', component: 'apiserver' }), 3);
    assert.equal(sampleValue(m, 'apiserver_request_duration_seconds', 'apiserver_request_duration_seconds_bucket', { verb: 'LIST', le: '0.025' }), 3);
    assert.equal(sampleValue(m, 'apiserver_response_sizes', 'apiserver_response_sizes_bucket', { verb: 'LIST', le: '1000' }), 0);
    assert.equal(sampleValue(m, 'apiserver_response_sizes', 'apiserver_response_sizes_bucket', { verb: 'LIST', le: '10000' }), 3);
  });

  it('rejects malformed expositions in the test parser', () => {
    assert.throws(() => parsePrometheusText('x 1\n'), /outside its family/);
    assert.throws(() => parsePrometheusText('# HELP h x\n# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n'), /not cumulative/);
    assert.throws(() => parsePrometheusText('# HELP c x\n# TYPE c counter\nc{a="\\q"} 1\n'), /bad escape/);
  });
});
