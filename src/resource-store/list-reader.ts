/**
 * Reads of one resource for a view: lists at the revision their resourceVersion semantics ask
 * for (the read model, a kept snapshot, or the store's history), paged by continue tokens over one
 * consistent snapshot; selection by label and field selectors; waits for a future revision.
 */
import type { KindDeclaration } from '../api/kind.js';
import type { KObject } from '../api/meta.js';
import type { FieldSelector } from '../api/selection/field-selector.js';
import type { LabelSelector } from '../api/selection/label-selector.js';
import { decodeContinue, encodeContinue, expiredContinue, latestRevision } from '../store/continue-token.js';
import { tableOf, type StoredObject, type Table } from '../store/read-model.js';
import type { CurrentRevision, StoredItem } from '../store/storage.js';
import { errors } from '../status/status-error.js';
import type { ObjectView } from './object-view.js';
import { parseResourceVersion, type ListQuery, type ListResult, type RegistryDeps } from './store-types.js';

/** How long a read for a revision the store has not reached waits before 504 (as Kubernetes). */
const tooLargeResourceVersionWaitMs = 3000;

interface ListSource { table: Table; revision: number; start?: string; live: boolean; expiresAt?: number; remaining?: number }

export class ListReader {
  private readonly fieldNames: ReadonlySet<string>;

  constructor(
    private readonly kind: KindDeclaration,
    /** the storage table (and key prefix) of the resource */
    private readonly table: string,
    private readonly view: ObjectView,
    private readonly deps: RegistryDeps,
  ) {
    this.fieldNames = new Set(['metadata.name', 'metadata.namespace', ...Object.keys(kind.fieldLabels)]);
  }

  async currentRevision(): Promise<CurrentRevision> {
    try {
      return await this.deps.writer.currentRevision(`${this.table}/`);
    } catch (err) {
      throw errors.serviceUnavailable(`storage is unavailable: ${(err as Error).message}`, 1);
    }
  }

  /** Keys under `prefix` read from storage at the revision it just reported as current. */
  async storageRead(prefix: string, revision: number): Promise<StoredItem[]> {
    let read;
    try {
      read = await this.deps.writer.readAt(prefix, revision);
    } catch (err) {
      throw errors.serviceUnavailable(`storage is unavailable: ${(err as Error).message}`, 1);
    }
    if ('compacted' in read) throw errors.serviceUnavailable(`storage compacted revision ${revision} while it was read`, 1);
    return read.items;
  }

  // ---- selection -----------------------------------------------------------------------------

  /** Field values a field selector may name, looked up lazily per object. */
  fieldValue(obj: Readonly<KObject>, field: string): string | undefined {
    if (field === 'metadata.name') return obj.metadata.name ?? '';
    if (field === 'metadata.namespace') return obj.metadata.namespace ?? '';
    return this.kind.fieldLabels[field]?.(obj as KObject);
  }

  /** Rejects selectors naming fields this kind cannot select on, with the kind's own wording. */
  checkFieldSelector(selector: FieldSelector | undefined): void {
    if (!selector || selector.empty) return;
    try {
      selector.checkFields(this.fieldNames, (f) => this.kind.unknownFieldLabelMessage(f));
    } catch (err) {
      throw errors.badRequest((err as Error).message);
    }
  }

  /** Whether a served object matches the selectors. */
  matches(obj: Readonly<KObject>, labels?: LabelSelector, fields?: FieldSelector): boolean {
    if (labels && !labels.empty && !labels.matches(obj.metadata.labels)) return false;
    if (fields && !fields.empty && !fields.matches((f) => this.fieldValue(obj, f))) return false;
    return true;
  }

