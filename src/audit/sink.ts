/**
 * Where events go (k8s.io/apiserver's audit.Backend): the log and webhook backends, and the
 * layers in front of them (modes, batching, truncation), all take events the same way. A sink
 * answers synchronously when it can, so that batch mode costs the request no promise.
 */
import type { AuditEvent } from './types.js';

export interface AuditSink {
  /**
   * Takes the events in order. True when they were stored (or accepted for storing later, in
   * batch mode); false when any was lost.
   */
  processEvents(events: readonly AuditEvent[]): boolean | Promise<boolean>;
  /** Stores what is still pending and releases files and connections. */
  shutdown(): Promise<void>;
}

/** Several sinks: every event goes to each; true only when every sink took it (audit.Union). */
export class UnionSink implements AuditSink {
  constructor(private readonly sinks: readonly AuditSink[]) {}

  processEvents(events: readonly AuditEvent[]): boolean | Promise<boolean> {
    let ok = true;
    let pending: Promise<boolean>[] | undefined;
    for (const sink of this.sinks) {
      const r = sink.processEvents(events);
      if (typeof r === 'boolean') ok &&= r;
      else (pending ??= []).push(r);
    }
    if (!pending) return ok;
    return Promise.all(pending).then((results) => results.every(Boolean) && ok);
  }

  async shutdown(): Promise<void> {
    await Promise.all(this.sinks.map((s) => s.shutdown()));
  }
}
