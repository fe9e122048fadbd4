/**
 * Auditing as the command line asks for it (kube-apiserver's AuditOptions.ApplyTo): the policy
 * from --audit-policy-file, and each configured backend (log, webhook) behind its truncation and
 * mode. No policy, or no backend: undefined, and the pipeline has no audit filters. Any
 * problem (a malformed policy, a bad combination of flags, an unreadable webhook kubeconfig)
 * refuses start with a message naming it.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import type { ServerConfig } from '../config/server-config.js';
import { Auditor } from './auditor.js';
import type { BatchConfig } from './batch-buffer.js';
import { openLogFile } from './backends/log-file.js';
import { LogBackend, type LogFormat } from './backends/log.js';
import { loadWebhookKubeconfig } from './backends/webhook-kubeconfig.js';
import { WebhookBackend } from './backends/webhook.js';
import { AuditMetrics } from './metrics.js';
import { withMode, type AuditMode } from './modes.js';
import { loadPolicyFile } from './policy.js';
import { PolicyEvaluator } from './policy-evaluator.js';
import { UnionSink, type AuditSink } from './sink.js';
import { TruncatingSink, type TruncateConfig } from './truncate.js';

interface BackendFlags {
  mode: AuditMode;
  batch: BatchConfig;
  truncate: TruncateConfig & { enabled: boolean };
}

function backendFlags(c: ServerConfig, plugin: 'log' | 'webhook'): BackendFlags {
  const f = plugin === 'log'
    ? { mode: c.auditLogMode, buffer: c.auditLogBatchBufferSize, max: c.auditLogBatchMaxSize, wait: c.auditLogBatchMaxWaitMs, throttle: c.auditLogBatchThrottleEnable,
      qps: c.auditLogBatchThrottleQps, burst: c.auditLogBatchThrottleBurst, truncate: c.auditLogTruncateEnabled, tBatch: c.auditLogTruncateMaxBatchSize, tEvent: c.auditLogTruncateMaxEventSize }
    : { mode: c.auditWebhookMode, buffer: c.auditWebhookBatchBufferSize, max: c.auditWebhookBatchMaxSize, wait: c.auditWebhookBatchMaxWaitMs, throttle: c.auditWebhookBatchThrottleEnable,
      qps: c.auditWebhookBatchThrottleQps, burst: c.auditWebhookBatchThrottleBurst, truncate: c.auditWebhookTruncateEnabled, tBatch: c.auditWebhookTruncateMaxBatchSize, tEvent: c.auditWebhookTruncateMaxEventSize };
  // kube-apiserver's AuditBatchOptions and AuditTruncateOptions validation, with its messages
  if (f.mode === 'batch') {
    if (f.buffer <= 0) throw new Error(`invalid audit batch ${plugin} buffer size ${f.buffer}, must be a positive number`);
    if (f.max <= 0) throw new Error(`invalid audit batch ${plugin} max batch size ${f.max}, must be a positive number`);
    if (f.throttle && f.qps <= 0) throw new Error(`invalid audit batch ${plugin} throttle QPS ${f.qps}, must be a positive number`);
    if (f.throttle && f.burst <= 0) throw new Error(`invalid audit batch ${plugin} throttle burst ${f.burst}, must be a positive number`);
  }
  if (f.tEvent <= 0) throw new Error(`invalid audit truncate ${plugin} max event size ${f.tEvent}, must be a positive number`);
  if (f.tBatch < f.tEvent) throw new Error(`invalid audit truncate ${plugin} max batch size ${f.tBatch}, must be greater than max event size (${f.tEvent})`);
  return {
    mode: f.mode as AuditMode,
    batch: {
      bufferSize: f.buffer, maxBatchSize: f.max, maxBatchWaitMs: f.wait,
      throttle: f.throttle ? { qps: f.qps, burst: f.burst } : undefined,
    },
    truncate: { enabled: f.truncate, maxBatchSize: f.tBatch, maxEventSize: f.tEvent },
  };
}

function wrap(backend: AuditSink, flags: BackendFlags, plugin: string, metrics: AuditMetrics, log: Logger): AuditSink {
  const truncated = flags.truncate.enabled ? new TruncatingSink(backend, flags.truncate, metrics, log) : backend;
  return withMode(flags.mode, truncated, flags.batch, plugin, metrics, log);
}

export function setUpAuditing(c: ServerConfig, log: Logger): Auditor | undefined {
  if (!c.auditPolicyFile) {
    if (c.auditLogPath || c.auditWebhookConfigFile) log.info('No audit policy file provided, no events will be recorded');
    return undefined;
  }
  const policy = loadPolicyFile(c.auditPolicyFile);
  const metrics = new AuditMetrics();
  const sinks: AuditSink[] = [];
  if (c.auditLogPath) {
    const flags = backendFlags(c, 'log');
    const toStdout = c.auditLogPath === '-';
    let out;
    if (toStdout) {
      out = process.stdout;
    } else {
      mkdirSync(dirname(c.auditLogPath), { recursive: true });
      out = openLogFile({
        path: c.auditLogPath, maxSizeMB: c.auditLogMaxSize, maxBackups: c.auditLogMaxBackup, maxAgeDays: c.auditLogMaxAge, compress: c.auditLogCompress,
      }, (err) => log.warn({ err }, 'audit log rotation'));
    }
    sinks.push(wrap(new LogBackend(out, c.auditLogFormat as LogFormat, metrics, log, !toStdout), flags, 'log', metrics, log));
  }
  if (c.auditWebhookConfigFile) {
    const flags = backendFlags(c, 'webhook');
    const target = loadWebhookKubeconfig(c.auditWebhookConfigFile);
    const webhook = new WebhookBackend({ target, apiVersion: c.auditWebhookVersion, initialBackoffMs: c.auditWebhookInitialBackoffMs }, metrics, log);
    sinks.push(wrap(webhook, flags, 'webhook', metrics, log));
  }
  if (sinks.length === 0) {
    log.info('No audit backend configured (--audit-log-path, --audit-webhook-config-file): no events will be recorded');
    return undefined;
  }
  log.info({ policy: c.auditPolicyFile, rules: policy.rules.length, log: c.auditLogPath, webhook: c.auditWebhookConfigFile }, 'auditing');
  return new Auditor(new PolicyEvaluator(policy), sinks.length === 1 ? sinks[0] : new UnionSink(sinks), metrics);
}
