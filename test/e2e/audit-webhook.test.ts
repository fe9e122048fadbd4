/**
 * The webhook backend against a real HTTPS receiver the test starts (its own CA, client
 * certificates required): EventList batches in the configured version, retries of transient
 * failures, blocking-strict's refusal when the receiver refuses, and batch mode's buffer,
 * throttle and flush at shutdown.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { expectStatus } from '../support/api.js';
import { auditIdOf, eventsOf, receivedEvents, startAuditReceiver, tempDir, writePolicy, type AuditReceiver } from '../support/audit.js';
import { request, startServer, type TestServer } from '../support/server.js';

const notHealth = '- level: None\n  nonResourceURLs: [/readyz*, /livez*, /healthz*]\n';

describe('the webhook in blocking-strict mode', () => {
  let server: TestServer;
  let receiver: AuditReceiver;
  before(async () => {
    const dir = tempDir('audit-webhook-');
    receiver = await startAuditReceiver(dir);
    const policy = writePolicy(dir, `apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n${notHealth}- level: Request\n`);
    server = await startServer({
      args: ['--audit-policy-file', policy, '--audit-webhook-config-file', receiver.kubeconfig, '--audit-webhook-mode', 'blocking-strict',
        '--audit-webhook-version', 'audit.k8s.io/v1', '--audit-webhook-initial-backoff', '20ms'],
    });
  });
  after(async () => { await server?.dispose(); await receiver?.close(); });

  it('POSTs each event as an EventList over mutual TLS, RequestReceived before the request is served', async () => {
    const res = await request(server, '/api/v1/namespaces/default/serviceaccounts', { method: 'POST', body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'hooked' } } });
    expectStatus(res, 201, 'create');
    const id = auditIdOf(res);
    assert.ok(receivedEvents(receiver).some((e) => e.auditID === id && e.stage === 'RequestReceived'), 'stored before the answer');
    const events = await eventsOf(() => receivedEvents(receiver), id, ['ResponseComplete']);
    assert.deepEqual(events[1].requestObject, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'hooked' } });
    assert.equal(events[1].apiVersion, 'audit.k8s.io/v1', '--audit-webhook-version');
    const batch = receiver.batches.find((b) => b.items.some((e) => e.auditID === id));
    assert.equal(batch?.kind, 'EventList');
    assert.equal(batch?.apiVersion, 'audit.k8s.io/v1');
    assert.equal(batch?.clientCN, 'orch-apiserver-audit', 'the kubeconfig\'s client certificate');
  });

  it('retries a transient failure (500) with backoff: the request is served', async () => {
    const first = receiver.batches.length;
    receiver.answer = (n) => (n === first ? { status: 500 } : { status: 200 });
    const res = await request(server, '/api/v1/namespaces/default/serviceaccounts/hooked');
    expectStatus(res, 200, 'get');
    const id = auditIdOf(res);
    const attempts = receiver.batches.slice(first).filter((b) => b.items.some((e) => e.auditID === id && e.stage === 'RequestReceived'));
    assert.equal(attempts.length, 2, 'refused once, accepted on the retry');
    receiver.answer = () => ({ status: 200 });
  });

  it('fails the request with 500 when the receiver refuses its RequestReceived event (400 is not retried)', async () => {
    const first = receiver.batches.length;
    receiver.answer = () => ({ status: 400 });
    const res = await request(server, '/api/v1/namespaces/default/serviceaccounts/hooked');
    receiver.answer = () => ({ status: 200 });
    assert.equal(res.status, 500);
    assert.equal(res.json.message, 'Internal Server Error: "/api/v1/namespaces/default/serviceaccounts/hooked": failed to store audit event');
    const attempts = receiver.batches.slice(first).filter((b) => b.items.some((e) => e.auditID === auditIdOf(res)));
    assert.equal(attempts.length, 1, 'one attempt');
    assert.equal(attempts[0].items[0].stage, 'RequestReceived');
    expectStatus(await request(server, '/api/v1/namespaces/default/serviceaccounts/hooked'), 200, 'served again once the receiver accepts');
  });
});

describe('the webhook in batch mode', () => {
  let server: TestServer;
  let receiver: AuditReceiver;
  before(async () => {
    const dir = tempDir('audit-webhook-batch-');
    receiver = await startAuditReceiver(dir);
    const policy = writePolicy(dir, `apiVersion: audit.orch.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n${notHealth}- level: Metadata\n`);
    // batches of 2; the throttle lets one batch through, then (0.001 per second) none before shutdown
    server = await startServer({
      args: ['--audit-policy-file', policy, '--audit-webhook-config-file', receiver.kubeconfig, '--audit-webhook-batch-buffer-size', '4',
        '--audit-webhook-batch-max-size', '2', '--audit-webhook-batch-max-wait', '1h', '--audit-webhook-batch-throttle-qps', '0.001',
        '--audit-webhook-batch-throttle-burst', '1'],
    });
  });
  after(async () => { await server?.dispose(); await receiver?.close(); });

  it('never holds a request up, drops what the full buffer cannot take with one log line, and sends the rest at shutdown', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await request(server, '/api/v1/namespaces/default/serviceaccounts/default');
      expectStatus(res, 200, `get ${i}`);
      ids.push(auditIdOf(res));
    }
    await eventsOf(() => receivedEvents(receiver), ids[1], ['ResponseComplete']);
    assert.deepEqual(receiver.batches.map((b) => b.items.map((e) => e.auditID)), [[ids[0], ids[1]]], 'one batch of two so far');
    assert.equal(server.logs.filter((l) => l.includes('audit buffer queue blocked')).length, 1);

    // ids 2-3 wait for the throttle, 4-7 in the buffer; 8 and 9 found it full
    await server.stop();
    // the batches left at shutdown go out concurrently, as Kubernetes' buffered backend sends
    // them (one goroutine per batch): which arrives first is not fixed, what arrives is
    const byId = (a: string, b: string) => a.localeCompare(b);
    assert.deepEqual(receivedEvents(receiver).map((e) => e.auditID as string).sort(byId), ids.slice(0, 8).sort(byId));
    assert.ok(receiver.batches.every((b) => b.items.length <= 2));
    assert.equal(receiver.batches[0].apiVersion, 'audit.orch.io/v1');
  });
});
