/**
 * The recent changes a watch can resume from: every committed change after `floor`, kept for the
 * history window and bounded in count. A watch from a revision below the floor has missed
 * changes this process no longer holds, and is told so with 410. Changes age out on a timer as
 * well as on writes, so a quiet server stops offering versions older than its window.
 *
 * The versions a change superseded (its `previous`, and a deletion's last state) are kept as JSON
 * only once the change is `parsedMs` old: live fan-out has long used them by then, and a catch-up
 * that reads one parses it again. That takes a change from about 1.7 KB to 0.8 KB for a 500-byte
 * object (docs/decisions.md, "The change log stays on the front thread").
 */
import type { ObjectChange } from '../store/read-model.js';

export class ChangeLog {
  private changes: ObjectChange[] = [];
  private times: number[] = [];
  private head = 0;
  /** changes before this index keep their superseded versions as JSON only */
  private jsonOnly = 0;
  /** every change with a revision above this is in the log */
  floor: number;

  private readonly trimmer: NodeJS.Timeout;

  constructor(startRevision: number, private readonly retentionMs: number, private readonly maxChanges = 100_000, private readonly parsedMs = 10_000) {
    this.floor = startRevision;
    // a second's lag past the window is as precise as a window of minutes needs; short windows check more often
    this.trimmer = setInterval(() => this.trim(Date.now()), Math.max(10, Math.min(1000, retentionMs / 2)));
    this.trimmer.unref();
  }

  close(): void {
    clearInterval(this.trimmer);
  }

  append(changes: readonly ObjectChange[], now: number): void {
    for (const c of changes) {
      this.changes.push(c);
      this.times.push(now);
    }
    this.trim(now);
  }

  private trim(now: number): void {
    const cutoff = now - this.retentionMs;
    while (this.head < this.changes.length && (this.changes.length - this.head > this.maxChanges || this.times[this.head] < cutoff)) {
      this.floor = this.changes[this.head].revision;
      this.head++;
    }
    const parsedCutoff = now - this.parsedMs;
    for (this.jsonOnly = Math.max(this.jsonOnly, this.head); this.jsonOnly < this.changes.length && this.times[this.jsonOnly] <= parsedCutoff; this.jsonOnly++) {
      const c = this.changes[this.jsonOnly];
      c.previous?.keepJsonOnly();
      if (c.type === 'DELETED') c.object.keepJsonOnly();
    }
    // compact the arrays once the dead prefix dominates, keeping appends amortized O(1)
    if (this.head > 1024 && this.head * 2 > this.changes.length) {
      this.changes = this.changes.slice(this.head);
      this.times = this.times.slice(this.head);
      this.jsonOnly -= this.head;
      this.head = 0;
    }
  }

  /** Changes of `resource` after `revision`, in order; undefined if some are no longer held. */
  since(revision: number, resource: string): ObjectChange[] | undefined {
    if (revision < this.floor) return undefined;
    let lo = this.head, hi = this.changes.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.changes[mid].revision <= revision) lo = mid + 1; else hi = mid;
    }
    const out: ObjectChange[] = [];
    for (let i = lo; i < this.changes.length; i++) if (this.changes[i].resource === resource) out.push(this.changes[i]);
    return out;
  }
}
