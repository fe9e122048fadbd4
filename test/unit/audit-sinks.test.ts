/**
 * The layers between a request's events and the backends: batching (sizes, max wait, a full
 * buffer, throttling, shutdown), truncation, the modes, the log backend's shared writes, and the
 * webhook's kubeconfig. Timers are node:test's mock timers: nothing here waits on the clock.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { after, afterEach, describe, it, mock } from 'node:test';
import pino from 'pino';
import { BufferedSink, type BatchConfig } from '../../src/audit/batch-buffer.js';
import { LogBackend } from '../../src/audit/backends/log.js';
import { loadWebhookKubeconfig } from '../../src/audit/backends/webhook-kubeconfig.js';
import { eventJson } from '../../src/audit/event-json.js';
import { AuditMetrics } from '../../src/audit/metrics.js';
import { withMode } from '../../src/audit/modes.js';
import { UnionSink, type AuditSink } from '../../src/audit/sink.js';
import { TruncatingSink, truncatedAnnotation } from '../../src/audit/truncate.js';
import type { AuditEvent, Level } from '../../src/audit/types.js';

function event(n: number, level: Level = 'Metadata', body?: string): AuditEvent {
  return {
    level, auditID: `id-${n}`, stage: 'ResponseComplete', requestURI: `/api/v1/namespaces/n${n}`, verb: 'get', user: { username: 'jane' },
    requestReceivedTimestamp: 1, stageTimestamp: 2, ...(body ? { requestObject: body, responseObject: body } : {}),
  };
}

class RecordingSink implements AuditSink {
  batches: string[][] = [];
  shutdowns = 0;
  answer: boolean | (() => Promise<boolean>) = true;
  processEvents(events: readonly AuditEvent[]): boolean | Promise<boolean> {
    this.batches.push(events.map((e) => e.auditID));
    return typeof this.answer === 'boolean' ? this.answer : this.answer();
  }
  async shutdown(): Promise<void> { this.shutdowns++; }
  get sizes(): number[] { return this.batches.map((b) => b.length); }
}

/** lets queued promise callbacks and immediates run (mock timers leave setImmediate real) */
const settle = async () => { for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r)); };

function logCollector() {
  const lines: string[] = [];
  return { lines, log: pino({ level: 'warn' }, { write: (l: string) => { lines.push(l); } }) };
}

const batchConfig = (over: Partial<BatchConfig>): BatchConfig => ({ bufferSize: 100, maxBatchSize: 2, maxBatchWaitMs: 1000, ...over });

