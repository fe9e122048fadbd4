/**
 * The embedded engine: one SQLite file holding an append-only revision log in the style of kine.
 * Used only by the writer worker, synchronously. Every row is one revision; the latest row of a
 * key is its current state. History older than the retention window is compacted away.
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { CommitOutcome, StorageEngine } from './engine.js';
import type { ChangeEvent, LoadedState, Mutation, MutationResult, StoredItem } from './storage.js';

interface KeyState { revision: number; expiresAt: number }

/** A binary min-heap of lease expiries; stale entries are skipped when popped. */
class LeaseHeap {
  private readonly items: Array<{ at: number; key: string; revision: number }> = [];
  get size(): number { return this.items.length; }
  peek(): { at: number; key: string; revision: number } | undefined { return this.items[0]; }
  push(item: { at: number; key: string; revision: number }): void {
    const a = this.items;
    a.push(item);
    for (let i = a.length - 1; i > 0;) {
      const p = (i - 1) >> 1;
      if (a[p].at <= a[i].at) break;
      [a[p], a[i]] = [a[i], a[p]];
      i = p;
    }
  }
  pop(): void {
    const a = this.items;
    const last = a.pop();
    if (!last || a.length === 0) return;
    a[0] = last;
    for (let i = 0; ;) {
      const l = 2 * i + 1, r = l + 1;
      let m = i;
      if (l < a.length && a[l].at < a[m].at) m = l;
      if (r < a.length && a[r].at < a[m].at) m = r;
      if (m === i) break;
      [a[m], a[i]] = [a[i], a[m]];
      i = m;
    }
  }
}

export class SqliteEngine implements StorageEngine {
  private readonly db: Database.Database;
  private revision = 0;
  private compactRevision = 0;
  /** current revision and lease of every live key: preconditions are checked here, not by a read */
  private readonly keys = new Map<string, KeyState>();
  private readonly leases = new LeaseHeap();
  private readonly insert: Database.Statement;