  /** Waits (briefly) for the read model to reach `revision`, as a read for a future version must. */
  async waitForRevision(revision: number): Promise<void> {
    const rm = this.deps.readModel;
    if (revision <= rm.revision) return;
    let timer: NodeJS.Timeout | undefined;
    const reached = await Promise.race([
      rm.waitFor(revision).then(() => true),
      new Promise<boolean>((r) => { timer = setTimeout(() => r(false), tooLargeResourceVersionWaitMs); }),
    ]);
    clearTimeout(timer);
    if (!reached) {
      throw errors.timeout(`Timeout: Too large resource version: ${revision}, current: ${rm.revision}`, 1,
        [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }]);
    }
  }

  // ---- sources -------------------------------------------------------------------------------

  /**
   * A list without resourceVersion (consistent): from the read model when it already holds
   * storage's current state of this resource, else from storage at that revision (shared storage
   * whose watch has not yet brought another replica's latest writes).
   */
  private async latestSource(now: number): Promise<ListSource> {
    const rm = this.deps.readModel;
    const current = await this.currentRevision();
    if (current.cacheCurrent) return { table: rm.table(this.table), revision: rm.revision, live: true };
    const table = tableOf(await this.storageRead(`${this.table}/`, current.revision));
    // kept like a snapshot, so continue tokens at this revision find it
    this.deps.snapshots.put(this.table, current.revision, table, now);
    return { table, revision: current.revision, live: false };
  }

  /** The table a list reads, at the revision its resourceVersion semantics ask for. */
  private async listSource(q: ListQuery, now: number): Promise<ListSource> {
    const rm = this.deps.readModel;
    if (q.continue) {
      if (q.resourceVersion && q.resourceVersion !== '0') {
        throw errors.badRequest('specifying resource version is not allowed when using continue');
      }
      const token = decodeContinue(q.continue);
      if (token.revision === latestRevision) {
        return { table: rm.table(this.table), revision: rm.revision, start: token.start, live: true };
      }
      if (token.expiresAt !== undefined && token.expiresAt <= now) throw expiredContinue(token.start);
      const table = await this.tableAt(token.revision, now, token.start);
      return { table, revision: token.revision, start: token.start, live: false, expiresAt: token.expiresAt, remaining: token.remaining };
    }
    const rv = q.resourceVersion ?? '';
    if (rv === '0') return { table: rm.table(this.table), revision: rm.revision, live: true };
    if (rv === '') return this.latestSource(now);
    const revision = parseResourceVersion(rv);
    const exact = q.resourceVersionMatch === 'Exact' || (q.resourceVersionMatch === undefined && (q.limit ?? 0) > 0);
    await this.waitForRevision(revision);
    if (!exact || revision === rm.revision) return { table: rm.table(this.table), revision: rm.revision, live: true };
    return { table: await this.tableAt(revision, now), revision, live: false };
  }

  /** A past state: a kept snapshot, else the store's history, else 410. `continueFrom`: the key a continue token resumes at. */
  private async tableAt(revision: number, now: number, continueFrom?: string): Promise<Table> {
    const rm = this.deps.readModel;
    if (revision === rm.revision) return rm.table(this.table);
    const kept = this.deps.snapshots.get(this.table, revision, now);
    if (kept) return kept;
    const expired = () => continueFrom !== undefined ? expiredContinue(continueFrom)
      : errors.expired('The resourceVersion for the provided list is too old.');
    if (revision < rm.compactRevision || revision > rm.revision) throw expired();
    const read = await this.deps.writer.readAt(`${this.table}/`, revision);
    if ('compacted' in read) throw expired();
    const table = tableOf(read.items);
    this.deps.snapshots.put(this.table, revision, table, now);
    return table;
  }

  // ---- the list ------------------------------------------------------------------------------

  async list(q: ListQuery, now: number): Promise<ListResult> {
    this.checkFieldSelector(q.fieldSelector);
    const source = await this.listSource(q, now);
    const { table } = source;
    // a namespace (from the path or pinned by a field selector) is one contiguous key range
    const namespace = this.kind.namespaced ? (q.namespace || q.fieldSelector?.exactValue('metadata.namespace')) : undefined;
    const lo = namespace ? `${namespace}/` : undefined;
    const hi = namespace ? `${namespace}0` : undefined; // '0' is the character after '/'
    const name = q.fieldSelector?.exactValue('metadata.name');
    const limit = q.limit && q.limit > 0 ? q.limit : 0;
    const filtered = Boolean((q.labelSelector && !q.labelSelector.empty) || (q.fieldSelector && !q.fieldSelector.empty));
    const items: StoredObject[] = [];
    const view = this.view;

    if (name !== undefined && (namespace || !this.kind.namespaced) && !source.start) {
      const stored = table.get(this.kind.namespaced ? `${namespace}/${name}` : name);
      if (stored && view.needsPreparation) await view.prepare([stored]);
      const one = stored && view.of(stored);
      if (one && this.matches(one.object, q.labelSelector, q.fieldSelector)) items.push(one);
      return { revision: source.revision, items };
    }

    const from = source.start ?? lo;
    if (view.needsPreparation) {
      // a webhook converts the whole range in one review: selectors see converted objects
      const range: StoredObject[] = [];
      table.forRange(from ?? table.minKey() ?? '', hi ?? '\uffff', false, (_k, stored) => { range.push(stored); });
      await view.prepare(range);
    }
    let next: string | undefined;
    table.forRange(from ?? table.minKey() ?? '', hi ?? '\uffff', false, (k, stored) => {
      const v = view.of(stored);
      if (filtered && !this.matches(v.object, q.labelSelector, q.fieldSelector)) return undefined;
      if (limit && items.length === limit) { next = k; return { break: true }; }
      items.push(v);
      return undefined;
    });
    const result: ListResult = { revision: source.revision, items };
    if (next !== undefined) {
      let remaining: number | undefined;
      if (!filtered) {
        // counted once, on the first page (O(1) for a whole table); later pages carry it in the token
        if (source.remaining !== undefined) remaining = source.remaining - items.length;
        else if (!lo && !source.start) remaining = table.size - items.length;
        else {
          remaining = 0;
          table.forRange(next, hi ?? '\uffff', false, () => { remaining = (remaining as number) + 1; });
        }
        result.remainingItemCount = remaining;
      }
      // one lifetime for the whole list, from its first page: the same page always gets the same token
      result.continue = encodeContinue({ revision: source.revision, start: next, expiresAt: source.expiresAt ?? now + this.deps.config.continueTtlMs, remaining });
      if (source.live) this.deps.snapshots.put(this.table, source.revision, table.clone(), now);
    }
    return result;
  }
}
