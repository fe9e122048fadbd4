/**
 * A controller's work queue, with client-go's workqueue semantics: a key queued twice is worked
 * once; a key is never worked by two workers at once (queued again while worked, it runs again
 * after); a failed key comes back after a delay that doubles with each failure (5 ms up to
 * 1000 s, client-go's default controller rate limiter).
 */

/** Thrown by a handler that cannot finish yet and wants the key back later, with no error logged. */
export class RetryLater extends Error {}

export interface WorkQueueOptions {
  /** keys worked at once */
  workers: number;
  /** a handler failed with something other than RetryLater; the key is retried all the same */
  onError(err: unknown, key: string): void;
  baseDelayMs?: number;
  maxDelayMs?: number;
}

export class WorkQueue {
  /** FIFO of keys waiting for a worker; `head` is the next one (shifting an array is O(n)) */
  private pending: string[] = [];
  private head = 0;
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private active = 0;
  private stopped = false;
  private pumpScheduled = false;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly handle: (key: string) => Promise<void>, private readonly options: WorkQueueOptions) {}

  add(key: string): void {
    if (this.stopped || this.dirty.has(key)) return;
    this.dirty.add(key);
    // a key being worked goes back to the queue when its run ends
    if (!this.processing.has(key)) this.pending.push(key);
    this.schedule();
  }

  /** Stops taking keys; runs under way finish. */
  stop(): void {
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.pending = [];
    this.head = 0;
    this.dirty.clear();
  }

  /** Resolves once no key is queued, worked or waiting for a retry. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private isIdle(): boolean {
    return this.active === 0 && this.head === this.pending.length && this.timers.size === 0;
  }

  private next(): string | undefined {
    if (this.head === this.pending.length) return undefined;
    const key = this.pending[this.head++];
    if (this.head > 1024 && this.head * 2 > this.pending.length) {
      this.pending = this.pending.slice(this.head);
      this.head = 0;
    }
    return key;
  }

  /**
   * Work starts on a later turn, never inside `add`: the caller (a change listener) finishes
   * recording what it observed before any handler reads it.
   */
  private schedule(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    while (!this.stopped && this.active < this.options.workers) {
      const key = this.next();
      if (key === undefined) break;
      this.dirty.delete(key);
      this.processing.add(key);
      this.active++;
      void this.run(key);
    }
    if (this.isIdle()) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  private async run(key: string): Promise<void> {
    try {
      await this.handle(key);
      this.failures.delete(key);
    } catch (err) {
      if (!(err instanceof RetryLater)) this.options.onError(err, key);
      this.retry(key);
    } finally {
      this.processing.delete(key);
      this.active--;
      if (this.dirty.has(key)) this.pending.push(key);
      // the next key on a later turn, so that a long queue never starves I/O
      this.schedule();
    }
  }

  private retry(key: string): void {
    if (this.stopped || this.timers.has(key)) return;
    const failures = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, failures);
    const delay = Math.min((this.options.baseDelayMs ?? 5) * 2 ** (failures - 1), this.options.maxDelayMs ?? 1_000_000);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, delay);
    this.timers.set(key, timer);
  }
}
