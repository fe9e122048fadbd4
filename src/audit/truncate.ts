/**
 * Truncation (--audit-*-truncate-enabled; k8s.io/apiserver's truncate backend): an event larger
 * than --audit-*-truncate-max-event-size first loses its request and response objects and is
 * marked `audit.orch.io/truncated: "true"` (Kubernetes' audit.k8s.io/truncated, under our name);
 * if it is still too large it is dropped and counted. Batches are split so that none passes on
 * more than --audit-*-truncate-max-batch-size bytes of events.
 */
import type { Logger } from 'pino';
import { eventJson } from './event-json.js';
import type { AuditMetrics } from './metrics.js';
import type { AuditSink } from './sink.js';
import { levelAtLeast, type AuditEvent } from './types.js';

export const truncatedAnnotation = 'audit.orch.io/truncated';

export interface TruncateConfig {
  maxEventSize: number;
  maxBatchSize: number;
}

const sizeOf = (ev: AuditEvent) => Buffer.byteLength(eventJson(ev));

function truncated(ev: AuditEvent): AuditEvent {
  return { ...ev, requestObject: undefined, responseObject: undefined, annotations: { ...ev.annotations, [truncatedAnnotation]: 'true' }, encoded: undefined };
}

export class TruncatingSink implements AuditSink {
  readonly name = 'truncate';

  constructor(private readonly delegate: AuditSink, private readonly config: TruncateConfig, private readonly metrics: AuditMetrics, private readonly log: Logger) {}

  processEvents(events: readonly AuditEvent[]): boolean | Promise<boolean> {
    const results: (boolean | Promise<boolean>)[] = [];
    let batch: AuditEvent[] = [];
    let batchSize = 0;
    let dropped = 0;
    for (let ev of events) {
      let size = sizeOf(ev);
      if (size > this.config.maxEventSize && levelAtLeast(ev.level, 'Request')) {
        ev = truncated(ev);
        size = sizeOf(ev);
      }
      if (size > this.config.maxEventSize) { dropped++; continue; }
      if (batch.length > 0 && batchSize + size > this.config.maxBatchSize) {
        results.push(this.delegate.processEvents(batch));
        batch = [];
        batchSize = 0;
      }
      batch.push(ev);
      batchSize += size;
    }
    if (batch.length > 0) results.push(this.delegate.processEvents(batch));
    if (dropped > 0) {
      this.metrics.error(this.name, dropped);
      this.log.error({ events: dropped, maxEventSize: this.config.maxEventSize }, 'Error in audit plugin \'truncate\': event is too large even after truncating');
    }
    const ok = dropped === 0;
    if (results.every((r) => typeof r === 'boolean')) return ok && results.every(Boolean);
    return Promise.all(results).then((all) => ok && all.every(Boolean));
  }

  shutdown(): Promise<void> { return this.delegate.shutdown(); }
}
