/**
 * The log backend (--audit-log-path): one line per event, JSON (`audit.orch.io/v1`) or
 * Kubernetes' legacy text, to a rotating file or to stdout (`-`). The events of one turn of the
 * event loop are written together, so that many requests waiting in blocking mode share one
 * write, and each learns whether its lines reached the file.
 */
import type { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { eventJson } from '../event-json.js';
import { legacyEventLine } from '../legacy-format.js';
import type { AuditMetrics } from '../metrics.js';
import type { AuditSink } from '../sink.js';
import type { AuditEvent } from '../types.js';

export type LogFormat = 'json' | 'legacy';
export const logFormats: readonly LogFormat[] = ['json', 'legacy'];

export class LogBackend implements AuditSink {
  readonly name = 'log';
  private pending = '';
  private pendingEvents = 0;
  private waiters: ((ok: boolean) => void)[] = [];
  private scheduled = false;
  private writing: Promise<void> = Promise.resolve();
  private readonly line: (ev: AuditEvent) => string;

  constructor(
    private readonly out: Writable,
    format: LogFormat,
    private readonly metrics: AuditMetrics,
    private readonly log: Logger,
    /** false for stdout, which the process owns */
    private readonly ownsStream: boolean,
  ) {
    this.line = format === 'legacy' ? legacyEventLine : eventJson;
    out.on('error', (err) => log.error({ err }, 'audit log stream failed'));
  }

  processEvents(events: readonly AuditEvent[]): Promise<boolean> {
    for (const ev of events) this.pending += `${this.line(ev)}\n`;
    this.pendingEvents += events.length;
    const done = new Promise<boolean>((resolve) => this.waiters.push(resolve));
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    return done;
  }

  private flush(): void {
    this.scheduled = false;
    const text = this.pending;
    const count = this.pendingEvents;
    const waiters = this.waiters;
    this.pending = '';
    this.pendingEvents = 0;
    this.waiters = [];
    this.writing = new Promise<void>((resolve) => {
      const finish = (err: Error | null | undefined) => {
        if (err) {
          this.metrics.error(this.name, count);
          this.log.error({ err, events: count }, 'Error in audit plugin \'log\': events lost');
        }
        for (const w of waiters) w(!err);
        resolve();
      };
      if (this.out.destroyed || this.out.writableEnded) { finish(new Error('the audit log stream is closed')); return; }
      this.out.write(text, finish);
    });
  }

  async shutdown(): Promise<void> {
    if (this.scheduled) this.flush();
    await this.writing;
    if (!this.ownsStream) return;
    await new Promise<void>((resolve) => {
      if (this.out.destroyed || this.out.writableFinished) { resolve(); return; }
      this.out.end(() => resolve());
    });
  }
}
