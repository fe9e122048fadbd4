/**
 * The etcd engine: every object under `<--etcd-prefix>/<key>` as the same JSON text SQLite
 * stores, its resourceVersion the etcd revision that last wrote it. Several API server processes
 * may share the keys, so this engine reports changes (its own included) from one etcd watch,
 * never from `apply`; the front answers a write once the watch has brought it to its read model.
 *
 * Writes are conditional transactions: create requires the key to be absent (create_revision 0),
 * update and delete compare mod_revision with the revision the change was computed from. Such a
 * condition never holds twice, so a transaction may be retried after an ambiguous failure (a
 * timeout, a lost leader) without being applied twice; a retried unconditional update also
 * requires that the key does not already hold its value.
 */
import { EtcdLeaseInvalidError, type ICompare, type IEvent, type IKeyValue, type IRequestOp, type ITxnRequest, type ITxnResponse } from 'etcd3';
import type { CommitOutcome, StorageEngine } from './engine.js';
import { EtcdConnection, prefixEnd, retrying } from './etcd-connection.js';
import { LeaseManager } from './etcd-leases.js';
import { EtcdWatch } from './etcd-watch.js';
import type { ChangeEvent, CurrentRevision, EtcdSettings, LoadedState, Mutation, MutationResult, StoredItem } from './storage.js';

/** a write keeps trying (other members, a new leader) this long before it fails as unavailable */
const writeBudgetMs = 5000;
const readBudgetMs = 5000;
/** at startup etcd may still be electing a leader */
const loadBudgetMs = 30_000;
/** one attempt's deadline: a member that cannot reach a quorum does not answer until etcd's own 7 s */
const attemptMs = 2000;
const pingBudgetMs = 2000;
/** a watch that has been down this long makes the storage check fail */
const watchGraceMs = 3000;
const pageSize = 5000;
/** transactions of one batch in flight at once */
const maxInFlight = 256;
/**
 * The compactor's bookkeeping key, as kube-apiserver's `compact_rev_key`, but inside the prefix:
 * its write every interval is an event every replica's watch sees, so a watch on a quiet prefix
 * still moves past the revisions compaction will remove, and can always resume.
 */
const compactKeyName = 'compact_rev_key';

/** `serviceaccounts/default/builder` -> `serviceaccounts` */
function resourceOf(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? key : key.slice(0, slash);
}

function isCompacted(err: unknown): boolean {
  return err instanceof Error && err.message.includes('required revision has been compacted');
}

export class EtcdEngine implements StorageEngine {
  private readonly connection: EtcdConnection;
  /** `/registry/` */
  private readonly keyPrefix: string;
  private readonly compactKey: string;
  private readonly leases: LeaseManager;
  private watch: EtcdWatch | undefined;
  private changeListener: ((events: ChangeEvent[], revision: number) => void) | undefined;
  private failureListener: ((message: string) => void) | undefined;
  /** every change at or below this revision has been reported */
  private reported = 0;
  /** live keys per resource as the reported changes leave them: what proves the read model current */
  private readonly liveKeys = new Map<string, number>();
  // compaction as kube-apiserver's compactor does it (storage/etcd3/compact.go)
  private compactRevision = 0;
  /** the compact key's version when last seen: the logical clock replicas agree on with a CAS */
  private compactVersion = 0;
  /** the revision observed at the previous interval: what the next one compacts to */
  private compactTarget = 0;
  private lastCompaction = 0;

  constructor(private readonly settings: EtcdSettings) {
    this.connection = new EtcdConnection(settings);
    this.keyPrefix = `${settings.prefix.replace(/\/+$/, '')}/`;
    this.compactKey = this.keyPrefix + compactKeyName;
    this.leases = new LeaseManager(async (ttlSeconds) => {
      const r = await retrying(writeBudgetMs, attemptMs, (options) => this.connection.leases.leaseGrant({ TTL: ttlSeconds }, options));
      return { id: r.ID, ttlSeconds: Number(r.TTL) };
    });
  }

