/**
 * The CPU one request's auditing costs, measured in this process with process.cpuUsage over many
 * requests: policy evaluation, the record, both stages' events, their JSON and the writes to a real
 * log file, in the mode given. CPU time rather than throughput, so that it holds on a busy machine
 * where requests/s do not.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import pino from 'pino';
import { AuditContext } from '../src/audit/audit-context.js';
import { Auditor } from '../src/audit/auditor.js';
import { openLogFile } from '../src/audit/backends/log-file.js';
import { LogBackend } from '../src/audit/backends/log.js';
import { AuditMetrics } from '../src/audit/metrics.js';
import { withMode, type AuditMode } from '../src/audit/modes.js';
import { parsePolicy } from '../src/audit/policy.js';
import { PolicyEvaluator } from '../src/audit/policy-evaluator.js';
import type { Level } from '../src/audit/types.js';
import { requestInfo } from '../src/http/request-info.js';
import { StoredObject } from '../src/store/read-model.js';
import type { KObject } from '../src/api/meta.js';

export type Shape = 'create' | 'get';

const user = { name: 'orch-admin', groups: ['system:masters', 'system:authenticated'] };
const body: KObject = {
  apiVersion: 'v1', kind: 'ServiceAccount',
  metadata: { name: 'sa-000042', labels: { app: 'bench', shard: '10' } }, secrets: [{ name: 'token-42' }],
} as KObject;
const stored = new StoredObject({
  ...body,
  metadata: {
    ...body.metadata, namespace: 'audit', uid: '0b0d9c1e-4b8e-4c0e-9a55-7d1f7f3c2a10', resourceVersion: '4242', creationTimestamp: '2026-11-25T18:00:00Z',
    managedFields: [{ manager: 'bench', operation: 'Update', apiVersion: 'v1', time: '2026-11-25T18:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {}, 'f:shard': {} } }, 'f:secrets': {} } }],
  },
} as KObject, 4242);

/** CPU microseconds per request that auditing adds, over `n` requests of the given shape. */
export async function auditCpuPerRequest(dir: string, level: Level, mode: AuditMode, shape: Shape, n: number): Promise<number> {
  const log = pino({ level: 'silent' });
  const metrics = new AuditMetrics();
  const file = openLogFile({ path: join(dir, `${level}-${mode}-${shape}.log`), maxSizeMB: 1024, maxBackups: 0, maxAgeDays: 0, compress: false }, () => {});
  const sink = withMode(mode, new LogBackend(file, 'json', metrics, log, true), { bufferSize: 10_000, maxBatchSize: 1, maxBatchWaitMs: 0 }, 'log', metrics, log);
  const auditor = new Auditor(new PolicyEvaluator(parsePolicy(`apiVersion: audit.orch.io/v1\nkind: Policy\nrules:\n- level: ${level}\n`)), sink, metrics);
  const [method, path] = shape === 'create' ? ['POST', '/api/v1/namespaces/audit/serviceaccounts'] : ['GET', '/api/v1/namespaces/audit/serviceaccounts/sa-000042'];
  const info = requestInfo(method, path, new URLSearchParams());
  const headers = { 'user-agent': 'bench-load/1.0', host: '127.0.0.1:6443' };
  stored.json; // a stored object's JSON is made at commit, never for the audit record

  const started = process.cpuUsage();
  let pending: (boolean | Promise<boolean>)[] = [];
  for (let i = 0; i < n; i++) {
    const audit = new AuditContext(randomUUID());
    audit.begin(auditor.evaluate(info, user), { requestURI: path, headers, remoteAddress: '127.0.0.1', attributes: info, user, receivedAt: Date.now() * 1000 });
    pending.push(auditor.processStage(audit, 'RequestReceived'));
    if (shape === 'create') audit.requestObject(body);
    audit.annotate('authorization.orch.io/decision', 'allow');
    audit.annotate('authorization.orch.io/reason', '');
    audit.responseObject(shape === 'create' ? 201 : 200, stored);
    pending.push(auditor.processStage(audit, 'ResponseComplete'));
    // as with 64 requests in flight: each turn of the event loop serves 64, and their writes are shared
    if (pending.length >= 128) {
      await Promise.all(pending);
      pending = [];
      await new Promise((r) => setImmediate(r));
    }
  }
  await Promise.all(pending);
  await sink.shutdown();
  const used = process.cpuUsage(started);
  return (used.user + used.system) / n;
}