  constructor(dataDir: string) {
    mkdirSync(dataDir, { recursive: true });
    this.db = new Database(join(dataDir, 'state.db'));
    this.db.pragma('journal_mode = WAL');
    // FULL: a commit is on disk before it is acknowledged, power loss included
    this.db.pragma('synchronous = FULL');
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS log (
        revision INTEGER PRIMARY KEY,
        key TEXT NOT NULL,
        deleted INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        committed_at INTEGER NOT NULL,
        value TEXT
      );
      CREATE INDEX IF NOT EXISTS log_key_revision ON log (key, revision);
      CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
    `);
    this.insert = this.db.prepare('INSERT INTO log (revision, key, deleted, expires_at, committed_at, value) VALUES (?, ?, ?, ?, ?, ?)');
  }

  async load(): Promise<LoadedState> {
    const max = this.db.prepare('SELECT MAX(revision) AS r FROM log').get() as { r: number | null };
    const compact = this.db.prepare("SELECT value FROM meta WHERE name = 'compact_revision'").get() as { value: number } | undefined;
    this.compactRevision = compact?.value ?? 0;
    this.revision = Math.max(max.r ?? 0, this.compactRevision);
    const rows = this.db.prepare(`
      SELECT l.key AS key, l.revision AS revision, l.value AS value, l.expires_at AS expiresAt
      FROM log l JOIN (SELECT key, MAX(revision) AS r FROM log GROUP BY key) latest
        ON l.key = latest.key AND l.revision = latest.r
      WHERE l.deleted = 0 ORDER BY l.key`).all() as Array<{ key: string; revision: number; value: string; expiresAt: number }>;
    const items = new Array<{ key: string; revision: number; value: string }>(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      this.keys.set(row.key, { revision: row.revision, expiresAt: row.expiresAt });
      if (row.expiresAt > 0) this.leases.push({ at: row.expiresAt, key: row.key, revision: row.revision });
      items[i] = { key: row.key, revision: row.revision, value: row.value };
    }
    return { revision: this.revision, compactRevision: this.compactRevision, items };
  }

  /**
   * Checks every mutation's precondition, then commits all that pass in one durable transaction
   * (group commit). A batch may touch one key more than once; later mutations see earlier ones.
   */
  async apply(batch: readonly Mutation[], now: number): Promise<CommitOutcome> {
    const events: ChangeEvent[] = [];
    const results: MutationResult[] = [];
    const staged = new Map<string, KeyState | null>();
    const current = (key: string): KeyState | undefined => {
      const s = staged.get(key);
      return s === null ? undefined : s ?? this.keys.get(key);
    };
    let revision = this.revision;
    for (const m of batch) {
      const existing = current(m.key);
      if (m.op === 'create' && existing) { results.push({ id: m.id, ok: false, failure: 'exists' }); continue; }
      if (m.op !== 'create') {
        if (!existing) { results.push({ id: m.id, ok: false, failure: 'notFound' }); continue; }
        if (m.expectedRevision !== undefined && m.expectedRevision !== existing.revision) {
          results.push({ id: m.id, ok: false, failure: 'conflict' });
          continue;
        }
      }
      revision++;
      if (m.op === 'delete') {
        staged.set(m.key, null);
        events.push({ revision, type: 'DELETED', key: m.key, mutationId: m.id });
      } else {
        const expiresAt = m.ttlMs ? now + m.ttlMs : 0;
        staged.set(m.key, { revision, expiresAt });
        events.push({ revision, type: m.op === 'create' ? 'ADDED' : 'MODIFIED', key: m.key, value: m.value, mutationId: m.id });
      }
      results.push({ id: m.id, ok: true, revision });
    }
    this.commit(events, staged, now);
    return { events, results };
  }

  async maintain(now: number, historyMs: number): Promise<{ events: ChangeEvent[]; compactRevision: number }> {
    const events = this.expireLeases(now);
    return { events, compactRevision: this.compact(now - historyMs) };
  }

  /** Deletes keys whose lease ran out, as etcd does when a lease expires. */
  private expireLeases(now: number): ChangeEvent[] {
    const events: ChangeEvent[] = [];
    const staged = new Map<string, KeyState | null>();
    let revision = this.revision;
    for (let top = this.leases.peek(); top && top.at <= now; top = this.leases.peek()) {
      this.leases.pop();
      const state = this.keys.get(top.key);
      if (!state || state.revision !== top.revision || staged.has(top.key)) continue;
      revision++;
      staged.set(top.key, null);
      events.push({ revision, type: 'DELETED', key: top.key });
    }
    this.commit(events, staged, now);
    return events;
  }

  private commit(events: ChangeEvent[], staged: Map<string, KeyState | null>, now: number): void {
    if (events.length === 0) return;
    const write = this.db.transaction(() => {
      for (const e of events) {
        const state = staged.get(e.key);
        this.insert.run(e.revision, e.key, e.type === 'DELETED' ? 1 : 0, state?.expiresAt ?? 0, now, e.value ?? null);
      }
    });
    write();
    // only a committed transaction changes what the engine believes is stored
    this.revision = events[events.length - 1].revision;
    for (const [key, state] of staged) {
      if (state === null) this.keys.delete(key);
      else {
        this.keys.set(key, state);
        if (state.expiresAt > 0) this.leases.push({ at: state.expiresAt, key, revision: state.revision });
      }
    }
  }

  /** Drops history committed before `olderThan` that a later revision supersedes. Returns the new compact revision. */
  private compact(olderThan: number): number {
    const row = this.db.prepare('SELECT MAX(revision) AS r FROM log WHERE committed_at < ?').get(olderThan) as { r: number | null };
    const target = row.r ?? 0;
    if (target <= this.compactRevision) return this.compactRevision;
    this.db.transaction(() => {
      this.db.prepare(`DELETE FROM log WHERE revision <= @c AND (deleted = 1 OR revision <
        (SELECT MAX(l2.revision) FROM log l2 WHERE l2.key = log.key AND l2.revision <= @c))`).run({ c: target });
      this.db.prepare("INSERT INTO meta (name, value) VALUES ('compact_revision', ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value").run(target);
    })();
    this.compactRevision = target;
    return target;
  }

  /** Every live key under `prefix` as of `revision`, from history; undefined when compacted away. */
  async readAt(prefix: string, revision: number): Promise<StoredItem[] | undefined> {
    if (revision < this.compactRevision) return undefined;
    // keys under a prefix are a contiguous range: [prefix, prefix + U+FFFF)
    return this.db.prepare(`
      SELECT l.key AS key, l.revision AS revision, l.value AS value FROM log l
      JOIN (SELECT key, MAX(revision) AS r FROM log WHERE key >= @lo AND key < @hi AND revision <= @rev GROUP BY key) at
        ON l.key = at.key AND l.revision = at.r
      WHERE l.deleted = 0 ORDER BY l.key`).all({ lo: prefix, hi: `${prefix}\uffff`, rev: revision }) as StoredItem[];
  }

  /** A cheap query proving the file is readable; the storage health check. */
  async ping(): Promise<void> { this.db.prepare('SELECT 1').get(); }

  async close(): Promise<void> { this.db.close(); }
}
