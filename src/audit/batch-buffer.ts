/**
 * Batch mode (k8s.io/apiserver's buffered backend): events wait in a bounded buffer and are
 * handed on asynchronously, in batches of up to --audit-*-batch-max-size, when a batch is full
 * or --audit-*-batch-max-wait has passed; batches are paced by a token bucket
 * (--audit-*-batch-throttle-qps/-burst) when throttling is on. A full buffer drops the events,
 * counts them on apiserver_audit_error_total{plugin="buffered"} and logs one line per episode.
 * The request never waits.
 */
import type { Logger } from 'pino';
import type { AuditMetrics } from './metrics.js';
import type { AuditSink } from './sink.js';
import type { AuditEvent } from './types.js';

export interface BatchConfig {
  bufferSize: number;
  maxBatchSize: number;
  maxBatchWaitMs: number;
  /** batches per second and burst; undefined: unthrottled */
  throttle?: { qps: number; burst: number };
  /**
   * Batches are handed on without waiting for the previous ones (the log backend writes all it
   * is handed in one turn together, the webhook sends them side by side), this many at most, so
   * that a slow backend backs up into the bounded buffer (and its drops) rather than into memory.
   */
  maxBatchesInFlight?: number;
}

const defaultMaxBatchesInFlight = 64;

class TokenBucket {
  private tokens: number;
  private last = Date.now();
  private waking: (() => void) | undefined;

  constructor(private readonly qps: number, private readonly burst: number) { this.tokens = burst; }

  /** resolves when a token is available, and takes it */
  async take(): Promise<void> {
    const now = Date.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    if (this.tokens >= 1) { this.tokens -= 1; return; }
    const waitMs = ((1 - this.tokens) / this.qps) * 1000;
    this.tokens -= 1;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => { this.waking = undefined; resolve(); }, waitMs);
      this.waking = () => { clearTimeout(timer); this.waking = undefined; resolve(); };
    });
  }

  /** ends a wait at once (shutdown: what is buffered goes out unthrottled) */
  interrupt(): void { this.waking?.(); }
}

export class BufferedSink implements AuditSink {
  readonly name = 'buffered';
  private queue: AuditEvent[] = [];
  private head = 0;
  private timer: NodeJS.Timeout | undefined;
  private partialDue = false;
  private draining: Promise<void> | undefined;
  private overflowing = false;
  private stopping = false;
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly throttle: TokenBucket | undefined;

  constructor(
    private readonly delegate: AuditSink,
    private readonly config: BatchConfig,
    private readonly plugin: string,
    private readonly metrics: AuditMetrics,
    private readonly log: Logger,
  ) {
    this.throttle = config.throttle ? new TokenBucket(config.throttle.qps, config.throttle.burst) : undefined;
  }

  get size(): number { return this.queue.length - this.head; }

  processEvents(events: readonly AuditEvent[]): boolean {
    let taken = 0;
    if (!this.stopping) {
      for (const ev of events) {
        if (this.size >= this.config.bufferSize) break;
        this.queue.push(ev);
        taken++;
      }
    }
    const dropped = events.length - taken;
    if (dropped > 0) {
      this.metrics.error(this.name, dropped);
      if (!this.overflowing) {
        this.overflowing = true;
        this.log.error({ plugin: this.plugin, bufferSize: this.config.bufferSize }, 'audit buffer queue blocked: dropping audit events until it drains');
      }
    }
    this.schedule();
    return true;
  }

  private schedule(): void {
    if (this.size >= this.config.maxBatchSize) { this.drain(false); return; }
    if (this.size > 0 && !this.timer && !this.draining) {
      this.timer = setTimeout(() => { this.timer = undefined; this.drain(true); }, this.config.maxBatchWaitMs);
    }
  }

  private drain(includePartial: boolean): void {
    this.partialDue ||= includePartial;
    if (this.draining) return;
    this.draining = this.sendBatches().catch((err: unknown) => {
      this.log.error({ err, plugin: this.plugin }, 'audit batch could not be handed on');
    }).finally(() => {
      this.draining = undefined;
      if (!this.stopping) this.schedule();
    });
  }

  private async sendBatches(): Promise<void> {
    const max = this.config.maxBatchSize;
    while (this.size >= max || (this.partialDue && this.size > 0)) {
      const batch = this.queue.slice(this.head, this.head + max);
      this.head += batch.length;
      if (this.head > 1024 && this.head * 2 > this.queue.length) { this.queue = this.queue.slice(this.head); this.head = 0; }
      if (this.size === 0) { this.partialDue = false; this.overflowing = false; }
      if (this.throttle && !this.stopping) await this.throttle.take();
      await this.send(batch);
    }
    if (this.size === 0) this.partialDue = false;
  }

  private async send(batch: AuditEvent[]): Promise<void> {
    while (this.inFlight.size >= (this.config.maxBatchesInFlight ?? defaultMaxBatchesInFlight)) await Promise.race(this.inFlight);
    const sent = Promise.resolve(this.delegate.processEvents(batch));
    this.inFlight.add(sent);
    void sent.finally(() => this.inFlight.delete(sent));
  }

  async shutdown(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.stopping = true;
    // everything still buffered goes out, unthrottled
    this.throttle?.interrupt();
    while (this.draining || this.size > 0) {
      if (this.draining) await this.draining;
      else this.drain(true);
    }
    await Promise.all([...this.inFlight]);
    await this.delegate.shutdown();
  }
}
