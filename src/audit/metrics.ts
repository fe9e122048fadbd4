/**
 * The audit counters kube-apiserver exports, kept as plain numbers until the /metrics endpoint
 * registers them: apiserver_audit_event_total, apiserver_audit_error_total{plugin},
 * apiserver_audit_level_total{level} and apiserver_audit_requests_rejected_total.
 */
import type { Level } from './types.js';

export class AuditMetrics {
  /** events generated and handed to the backends (apiserver_audit_event_total) */
  eventTotal = 0;
  /** events lost, by the plugin that lost them: log, webhook, buffered, truncate (apiserver_audit_error_total) */
  readonly errorTotal = new Map<string, number>();
  /** policy decisions by level (apiserver_audit_level_total) */
  readonly levelTotal = new Map<Level, number>();
  /** requests failed because their RequestReceived event could not be stored (apiserver_audit_requests_rejected_total) */
  requestsRejectedTotal = 0;

  error(plugin: string, events: number): void {
    this.errorTotal.set(plugin, (this.errorTotal.get(plugin) ?? 0) + events);
  }

  level(level: Level): void {
    this.levelTotal.set(level, (this.levelTotal.get(level) ?? 0) + 1);
  }
}
