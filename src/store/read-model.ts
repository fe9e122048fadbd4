/**
 * The front thread's copy of storage: per resource, a sorted map from `namespace/name` to the
 * current object, snapshot-able in O(1) (copy-on-write B+tree). Gets and lists are served from it
 * without asking the writer. It applies committed events in revision order and tells listeners
 * (watches, controllers) what changed, each change decoded once.
 */
import sortedBtree from 'sorted-btree';
import { atResourceVersion } from '../api/json-copy.js';
import type { KObject } from '../api/meta.js';
import type { ChangeEvent, ChangeType, LoadedState, StoredItem } from './storage.js';

// sorted-btree is CommonJS with the class on `default`
const BTree = sortedBtree.default;
type BTree<K, V> = InstanceType<typeof sortedBtree.default<K, V>>;

/**
 * Keys are strings: compared as `<` compares them, the order sorted-btree's default comparator
 * gives strings, without its checks for numbers and mixed types (a fifth of a get's time).
 */
const compareKeys = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const newTable = (): Table => new BTree<string, StoredObject>(undefined, compareKeys);

/** One stored object as the read model holds it: parsed once, serialized at most once. */
export class StoredObject {
  private parsed: Readonly<KObject> | undefined;
  private itemJsonCache: string | undefined;
  /** `json` may be given when the exact bytes are already known (the committed value) */
  constructor(object: Readonly<KObject>, readonly revision: number, private jsonCache?: string) {
    this.parsed = object;
  }

  /** the object version; parsed again from its JSON if the change log kept only that */
  get object(): Readonly<KObject> {
    return (this.parsed ??= JSON.parse(this.jsonCache as string) as KObject);
  }

  /** the JSON every client of this object version receives, kind and apiVersion included */
  get json(): string {
    return (this.jsonCache ??= JSON.stringify(this.parsed));
  }

  /**
   * Keeps this version as its JSON only: the change log's superseded versions are read again by
   * catch-ups alone, and the parsed form was two thirds of their memory (docs/decisions.md).
   */
  keepJsonOnly(): void {
    if (this.parsed === undefined) return;
    this.jsonCache ??= JSON.stringify(this.parsed);
    this.parsed = undefined;
    this.itemJsonCache = undefined;
  }

  /** whether the parsed form is held (false once `keepJsonOnly` dropped it, until it is read again) */
  get isParsed(): boolean {
    return this.parsed !== undefined;
  }

  /**
   * The JSON of the object as an item of a built-in list, which carries no kind or apiVersion.
   * Objects are stored with kind and apiVersion first, so this is a slice of `json`, not a second
   * serialization.
   */
  get itemJson(): string {
    if (this.itemJsonCache !== undefined) return this.itemJsonCache;
    const json = this.json;
    const { kind, apiVersion } = this.object;
    const prefix = `{"kind":${JSON.stringify(kind)},"apiVersion":${JSON.stringify(apiVersion)},`;
    if (json.startsWith(prefix)) {
      this.itemJsonCache = `{${json.slice(prefix.length)}`;
    } else {
      const { kind: _k, apiVersion: _v, ...rest } = this.object;
      this.itemJsonCache = JSON.stringify(rest);
    }
    return this.itemJsonCache;
  }
}

export type Table = BTree<string, StoredObject>;

/** A committed change as listeners see it: the object after (or, for DELETED, at) the change. */
export interface ObjectChange {
  type: ChangeType;
  revision: number;
  resource: string;
  /** `namespace/name` or `name`: the key inside the resource's table */
  path: string;
  object: StoredObject;
  /** the object before the change (MODIFIED, DELETED) */
  previous?: StoredObject;
  mutationId?: number;
}

export type ChangeListener = (changes: readonly ObjectChange[]) => void;

function splitKey(key: string): [resource: string, path: string] {
  const slash = key.indexOf('/');
  return [key.slice(0, slash), key.slice(slash + 1)];
}

const rvPlaceholder = '"resourceVersion":""';

/**
 * The served JSON of a committed value: objects are stored with an empty resourceVersion in
 * metadata's canonical position (before any user-controlled string), so the first occurrence is
 * that field and the commit's revision is spliced in instead of serializing the object again.
 */
function servedJson(value: string, revision: number): string | undefined {
  const at = value.indexOf(rvPlaceholder);
  if (at < 0) return undefined;
  return `${value.slice(0, at)}"resourceVersion":"${revision}"${value.slice(at + rvPlaceholder.length)}`;
}

