/**
 * Watchers that select nothing within their path (every change of a resource, or of one namespace
 * of it) and share one frame key: each change is the same frame for all of them. The group takes
 * a change once, appending its frame to a log, and a pass over the members gives each, in one
 * write, the frames past its cursor; members at the same cursor share them, joined into one. A change
 * thus costs the fan-out one offer per group, not one per watcher (at 1,000 watchers the
 * per-watcher offers were an eighth of the front thread's work, at 5,000 most of what it had left).
 */
import { coalesceFrames, joinFrames, type Frame, type FrameRuns, type FrameSource, type FrameSubject } from './frames.js';
import { clockEvery, type Flushable, type Slice } from './flush-queue.js';
import type { ObjectChange } from '../store/read-model.js';
import type { Watcher } from './watcher.js';

export class WatcherGroup implements Flushable {
  readonly members = new Set<Watcher>();
  queued = false;
  /** the frames offered, `frames[i]` at position `base + i`, with their changes' revisions */
  private frames: Frame[] = [];
  private revisions: number[] = [];
  private base = 0;
  /** the pass under way, resumed slice after slice; members joining during it are visited too */
  private pass: Iterator<Watcher> | undefined;
  /**
   * What members are written, by first position, valid while the log ends at `writtenEnd`: the
   * frames as one (`joined`), or apart for members that take one event per frame (`apart`)
   */
  private readonly joined = new Map<number, readonly Frame[]>();
  private readonly apart = new Map<number, readonly Frame[]>();
  private writtenEnd = -1;

  /**
   * `key` names the group among its resource's; `pooled`: its frames come from the encoder pool;
   * `subject`: the frame key and spec every member shares (frames are built for it)
   */
  constructor(readonly key: string, readonly pooled: boolean, readonly subject: FrameSubject, private readonly pathPrefix: string | undefined) {}

  /** position after the last frame offered */
  private get end(): number { return this.base + this.frames.length; }

  /** A new member is given the changes offered from now on that come after its start. */
  join(w: Watcher): void {
    w.group = this;
    w.cursor = this.end;
    this.members.add(w);
  }

  leave(w: Watcher): void {
    this.members.delete(w);
  }

  /**
   * Logs the frame a change is for every member, by the cacher's rules for a watch that selects
   * nothing: ADDED, MODIFIED, or DELETED with the object as it was. False when it is for none.
   */
  offer(change: ObjectChange, source: FrameSource): boolean {
    if (this.pathPrefix && !change.path.startsWith(this.pathPrefix)) return false;
    if (change.type === 'DELETED' && change.previous === undefined) return false;
    const type = change.type === 'DELETED' ? 'DELETED' : change.previous === undefined ? 'ADDED' : 'MODIFIED';
    this.frames.push(source.frame(type, this.subject));
    this.revisions.push(change.revision);
    return true;
  }

  /**
   * Gives members their frames, one write each, until the pass is over (true) or the slice ran
   * out of time or writes (false: the flush queue resumes it first in its next slice).
   */
  flush(maxBufferedBytes: number, runs: FrameRuns, slice: Slice): boolean {
    const pass = (this.pass ??= this.members.values());
    for (let n = 1; ; n++) {
      if (slice.writes <= 0 || (n % clockEvery === 0 && performance.now() >= slice.until)) return false;
      const next = pass.next();
      if (next.done) break;
      if (this.give(next.value, maxBufferedBytes, runs)) slice.writes--;
    }
    this.pass = undefined;
    this.trim();
    return true;
  }

  /** Writes what `w` has not been given yet; false when there was nothing. */
  private give(w: Watcher, maxBufferedBytes: number, runs: FrameRuns): boolean {
    const end = this.end;
    let from = w.cursor;
    if (from >= end) return false;
    w.cursor = end;
    // changes up to a member's start are not its own: its catch-up covered them
    while (from < end && this.revisions[from - this.base] <= w.startRevision) from++;
    if (from === end) return false;
    if (this.writtenEnd !== end) {
      this.joined.clear();
      this.apart.clear();
      this.writtenEnd = end;
    }
    const first = from - this.base;
    const last = end - this.base;
    const written = w.takesMerged ? this.joined : this.apart;
    let frames = written.get(from);
    if (!frames) {
      const slice = this.frames.slice(first, last);
      if (w.takesMerged) {
        // adjacent frames of a slab are one view already; others are copied together once for all members
        const merged = coalesceFrames(slice, slice.length, runs);
        frames = merged.length > 1 ? [joinFrames(merged)] : merged;
      } else {
        frames = slice;
      }
      written.set(from, frames);
    }
    w.deliver(this.frames, first, last, frames, maxBufferedBytes);
    return true;
  }

  /** Drops the frames every member has been given: only a member still behind keeps the log's tail. */
  private trim(): void {
    let lowest = this.end;
    for (const w of this.members) if (w.cursor < lowest) lowest = w.cursor;
    if (lowest === this.base) return;
    if (lowest === this.end) {
      this.frames = [];
      this.revisions = [];
    } else {
      this.frames = this.frames.slice(lowest - this.base);
      this.revisions = this.revisions.slice(lowest - this.base);
    }
    this.base = lowest;
    this.joined.clear();
    this.apart.clear();
    this.writtenEnd = -1;
  }
}
