/**
 * EventRateLimit's configuration (orch and Kubernetes group names, defaults, Kubernetes'
 * validation messages), the AdmissionConfiguration reader, and its token buckets on a fake clock.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readAdmissionConfig } from '../../src/admission/admission-config.js';
import { TokenBucket, parseEventRateLimitConfig } from '../../src/admission/plugins/event-rate-limit.js';

describe('EventRateLimit configuration', () => {
  it('reads an AdmissionConfiguration of apiserver.config.orch.io/v1 with an inline configuration', () => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-admission-unit-'));
    try {
      const path = join(dir, 'admission.json');
      writeFileSync(path, JSON.stringify({
        apiVersion: 'apiserver.config.orch.io/v1', kind: 'AdmissionConfiguration',
        plugins: [{ name: 'EventRateLimit', configuration: { apiVersion: 'eventratelimit.admission.orch.io/v1alpha1', kind: 'Configuration', limits: [{ type: 'Server', qps: 5, burst: 10 }, { type: 'SourceAndObject', qps: 1, burst: 2, cacheSize: 100 }] } }],
      }));
      const limits = parseEventRateLimitConfig(readAdmissionConfig(path).get('EventRateLimit'));
      assert.deepEqual(limits, [{ type: 'Server', qps: 5, burst: 10, cacheSize: 4096 }, { type: 'SourceAndObject', qps: 1, burst: 2, cacheSize: 100 }]);
      writeFileSync(path, JSON.stringify({ apiVersion: 'v1', kind: 'Other' }));
      assert.throws(() => readAdmissionConfig(path), /not an AdmissionConfiguration/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('validates as Kubernetes does', () => {
    const config = (limits: unknown[]) => ({ apiVersion: 'eventratelimit.admission.k8s.io/v1alpha1', kind: 'Configuration', limits });
    assert.throws(() => parseEventRateLimitConfig(config([])), { message: 'EventRateLimit: invalid configuration: limits: Invalid value: null: must not be empty' });
    assert.throws(() => parseEventRateLimitConfig(config([{ type: 'Pod', qps: 0, burst: 1, cacheSize: -1 }])), {
      message: 'EventRateLimit: invalid configuration: limits[0].type: Unsupported value: "Pod": supported values: "Namespace", "Server", "SourceAndObject", "User", '
        + 'limits[0].qps: Invalid value: 0: must be positive, limits[0].cacheSize: Invalid value: -1: must not be negative',
    });
    assert.throws(() => parseEventRateLimitConfig(undefined), /must be a Configuration/);
  });

  it('refills a token bucket at qps up to burst', () => {
    let now = 0;
    const bucket = new TokenBucket(2, 3, () => now);
    assert.deepEqual([bucket.tryAccept(), bucket.tryAccept(), bucket.tryAccept(), bucket.tryAccept()], [true, true, true, false]);
    now += 500;
    assert.deepEqual([bucket.tryAccept(), bucket.tryAccept()], [true, false]);
    now += 10_000;
    assert.deepEqual([bucket.tryAccept(), bucket.tryAccept(), bucket.tryAccept(), bucket.tryAccept()], [true, true, true, false]);
  });
});