/** Decodes stored JSON and stamps the revision that stored it as the object's resourceVersion. */
function decodeStored(value: string, revision: number): StoredObject {
  const object = JSON.parse(value) as KObject;
  object.metadata.resourceVersion = String(revision);
  return new StoredObject(object, revision, servedJson(value, revision));
}

/** A table built from items read out of history (a past revision no snapshot holds). */
export function tableOf(items: readonly StoredItem[]): Table {
  const table = newTable();
  for (const item of items) table.set(splitKey(item.key)[1], decodeStored(item.value, item.revision));
  return table;
}

export class ReadModel {
  private readonly tables = new Map<string, Table>();
  private readonly listeners: ChangeListener[] = [];
  private waiters: Array<{ revision: number; resolve: () => void }> = [];
  private currentRevision: number;
  private compacted: number;

  constructor(state: LoadedState) {
    this.currentRevision = state.revision;
    this.compacted = state.compactRevision;
    for (const item of state.items) {
      const [resource, path] = splitKey(item.key);
      this.table(resource).set(path, decodeStored(item.value, item.revision));
    }
  }

  get revision(): number { return this.currentRevision; }
  get compactRevision(): number { return this.compacted; }
  setCompactRevision(revision: number): void { this.compacted = Math.max(this.compacted, revision); }

  table(resource: string): Table {
    let t = this.tables.get(resource);
    if (!t) {
      t = newTable();
      this.tables.set(resource, t);
    }
    return t;
  }

  get(resource: string, path: string): StoredObject | undefined {
    return this.tables.get(resource)?.get(path);
  }

  /** An O(1) frozen view of one resource at the current revision, for paging. */
  snapshot(resource: string): { revision: number; table: Table } {
    return { revision: this.currentRevision, table: this.table(resource).clone() };
  }

  onChange(listener: ChangeListener): () => void {
    this.listeners.push(listener);
    return () => {
      const i = this.listeners.indexOf(listener);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  /**
   * Applies committed events (in revision order), then tells listeners, then wakes readers
   * waiting for these revisions, so that a writer's response always follows its own change.
   * `own` holds objects this process already built for its mutations, saving a parse.
   */
  apply(events: readonly ChangeEvent[], own?: ReadonlyMap<number, KObject>): void {
    if (events.length === 0) return;
    const changes: ObjectChange[] = [];
    // several events may share a revision (etcd deletes every key of an expired lease at once)
    const applied = this.currentRevision;
    for (const e of events) {
      if (e.revision <= applied) continue; // already applied (a replayed watch)
      const [resource, path] = splitKey(e.key);
      const table = this.table(resource);
      const previous = table.get(path);
      let object: StoredObject;
      if (e.type === 'DELETED') {
        if (!previous) { this.currentRevision = e.revision; continue; }
        // a deletion is reported with the object's last state at the deletion's revision
        object = new StoredObject(atResourceVersion(previous.object, String(e.revision)), e.revision);
        table.delete(path);
      } else {
        const mine = e.mutationId !== undefined ? own?.get(e.mutationId) : undefined;
        if (mine) {
          mine.metadata.resourceVersion = String(e.revision);
          object = new StoredObject(mine, e.revision, e.value !== undefined ? servedJson(e.value, e.revision) : undefined);
        } else {
          object = decodeStored(e.value as string, e.revision);
        }
        table.set(path, object);
      }
      this.currentRevision = e.revision;
      changes.push({ type: e.type === 'DELETED' ? 'DELETED' : previous ? 'MODIFIED' : 'ADDED', revision: e.revision, resource, path, object, previous, mutationId: e.mutationId });
    }
    for (const l of this.listeners) l(changes);
    this.wake();
  }

  /**
   * Records that storage has no change for this model up to `revision` beyond those applied
   * (etcd reports such progress): reads waiting for it may go ahead.
   */
  advance(revision: number): void {
    if (revision <= this.currentRevision) return;
    this.currentRevision = revision;
    this.wake();
  }

  /** Resolves once the read model has applied `revision`. */
  waitFor(revision: number): Promise<void> {
    if (revision <= this.currentRevision) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ revision, resolve }));
  }

  private wake(): void {
    if (this.waiters.length === 0) return;
    const still: typeof this.waiters = [];
    for (const w of this.waiters) {
      if (w.revision <= this.currentRevision) w.resolve();
      else still.push(w);
    }
    this.waiters = still;
  }
}
