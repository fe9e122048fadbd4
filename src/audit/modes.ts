/**
 * How a backend's writes relate to the request (--audit-log-mode, --audit-webhook-mode):
 * - batch: buffered and sent asynchronously (batch-buffer.ts); the request never waits;
 * - blocking: the request waits for its events to be written; a failure is logged (by the
 *   backend) and the request goes on;
 * - blocking-strict: as blocking, and a failure to store the RequestReceived event fails the
 *   request (the audit filter answers 500).
 */
import type { Logger } from 'pino';
import { BufferedSink, type BatchConfig } from './batch-buffer.js';
import type { AuditMetrics } from './metrics.js';
import type { AuditSink } from './sink.js';
import type { AuditEvent } from './types.js';

export const auditModes = ['batch', 'blocking', 'blocking-strict'] as const;
export type AuditMode = (typeof auditModes)[number];

/** blocking: waits, then reports success whatever happened (Kubernetes' ignoreErrorsBackend) */
class IgnoreErrorsSink implements AuditSink {
  constructor(private readonly delegate: AuditSink) {}

  processEvents(events: readonly AuditEvent[]): boolean | Promise<boolean> {
    const r = this.delegate.processEvents(events);
    return typeof r === 'boolean' ? true : r.then(() => true, () => true);
  }

  shutdown(): Promise<void> { return this.delegate.shutdown(); }
}

export function withMode(mode: AuditMode, delegate: AuditSink, batch: BatchConfig, plugin: string, metrics: AuditMetrics, log: Logger): AuditSink {
  switch (mode) {
    case 'blocking-strict': return delegate;
    case 'blocking': return new IgnoreErrorsSink(delegate);
    case 'batch': return new BufferedSink(delegate, batch, plugin, metrics, log);
  }
}