describe('batch mode', () => {
  afterEach(() => mock.timers.reset());

  it('hands on full batches at once and a partial one after the max wait', async () => {
    mock.timers.enable({ apis: ['setTimeout', 'Date'] });
    const rec = new RecordingSink();
    const sink = new BufferedSink(rec, batchConfig({}), 'log', new AuditMetrics(), logCollector().log);
    assert.equal(sink.processEvents([1, 2, 3, 4, 5].map((n) => event(n))), true, 'the request never waits');
    await settle();
    assert.deepEqual(rec.sizes, [2, 2]);
    mock.timers.tick(999);
    await settle();
    assert.deepEqual(rec.sizes, [2, 2]);
    mock.timers.tick(1);
    await settle();
    assert.deepEqual(rec.batches, [['id-1', 'id-2'], ['id-3', 'id-4'], ['id-5']], 'in order');
  });

  it('drops events when the buffer is full, counts them, and logs one line per episode', async () => {
    const rec = new RecordingSink();
    let release!: () => void;
    rec.answer = () => new Promise<boolean>((r) => { release = () => r(true); });
    const metrics = new AuditMetrics();
    const { lines, log } = logCollector();
    const sink = new BufferedSink(rec, batchConfig({ bufferSize: 3, maxBatchSize: 1, maxBatchWaitMs: 0, maxBatchesInFlight: 1 }), 'webhook', metrics, log);
    sink.processEvents([1, 2, 3, 4, 5].map((n) => event(n)));
    await settle();
    // 1 is being sent, 2 waits for the delegate, 3 is buffered
    sink.processEvents([6, 7, 8].map((n) => event(n)));
    await settle();
    assert.deepEqual(rec.batches, [['id-1']], 'the delegate is still busy with the first batch');
    assert.equal(metrics.errorTotal.get('buffered'), 2 + 1, 'events 4, 5 then 8 found the buffer full');
    assert.equal(lines.filter((l) => l.includes('audit buffer queue blocked')).length, 1);

    for (let i = 0; i < 5; i++) { release(); await settle(); }
    assert.deepEqual(rec.batches.flat(), ['id-1', 'id-2', 'id-3', 'id-6', 'id-7']);
    sink.processEvents([9, 10, 11, 12, 13].map((n) => event(n)));
    await settle();
    assert.equal(lines.filter((l) => l.includes('audit buffer queue blocked')).length, 2, 'a new episode after the buffer drained');
  });

  it('paces batches with the throttle\'s token bucket', async () => {
    mock.timers.enable({ apis: ['setTimeout', 'Date'] });
    const rec = new RecordingSink();
    const sink = new BufferedSink(rec, batchConfig({ maxBatchSize: 1, maxBatchWaitMs: 0, throttle: { qps: 1, burst: 1 } }), 'webhook', new AuditMetrics(), logCollector().log);
    sink.processEvents([1, 2, 3].map((n) => event(n)));
    await settle();
    assert.deepEqual(rec.sizes, [1]);
    mock.timers.tick(1000);
    await settle();
    assert.deepEqual(rec.sizes, [1, 1]);
    mock.timers.tick(1000);
    await settle();
    assert.deepEqual(rec.sizes, [1, 1, 1]);
  });

  it('hands everything buffered on at shutdown, then shuts the delegate down', async () => {
    const rec = new RecordingSink();
    const sink = new BufferedSink(rec, batchConfig({ maxBatchSize: 10, maxBatchWaitMs: 60_000 }), 'log', new AuditMetrics(), logCollector().log);
    sink.processEvents([1, 2, 3].map((n) => event(n)));
    await sink.shutdown();
    assert.deepEqual(rec.batches, [['id-1', 'id-2', 'id-3']]);
    assert.equal(rec.shutdowns, 1);
  });
});

describe('batch mode at shutdown', () => {
  it('does not wait for the throttle: what is buffered goes out at once', async () => {
    const rec = new RecordingSink();
    const sink = new BufferedSink(rec, batchConfig({ maxBatchSize: 1, maxBatchWaitMs: 0, throttle: { qps: 0.001, burst: 1 } }), 'webhook', new AuditMetrics(), logCollector().log);
    sink.processEvents([1, 2, 3].map((n) => event(n)));
    await settle();
    assert.deepEqual(rec.sizes, [1], 'the second batch waits for a token (1000 s away)');
    await sink.shutdown();
    assert.deepEqual(rec.batches.flat(), ['id-1', 'id-2', 'id-3']);
  });
});

describe('truncation', () => {
  const big = JSON.stringify({ data: 'x'.repeat(2000) });

  it('first removes request and response objects, marking the event', () => {
    const rec: AuditEvent[][] = [];
    const sink = new TruncatingSink({ processEvents: (e) => { rec.push([...e]); return true; }, shutdown: async () => {} }, { maxEventSize: 1000, maxBatchSize: 10_000 }, new AuditMetrics(), logCollector().log);
    assert.equal(sink.processEvents([event(1, 'RequestResponse', big), event(2, 'RequestResponse')]), true);
    const [truncated, small] = rec[0];
    assert.equal(truncated.requestObject, undefined);
    assert.equal(truncated.responseObject, undefined);
    assert.deepEqual(truncated.annotations, { [truncatedAnnotation]: 'true' });
    assert.equal(small.annotations, undefined);
  });

  it('drops an event still too large, counting it, and splits batches by size', () => {
    const rec: string[][] = [];
    const metrics = new AuditMetrics();
    const size = Buffer.byteLength(eventJson(event(1)));
    const sink = new TruncatingSink({ processEvents: (e) => { rec.push(e.map((x) => x.auditID)); return true; }, shutdown: async () => {} },
      { maxEventSize: size + 5, maxBatchSize: 2 * size + 20 }, metrics, logCollector().log);
    const huge = { ...event(9), userAgent: 'u'.repeat(size) };
    assert.equal(sink.processEvents([event(1), event(2), huge, event(3)]), false);
    assert.deepEqual(rec, [['id-1', 'id-2'], ['id-3']]);
    assert.equal(metrics.errorTotal.get('truncate'), 1);
  });
});

