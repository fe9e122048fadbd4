/**
 * Frozen views of a resource's table at a revision, kept while continue tokens may name them.
 * A clone is O(1) (copy-on-write); what it costs is the nodes the live table copies afterwards,
 * so the cache is bounded in count and age.
 */
import type { Table } from './read-model.js';

interface Entry { table: Table; expiresAt: number }

export class SnapshotCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly ttlMs: number, private readonly maxEntries = 256) {}

  get(resource: string, revision: number, now: number): Table | undefined {
    const key = `${resource}@${revision}`;
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expiresAt <= now) { this.entries.delete(key); return undefined; }
    return e.table;
  }

  /** Keeps `table` for the token lifetime; a second page at the same revision reuses it. */
  put(resource: string, revision: number, table: Table, now: number): void {
    const key = `${resource}@${revision}`;
    if (this.entries.has(key)) return;
    this.evict(now);
    this.entries.set(key, { table, expiresAt: now + this.ttlMs });
  }

  private evict(now: number): void {
    for (const [key, e] of this.entries) if (e.expiresAt <= now) this.entries.delete(key);
    // Map iteration is insertion order: the oldest snapshot goes first
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }
}
