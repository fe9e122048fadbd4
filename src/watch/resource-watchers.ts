/**
 * The watchers of one resource, filed for fan-out: a watcher that selects nothing within its path
 * joins the group of its frame key and path (a change is offered once per group), one that
 * selects goes into the watcher index (a change visits only its candidates, each running its
 * selector).
 */
import type { ObjectChange, StoredObject } from '../store/read-model.js';
import type { FrameSource } from './frames.js';
import { WatcherGroup } from './watcher-group.js';
import { WatcherIndex, type IndexedObject } from './watcher-index.js';
import type { Watcher } from './watcher.js';

/** What the watcher index reads of an object version. */
function indexed(stored: StoredObject): IndexedObject {
  const { name, namespace, labels } = stored.object.metadata;
  return { name: name ?? '', namespace, labels };
}

export class ResourceWatchers {
  private readonly index = new WatcherIndex<Watcher>();
  private readonly groups = new Map<string, WatcherGroup>();
  /** every watcher, and those whose frames are built on the front thread rather than by the pool */
  size = 0;
  inline = 0;

  add(w: Watcher): void {
    this.size++;
    if (!w.pooled) this.inline++;
    const spec = w.spec;
    if (spec.filtered) {
      this.index.add(w, spec.indexTerm ?? { by: 'all' });
      return;
    }
    const key = `${w.pooled ? 'pool' : 'inline'}|${w.frameKey}|${spec.pathPrefix ?? ''}`;
    let group = this.groups.get(key);
    if (!group) this.groups.set(key, (group = new WatcherGroup(key, w.pooled, { frameKey: w.frameKey, spec }, spec.pathPrefix)));
    group.join(w);
  }

  delete(w: Watcher): void {
    this.size--;
    if (!w.pooled) this.inline--;
    const group = w.group;
    if (!group) {
      this.index.delete(w);
      return;
    }
    group.leave(w);
    // a pass still queued over the emptied group finds nobody to write
    if (group.members.size === 0) this.groups.delete(group.key);
  }

  /** Every watcher (bookmarks, shutdown). */
  *all(): Generator<Watcher> {
    yield* this.index.all();
    for (const group of this.groups.values()) yield* group.members;
  }

  /**
   * Offers a change to the watchers whose frames `source` builds (pooled or inline ones), and
   * calls `queue` with each watcher or group it gave a frame.
   */
  offer(change: ObjectChange, source: FrameSource, pooled: boolean, queue: (taken: Watcher | WatcherGroup) => void): void {
    for (const group of this.groups.values()) {
      if (group.pooled === pooled && group.offer(change, source)) queue(group);
    }
    if (this.index.size === 0) return;
    this.index.forCandidates(indexed(change.object), change.previous && indexed(change.previous), (w) => {
      if (w.pooled === pooled && w.offer(change, source)) queue(w);
    });
  }
}