  onChanges(listener: (events: ChangeEvent[], revision: number) => void): void { this.changeListener = listener; }
  onFailure(listener: (message: string) => void): void { this.failureListener = listener; }

  async load(): Promise<LoadedState> {
    const snapshot = await this.snapshot();
    const items: StoredItem[] = [];
    for (const kv of snapshot.kvs) {
      const key = kv.key.toString('utf8');
      if (key === this.compactKey) {
        this.compactRevision = Number(kv.value.toString('utf8')) || 0;
        continue;
      }
      const item = this.item(kv);
      items.push(item);
      this.countKey(resourceOf(item.key), 1);
    }
    this.reported = snapshot.revision;
    this.lastCompaction = Date.now();
    const rangeKey = Buffer.from(this.keyPrefix);
    this.watch = new EtcdWatch(this.connection, rangeKey, prefixEnd(rangeKey), {
      changes: (events, revision) => this.report(events, revision),
      lost: (message) => this.failureListener?.(message),
    });
    // the first change can arrive no sooner than an I/O callback, after the caller has the state
    this.watch.start(snapshot.revision + 1);
    return { revision: snapshot.revision, compactRevision: this.compactRevision, items };
  }

  /**
   * Commits each mutation as its own transaction (etcd refuses one that writes a key twice):
   * mutations of one key in order, different keys concurrently, so etcd batches them into few
   * raft proposals. Results only: the changes arrive through the watch.
   */
  async apply(batch: readonly Mutation[]): Promise<CommitOutcome> {
    const chains = new Map<string, Mutation[]>();
    for (const m of batch) {
      const chain = chains.get(m.key);
      if (chain) chain.push(m); else chains.set(m.key, [m]);
    }
    const results = new Map<number, MutationResult>();
    const queue = [...chains.values()];
    let next = 0;
    const worker = async () => {
      while (next < queue.length) {
        for (const m of queue[next++]) results.set(m.id, await this.applyOne(m));
      }
    };
    await Promise.all(Array.from({ length: Math.min(maxInFlight, queue.length) }, worker));
    return { events: [], results: batch.map((m) => results.get(m.id) as MutationResult) };
  }

  private async applyOne(m: Mutation): Promise<MutationResult> {
    const key = Buffer.from(this.keyPrefix + m.key);
    try {
      return await retrying(writeBudgetMs, attemptMs, async (options, attempt) => {
        for (let renewed = false; ; renewed = true) {
          const lease = m.ttlMs && m.op !== 'delete' ? await this.leases.leaseFor(m.ttlMs, Date.now()) : undefined;
          try {
            return this.outcome(m, await this.connection.kv.txn(this.txnFor(m, key, lease, attempt > 0), options), attempt > 0);
          } catch (err) {
            // a shared lease that ran out early (e.g. revoked): etcd refused the write, so take a new one
            if (!(lease && err instanceof EtcdLeaseInvalidError) || renewed) throw err;
            this.leases.forget(lease);
          }
        }
      });
    } catch (err) {
      return { id: m.id, ok: false, failure: 'unavailable', message: `etcd: ${(err as Error).message}` };
    }
  }

  private txnFor(m: Mutation, key: Buffer, lease: string | undefined, retried: boolean): ITxnRequest {
    const compare: ICompare[] = [];
    if (m.op === 'create') compare.push({ key, target: 'Create', result: 'Equal', create_revision: 0 });
    else if (m.expectedRevision !== undefined) compare.push({ key, target: 'Mod', result: 'Equal', mod_revision: m.expectedRevision });
    else {
      compare.push({ key, target: 'Create', result: 'Greater', create_revision: 0 }); // exists
      if (retried && m.op === 'update') compare.push({ key, target: 'Value', result: 'NotEqual', value: Buffer.from(m.value as string) });
    }
    const write: IRequestOp = m.op === 'delete'
      ? { request_delete_range: { key } }
      : { request_put: { key, value: Buffer.from(m.value as string), lease } };
    // when the condition fails, the key's current state tells why
    return { compare, success: [write], failure: [{ request_range: { key } }] };
  }

