/**
 * The front thread's handle on the writer worker: sends mutations (one message per event-loop
 * turn, however many requests asked), feeds committed events into the read model, and resolves
 * each request once its change is both durable and visible in the read model.
 */
import { Worker } from 'node:worker_threads';
import type { KObject } from '../api/meta.js';
import { ReadModel } from './read-model.js';
import type { CurrentRevision, Mutation, MutationResult, StoredItem, WriterMessage, WriterOptions } from './storage.js';

export interface StorageHealth { ok: boolean; message?: string }

type Pending = { resolve: (r: MutationResult) => void; object?: KObject };

/** A past state of one resource read from history. */
export type HistoryRead = { items: StoredItem[] } | { compacted: true };

export class WriterClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly reads = new Map<number, { resolve: (r: HistoryRead) => void; reject: (e: Error) => void }>();
  private readonly revisionQueries = new Map<number, { resolve: (r: CurrentRevision) => void; reject: (e: Error) => void }>();
  private readonly metricsQueries = new Map<number, (metrics: unknown[]) => void>();
  private readonly fatalListeners: Array<(message: string) => void> = [];
  private outbox: Mutation[] = [];
  private flushQueued = false;
  private closed: Promise<void> | undefined;
  health: StorageHealth = { ok: true };
  /** false once the writer is gone or storage failed for good: only a restart helps */
  alive = true;

  /** `shared`: other processes write the same storage (etcd), so the read model can lag behind it */
  private constructor(private readonly worker: Worker, readonly readModel: ReadModel, private readonly shared: boolean) {}

  /**
   * Whether the read model always holds every acknowledged write: true unless other processes
   * write the storage, since this process answers a write only after its read model applied it.
   */
  get readModelAlwaysCurrent(): boolean { return !this.shared; }

  static start(workerUrl: URL, options: WriterOptions): Promise<WriterClient> {
    const worker = new Worker(workerUrl, { workerData: options });
    return new Promise((resolve, reject) => {
      const onEarlyExit = (code: number) => reject(new Error(`storage writer exited with code ${code} before it was ready`));
      worker.once('exit', onEarlyExit);
      worker.once('error', reject);
      worker.once('message', (msg: WriterMessage) => {
        worker.off('exit', onEarlyExit);
        worker.off('error', reject);
        if (msg.t === 'fatal') { reject(new Error(`storage: ${msg.message}`)); return; }
        if (msg.t !== 'ready') { reject(new Error(`storage writer sent ${msg.t} before ready`)); return; }
        const client = new WriterClient(worker, new ReadModel(msg.state), options.engine === 'etcd');
        worker.on('message', (m: WriterMessage) => client.receive(m));
        worker.on('error', (err) => { client.health = { ok: false, message: err.message }; });
        worker.on('exit', () => client.failAll('storage writer exited'));
        resolve(client);
      });
    });
  }

  /**
   * Queues a mutation. `object` is the object the value encodes; the read model adopts it
   * instead of parsing the value again.
   */
  submit(m: Omit<Mutation, 'id'>, object?: KObject): Promise<MutationResult> {
    const id = this.nextId++;
    if (this.closed) return Promise.resolve({ id, ok: false, failure: 'unavailable', message: 'the server is shutting down' });
    this.outbox.push({ ...m, id });
    if (!this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(() => this.flush());
    }
    return new Promise((resolve) => this.pending.set(id, { resolve, object }));
  }

  /** The state of every key under `prefix` at `revision`, from the store's history. */
  readAt(prefix: string, revision: number): Promise<HistoryRead> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.reads.set(id, { resolve, reject });
      this.worker.postMessage({ t: 'readAt', id, prefix, revision });
    });
  }

  /**
   * What a consistent read must wait for or read: storage's current revision, and whether the
   * read model (once it has applied what the writer sent before answering) holds that state for
   * keys under `prefix`. Only shared storage asks; this process's own read model is otherwise
   * current, since every write is answered after the read model applied it.
   */
  currentRevision(prefix: string): Promise<CurrentRevision> {
    if (this.readModelAlwaysCurrent) return Promise.resolve({ revision: this.readModel.revision, cacheCurrent: true });
    if (!this.alive) return Promise.reject(new Error(this.health.message ?? 'storage writer stopped'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.revisionQueries.set(id, { resolve, reject });
      this.worker.postMessage({ t: 'currentRevision', id, prefix });
    });
  }

  /** The writer's metrics as prom-client JSON (none once it is gone), for /metrics to aggregate. */
  metrics(): Promise<unknown[]> {
    if (!this.alive) return Promise.resolve([]);
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.metricsQueries.set(id, resolve);
      this.worker.postMessage({ t: 'metrics', id });
    });
  }

  /** Called when storage can no longer serve this process (its change stream lost history). */
  onFatal(listener: (message: string) => void): void {
    this.fatalListeners.push(listener);
  }

  private flush(): void {
    this.flushQueued = false;
    const batch = this.outbox;
    this.outbox = [];
    this.worker.postMessage({ t: 'mutate', batch });
  }

  private receive(msg: WriterMessage): void {
    switch (msg.t) {
      case 'commit': {
        let own: Map<number, KObject> | undefined;
        for (const e of msg.events) {
          const object = e.mutationId !== undefined ? this.pending.get(e.mutationId)?.object : undefined;
          if (object) (own ??= new Map()).set(e.mutationId as number, object);
        }
        this.readModel.apply(msg.events, own);
        if (msg.revision !== undefined) this.readModel.advance(msg.revision);
        for (const r of msg.results) {
          const p = this.pending.get(r.id);
          if (!p) continue;
          this.pending.delete(r.id);
          if (r.ok) void this.readModel.waitFor(r.revision).then(() => p.resolve(r));
          else p.resolve(r);
        }
        if (msg.results.some((r) => r.ok)) this.health = { ok: true };
        break;
      }
      case 'compacted': this.readModel.setCompactRevision(msg.compactRevision); break;
      case 'readAtResult': {
        const r = this.reads.get(msg.id);
        if (!r) break;
        this.reads.delete(msg.id);
        if (msg.error !== undefined) r.reject(new Error(msg.error));
        else r.resolve(msg.compacted ? { compacted: true } : { items: msg.items ?? [] });
        break;
      }
      case 'currentRevisionResult': {
        const q = this.revisionQueries.get(msg.id);
        if (!q) break;
        this.revisionQueries.delete(msg.id);
        if (msg.current) q.resolve(msg.current);
        else q.reject(new Error(msg.error ?? 'no answer'));
        break;
      }
      case 'metricsResult':
        this.metricsQueries.get(msg.id)?.(msg.metrics);
        this.metricsQueries.delete(msg.id);
        break;
      case 'health': this.health = { ok: msg.ok, message: msg.message }; break;
      case 'fatal':
        this.health = { ok: false, message: msg.message };
        this.alive = false;
        for (const l of this.fatalListeners) l(msg.message);
        break;
      default: break;
    }
  }

  private failAll(message: string): void {
    this.health = { ok: false, message };
    this.alive = false;
    for (const [id, p] of this.pending) p.resolve({ id, ok: false, failure: 'unavailable', message });
    this.pending.clear();
    for (const r of this.reads.values()) r.reject(new Error(message));
    this.reads.clear();
    for (const q of this.revisionQueries.values()) q.reject(new Error(message));
    this.revisionQueries.clear();
    for (const resolve of this.metricsQueries.values()) resolve([]);
    this.metricsQueries.clear();
  }

  /** Lets queued writes commit, then closes storage. */
  close(): Promise<void> {
    this.closed ??= new Promise((resolve) => {
      if (this.outbox.length > 0) this.flush();
      this.worker.on('message', (m: WriterMessage) => { if (m.t === 'closed') resolve(); });
      this.worker.once('exit', () => resolve());
      this.worker.postMessage({ t: 'close' });
    });
    return this.closed;
  }
}