describe('modes', () => {
  it('blocking waits and reports success; blocking-strict reports the failure; batch never waits', async () => {
    const failing = new RecordingSink();
    failing.answer = async () => false;
    const metrics = new AuditMetrics();
    const log = logCollector().log;
    const blocking = withMode('blocking', failing, batchConfig({}), 'log', metrics, log).processEvents([event(1)]);
    assert.ok(blocking instanceof Promise);
    assert.equal(await blocking, true);
    assert.equal(await withMode('blocking-strict', failing, batchConfig({}), 'log', metrics, log).processEvents([event(2)]), false);
    const batch = withMode('batch', failing, batchConfig({}), 'log', metrics, log);
    assert.equal(batch.processEvents([event(3)]), true);
    await batch.shutdown();
  });

  it('a union takes events only when every sink takes them', async () => {
    const ok = new RecordingSink();
    const bad = new RecordingSink();
    bad.answer = async () => false;
    assert.equal(new UnionSink([ok, ok]).processEvents([event(1)]), true);
    assert.equal(await new UnionSink([ok, bad]).processEvents([event(2)]), false);
  });
});

describe('the log backend', () => {
  it('writes the events of one turn in one write, one line each, and tells each caller', async () => {
    const out = new PassThrough();
    const writes: string[] = [];
    out.on('data', (c: Buffer) => writes.push(c.toString()));
    const backend = new LogBackend(out, 'json', new AuditMetrics(), logCollector().log, true);
    const results = await Promise.all([backend.processEvents([event(1)]), backend.processEvents([event(2), event(3)])]);
    assert.deepEqual(results, [true, true]);
    assert.equal(writes.length, 1);
    assert.deepEqual(writes[0].trimEnd().split('\n').map((l) => JSON.parse(l).auditID), ['id-1', 'id-2', 'id-3']);
    await backend.shutdown();
  });

  it('reports a failed write to its callers and counts the events lost', async () => {
    const out = new Writable({ write: (_c, _e, cb) => cb(new Error('ENOSPC: no space left on device')) });
    const metrics = new AuditMetrics();
    const { lines, log } = logCollector();
    const backend = new LogBackend(out, 'legacy', metrics, log, true);
    assert.equal(await backend.processEvents([event(1), event(2)]), false);
    assert.equal(metrics.errorTotal.get('log'), 2);
    assert.ok(lines.some((l) => l.includes('ENOSPC')));
  });
});

describe('the webhook kubeconfig', () => {
  const dir = mkdtempSync(join(tmpdir(), 'audit-kubeconfig-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('takes the current context\'s server, CA data and client certificate files (relative to the kubeconfig)', () => {
    writeFileSync(join(dir, 'client.crt'), 'CERT');
    writeFileSync(join(dir, 'client.key'), 'KEY');
    const path = join(dir, 'webhook.kubeconfig');
    writeFileSync(path, `apiVersion: v1
kind: Config
current-context: audit
clusters:
- name: other
  cluster: {server: "https://other.example:1"}
- name: sink
  cluster:
    server: https://127.0.0.1:9443/audit
    certificate-authority-data: ${Buffer.from('CA').toString('base64')}
users:
- name: apiserver
  user: {client-certificate: client.crt, client-key: client.key}
contexts:
- name: audit
  context: {cluster: sink, user: apiserver}
`);
    const t = loadWebhookKubeconfig(path);
    assert.equal(t.url.href, 'https://127.0.0.1:9443/audit');
    assert.deepEqual([t.ca, t.cert, t.key, t.token, t.insecureSkipTLSVerify], ['CA', 'CERT', 'KEY', undefined, false]);
  });

  it('refuses a kubeconfig without a server, naming the file', () => {
    const path = join(dir, 'empty.kubeconfig');
    writeFileSync(path, 'apiVersion: v1\nkind: Config\nclusters: [{name: a, cluster: {}}]\n');
    assert.throws(() => loadWebhookKubeconfig(path), { message: `initializing audit webhook: invalid kubeconfig ${path}: the cluster has no server URL` });
  });
});