  /** Maps a transaction's answer to the failures SqliteEngine reports for the same preconditions. */
  private outcome(m: Mutation, r: ITxnResponse, retried: boolean): MutationResult {
    if (r.succeeded) return { id: m.id, ok: true, revision: Number(r.header.revision) };
    const current: IKeyValue | undefined = r.responses[0]?.response_range?.kvs[0];
    // a retry whose earlier attempt did commit finds its own value (fresh uid, timestamps) in place
    if (retried && current && m.value !== undefined && current.value.equals(Buffer.from(m.value))) {
      return { id: m.id, ok: true, revision: Number(current.mod_revision) };
    }
    if (m.op === 'create') return { id: m.id, ok: false, failure: 'exists' };
    return { id: m.id, ok: false, failure: current ? 'conflict' : 'notFound' };
  }

  /** Turns one watch response into change events; the compact key's writes are progress only. */
  private report(events: readonly IEvent[], revision: number): void {
    const changes: ChangeEvent[] = [];
    for (const e of events) {
      const fullKey = e.kv.key.toString('utf8');
      if (fullKey === this.compactKey) continue;
      const key = fullKey.slice(this.keyPrefix.length);
      const rev = Number(e.kv.mod_revision);
      if (e.type === 'Delete') {
        this.countKey(resourceOf(key), -1);
        changes.push({ revision: rev, type: 'DELETED', key });
      } else {
        // a key's version restarts at 1 whenever it is created
        const created = e.kv.version === '1';
        if (created) this.countKey(resourceOf(key), 1);
        changes.push({ revision: rev, type: created ? 'ADDED' : 'MODIFIED', key, value: e.kv.value.toString('utf8') });
      }
    }
    this.reported = revision;
    this.changeListener?.(changes, revision);
  }

  private countKey(resource: string, delta: number): void {
    this.liveKeys.set(resource, (this.liveKeys.get(resource) ?? 0) + delta);
  }

  /**
   * The current revision (a linearizable read), and whether the changes reported so far already
   * hold the state at it for the resource of `prefix`. They do when every change up to it has
   * been reported; else when, at that revision, no key of the resource was written after the
   * last reported change (none has a newer mod_revision) and none was deleted since (the count
   * of keys equals the reported count): then every key alive now was alive, unchanged, at the
   * reported revision, and no other. This needs no progress notification, which etcd before
   * 3.4.31 can send ahead of events (etcd#15220).
   */
  async currentRevision(prefix: string): Promise<CurrentRevision> {
    const resource = resourceOf(prefix);
    const reported = this.reported;
    const live = this.liveKeys.get(resource) ?? 0;
    const key = Buffer.from(`${this.keyPrefix}${resource}/`);
    const range_end = prefixEnd(key);
    // counting reads only etcd's index: cheap
    const counted = await retrying(readBudgetMs, attemptMs, (options) => this.connection.kv.range({ key, range_end, count_only: true }, options));
    const revision = Number(counted.header.revision);
    if (revision <= reported) return { revision, cacheCurrent: true };
    if (Number(counted.count) !== live) return { revision, cacheCurrent: false };
    // etcd filters by mod_revision after reading the range (and ignores the filter when counting)
    const newer = await retrying(readBudgetMs, attemptMs, (options) => this.connection.kv.range({
      key, range_end, revision, min_mod_revision: reported + 1, keys_only: true, limit: 1,
    }, options));
    return { revision, cacheCurrent: newer.kvs.length === 0 };
  }

  /** Every key under `prefix` at a past revision; undefined when etcd has compacted it. */
  async readAt(prefix: string, revision: number): Promise<StoredItem[] | undefined> {
    try {
      const { kvs } = await this.rangeAt(this.keyPrefix + prefix, revision, readBudgetMs);
      const items: StoredItem[] = [];
      for (const kv of kvs) if (kv.key.toString('utf8') !== this.compactKey) items.push(this.item(kv));
      return items;
    } catch (err) {
      if (isCompacted(err)) return undefined;
      throw err;
    }
  }

