/**
 * The contract between the front thread and the writer worker, and the shape every storage
 * engine (SQLite, etcd) produces. Values are JSON text of objects without `resourceVersion`: the
 * revision a commit assigns is the object's resourceVersion and is filled in when read.
 */

export type MutationOp = 'create' | 'update' | 'delete';

export interface Mutation {
  /** correlates the result with the request that asked; unique within one process */
  id: number;
  op: MutationOp;
  key: string;
  /** JSON of the new object (create, update) */
  value?: string;
  /** update/delete: the revision the change was computed from; the write fails with `conflict` if the key moved on */
  expectedRevision?: number;
  /** a lease: the key is deleted this long after the write (Events' --event-ttl) */
  ttlMs?: number;
}

export type MutationFailure = 'exists' | 'notFound' | 'conflict' | 'unavailable';

export type MutationResult =
  | { id: number; ok: true; revision: number }
  | { id: number; ok: false; failure: MutationFailure; message?: string };

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One committed change, in revision order: the change log that feeds the read model and watches. */
export interface ChangeEvent {
  revision: number;
  type: ChangeType;
  key: string;
  /** JSON of the object after the change; absent for DELETED */
  value?: string;
  /** the mutation that caused it, when it came from this process */
  mutationId?: number;
}

export interface StoredItem { key: string; revision: number; value: string }

export interface LoadedState {
  /** the store's current revision: every item and every later event is at or below / above it */
  revision: number;
  /** history at or below this revision is gone */
  compactRevision: number;
  items: StoredItem[];
}

/**
 * What a consistent read needs: the store's current revision, and whether the read model already
 * holds that state for the keys under `prefix` (else the read is served from storage at `revision`).
 */
export interface CurrentRevision { revision: number; cacheCurrent: boolean }

/** Messages from the front thread to the writer worker. */
export type WriterRequest =
  | { t: 'mutate'; batch: Mutation[] }
  | { t: 'readAt'; id: number; prefix: string; revision: number }
  /** only sent to engines shared with other processes: SQLite's read model is always current */
  | { t: 'currentRevision'; id: number; prefix: string }
  /** the worker's metrics, as prom-client JSON, for /metrics to aggregate */
  | { t: 'metrics'; id: number }
  | { t: 'close' };

/** Messages from the writer worker to the front thread. */
export type WriterMessage =
  | { t: 'ready'; state: LoadedState }
  /** `revision`, when set: every change at or below it has been sent (it may exceed the last event's) */
  | { t: 'commit'; events: ChangeEvent[]; results: MutationResult[]; revision?: number }
  | { t: 'compacted'; compactRevision: number }
  /** the state of every key under `prefix` at a past revision; `compacted` when history is gone */
  | { t: 'readAtResult'; id: number; items?: StoredItem[]; compacted?: boolean; error?: string }
  | { t: 'currentRevisionResult'; id: number; current?: CurrentRevision; error?: string }
  | { t: 'health'; ok: boolean; message?: string }
  | { t: 'metricsResult'; id: number; metrics: unknown[] }
  /** storage can no longer serve this process (before ready: it never could); the process must restart */
  | { t: 'fatal'; message: string }
  | { t: 'closed' };

/** How to reach etcd: the `--etcd-*` flags. */
export interface EtcdSettings {
  /** client URLs, http:// or https:// */
  servers: string[];
  /** every key lives under `<prefix>/` */
  prefix: string;
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  /** compact history older than this; 0 = never compact */
  compactionIntervalMs: number;
}

export type WriterOptions =
  | {
    engine: 'sqlite';
    dataDir: string;
    /** how long history is kept for watches, exact reads and continue tokens */
    historyMs: number;
  }
  | { engine: 'etcd'; etcd: EtcdSettings; historyMs: number };

/** `serviceaccounts/default/builder`, `namespaces/default`: the storage key of an object. */
export function objectKey(resource: string, namespace: string | undefined, name: string): string {
  return namespace ? `${resource}/${namespace}/${name}` : `${resource}/${name}`;
}