  /** Every key under the prefix at the current revision, read in pages at that one revision. */
  private async snapshot(): Promise<{ revision: number; kvs: IKeyValue[] }> {
    for (;;) {
      try {
        return await this.rangeAt(this.keyPrefix, 0, loadBudgetMs);
      } catch (err) {
        if (!isCompacted(err)) throw err; // compacted between two pages: read again at a newer revision
      }
    }
  }

  /** Pages through a prefix at one revision (0: the current one, fixed by the first page). */
  private async rangeAt(prefix: string, revision: number, budgetMs: number): Promise<{ revision: number; kvs: IKeyValue[] }> {
    const range_end = prefixEnd(Buffer.from(prefix));
    const kvs: IKeyValue[] = [];
    let key = Buffer.from(prefix);
    let at = revision;
    for (;;) {
      const r = await retrying(budgetMs, attemptMs, (options) => this.connection.kv.range({ key, range_end, limit: pageSize, revision: at }, options));
      if (at === 0) at = Number(r.header.revision);
      for (const kv of r.kvs) kvs.push(kv);
      if (!r.more || r.kvs.length === 0) return { revision: at, kvs };
      key = Buffer.concat([r.kvs[r.kvs.length - 1].key, Buffer.from([0])]);
    }
  }

  private item(kv: IKeyValue): StoredItem {
    return { key: kv.key.toString('utf8').slice(this.keyPrefix.length), revision: Number(kv.mod_revision), value: kv.value.toString('utf8') };
  }

  /**
   * Leases expire inside etcd (their deletions arrive through the watch). Every
   * --etcd-compaction-interval, compacts to the revision observed one interval earlier, so
   * history is kept for at least an interval. Replicas take turns through a CAS on the compact
   * key's version: each interval, one of them compacts.
   */
  async maintain(now: number): Promise<{ events: ChangeEvent[]; compactRevision: number }> {
    const interval = this.settings.compactionIntervalMs;
    if (interval > 0 && now - this.lastCompaction >= interval) {
      this.lastCompaction = now;
      await this.compactOnce();
    }
    return { events: [], compactRevision: this.compactRevision };
  }

  private async compactOnce(): Promise<void> {
    const key = Buffer.from(this.compactKey);
    const r = await retrying(writeBudgetMs, attemptMs, (options) => this.connection.kv.txn({
      compare: [{ key, target: 'Version', result: 'Equal', version: this.compactVersion }],
      success: [{ request_put: { key, value: Buffer.from(String(this.compactTarget)) } }],
      failure: [{ request_range: { key } }],
    }, options));
    const observed = Number(r.header.revision);
    if (!r.succeeded) {
      // another replica took this interval: adopt its clock and what it compacted to
      const kv = r.responses[0]?.response_range?.kvs[0];
      this.compactVersion = kv ? Number(kv.version) : 0;
      if (kv) this.compactRevision = Math.max(this.compactRevision, Number(kv.value.toString('utf8')) || 0);
      this.compactTarget = observed;
      return;
    }
    this.compactVersion++;
    const target = this.compactTarget;
    this.compactTarget = observed;
    if (target === 0) return; // the first interval only observes
    try {
      await retrying(writeBudgetMs, attemptMs, (options) => this.connection.kv.compact({ revision: target }, options));
    } catch (err) {
      if (!isCompacted(err)) throw err;
    }
    this.compactRevision = Math.max(this.compactRevision, target);
  }

  /** A quorum read, and a watch that is up: what serving needs. Fails while etcd has no quorum. */
  async ping(): Promise<void> {
    const problem = this.watch?.problem(Date.now(), watchGraceMs);
    if (problem) throw new Error(problem);
    await retrying(pingBudgetMs, pingBudgetMs, (options) => this.connection.kv.range({ key: Buffer.from(this.compactKey), count_only: true }, options));
  }

  async close(): Promise<void> {
    this.watch?.close();
    this.connection.close();
  }
}
