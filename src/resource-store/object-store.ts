/**
 * The generic store: what create, get, list, update and delete mean for any kind, read from its
 * declaration (k8s.io/apiserver's registry/generic Store). Reads come from the read model; writes
 * pass admission and the kind's strategy and go to the writer as compare-and-swap mutations,
 * retried by one guaranteed-update loop when they race. A store serves one view (group, version)
 * of a stored resource: objects convert at its edges when the view is not the storage version.
 */
import { finalizersAfterDelete } from '../api/deletion-policy.js';
import { atResourceVersion, copyJson } from '../api/json-copy.js';
import { storageResourceOf, type KindDeclaration } from '../api/kind.js';
import type { KObject } from '../api/meta.js';
import { formatTime } from '../api/schema.js';
import type { FieldSelector } from '../api/selection/field-selector.js';
import type { LabelSelector } from '../api/selection/label-selector.js';
import { StoredObject, tableOf } from '../store/read-model.js';
import { objectKey, type MutationResult } from '../store/storage.js';
import { errors, fieldErrors, type GroupResource, StatusError } from '../status/status-error.js';
import type { Operation } from '../admission/admission.js';
import { ListReader } from './list-reader.js';
import { canonical, prepareCreate, prepareUpdate } from './object-preparation.js';
import { ObjectView } from './object-view.js';
import type { DeleteOptions, DeleteOutcome, ListQuery, ListResult, RegistryDeps, WriteContext } from './store-types.js';

export type { DeleteOptions, DeleteOutcome, ListQuery, ListResult, WriteContext } from './store-types.js';
export { parseResourceVersion } from './store-types.js';

const maxWriteAttempts = 16;

type WriteFailure = Extract<MutationResult, { ok: false }>;

/** One turn of a guaranteed update: the object to write, or an answer without writing. */
type UpdateStep<T> =
  | { answer: T }
  | { next: KObject; written(stored: StoredObject): T; /** a lost race is retried (else: 409) */ retry: boolean };

export class ObjectStore {
  readonly groupResource: GroupResource;
  /** the storage table (and key prefix) of the objects this view serves */
  readonly table: string;
  readonly view: ObjectView;
  private readonly reader: ListReader;

  constructor(readonly kind: KindDeclaration, private readonly deps: RegistryDeps, private readonly storageKind: KindDeclaration = kind) {
    this.groupResource = { group: kind.group, resource: kind.resource };
    this.table = storageResourceOf(kind);
    this.view = new ObjectView(kind.conversion);
    this.reader = new ListReader(kind, this.table, this.view, deps);
  }

  private path(namespace: string | undefined, name: string): string {
    return this.kind.namespaced ? `${namespace}/${name}` : name;
  }

  private key(namespace: string | undefined, name: string): string {
    return objectKey(this.table, this.kind.namespaced ? namespace : undefined, name);
  }

  /** The stored object as this view serves it; undefined when there is none. */
  private current(namespace: string | undefined, name: string): { stored: StoredObject; served: StoredObject } | undefined {
    const stored = this.deps.readModel.get(this.table, this.path(namespace, name));
    return stored && { stored, served: this.view.of(stored) };
  }

  /** `current`, converted first when the view's conversion calls out (a webhook). */
  private async currentPrepared(namespace: string | undefined, name: string): Promise<{ stored: StoredObject; served: StoredObject } | undefined> {
    const stored = this.deps.readModel.get(this.table, this.path(namespace, name));
    if (!stored) return undefined;
    if (this.view.needsPreparation) await this.view.prepare([stored]);
    return { stored, served: this.view.of(stored) };
  }

  /** GET of a given resourceVersion: the cached object, converted (asynchronously, for a webhook). */
  async read(namespace: string | undefined, name: string): Promise<StoredObject> {
    const found = await this.currentPrepared(namespace, name);
    if (!found) throw errors.notFound(this.groupResource, name);
    return found.served;
  }

  // ---- reads ---------------------------------------------------------------------------------

  get(namespace: string | undefined, name: string): StoredObject {
    const found = this.current(namespace, name);
    if (!found) throw errors.notFound(this.groupResource, name);
    return found.served;
  }

  /**
   * GET without a resourceVersion: like a list without one, it must see every write any
   * replica acknowledged before it began. When the read model always holds that state (no other
   * process writes the storage), the object comes without a promise (most GETs).
   */
  getLatest(namespace: string | undefined, name: string): StoredObject | Promise<StoredObject> {
    if (this.deps.writer.readModelAlwaysCurrent && !this.view.needsPreparation) return this.get(namespace, name);
    return this.getConsistent(namespace, name);
  }

  private async getConsistent(namespace: string | undefined, name: string): Promise<StoredObject> {
    const current = await this.reader.currentRevision();
    if (current.cacheCurrent) return this.read(namespace, name);
    const key = this.key(namespace, name);
    const found = (await this.reader.storageRead(key, current.revision)).find((item) => item.key === key);
    const object = found && tableOf([found]).get(this.path(namespace, name));
    if (!object) throw errors.notFound(this.groupResource, name);
    if (this.view.needsPreparation) await this.view.prepare([object]);
    return this.view.of(object);
  }

  list(q: ListQuery, now: number): Promise<ListResult> { return this.reader.list(q, now); }
  fieldValue(obj: Readonly<KObject>, field: string): string | undefined { return this.reader.fieldValue(obj, field); }
  checkFieldSelector(selector: FieldSelector | undefined): void { this.reader.checkFieldSelector(selector); }
  matches(obj: Readonly<KObject>, labels?: LabelSelector, fields?: FieldSelector): boolean { return this.reader.matches(obj, labels, fields); }
  waitForRevision(revision: number): Promise<void> { return this.reader.waitForRevision(revision); }

  // ---- admission -----------------------------------------------------------------------------

  private attributes(operation: Operation, object: KObject | undefined, old: Readonly<KObject> | undefined, name: string, ctx: WriteContext, subresource?: string) {
    return {
      operation, kind: this.kind, namespace: object?.metadata?.namespace ?? old?.metadata.namespace, name, subresource,
      object, oldObject: old, user: ctx.user, dryRun: ctx.dryRun, audit: ctx.audit,
    };
  }

  /** An update through mutating admission, the kind's strategy, then validating admission. */
  private async admittedUpdate(body: KObject, old: Readonly<KObject>, ctx: WriteContext, subresource?: string): Promise<KObject> {
    const name = old.metadata.name as string;
    await this.deps.admission.admit(this.attributes('UPDATE', body, old, name, ctx, subresource));
    const next = prepareUpdate(this.kind, body, old, ctx, subresource);
    await this.deps.admission.validate(this.attributes('UPDATE', next, old, name, ctx, subresource));
    return next;
  }

  // ---- writes --------------------------------------------------------------------------------

  private ttl(): number | undefined {
    return this.kind.ttlMs?.(this.deps.config);
  }

  private failure(result: WriteFailure, name: string): StatusError {
    switch (result.failure) {
      case 'exists': return errors.alreadyExists(this.groupResource, name);
      case 'notFound': return errors.notFound(this.groupResource, name);
      case 'conflict': return errors.staleUpdate(this.groupResource, name);
      default: return errors.serviceUnavailable(`storage is unavailable: ${result.message ?? 'unknown error'}`, 1);
    }
  }

  /** A served object in the storage version's representation and field order. */
  private toStored(served: KObject): KObject {
    return this.view.identity ? served : canonical(this.storageKind, this.view.toStorage(served));
  }

  /**
   * Commits a prepared object; returns what the read model now holds, as this view serves it (or
   * the object, on dry run). `serialized`: the stored form's JSON when the caller already has it.
   */
  private async commit(op: 'create' | 'update', obj: KObject, ctx: WriteContext, expectedRevision?: number, serialized?: string): Promise<StoredObject | WriteFailure> {
    const path = this.path(obj.metadata.namespace, obj.metadata.name as string);
    if (ctx.dryRun) {
      // a dry run checks what storage would: a create of an existing name is still a conflict
      if (op === 'create' && this.deps.readModel.get(this.table, path)) return { id: 0, ok: false, failure: 'exists' };
      const out = copyJson(obj);
      if (op === 'create') delete out.metadata.resourceVersion;
      return new StoredObject(out, 0);
    }
    if (this.view.needsPreparation) await this.view.prepareServed(obj);
    const stored = this.toStored(obj);
    // stored with an empty resourceVersion in place: the commit's revision is spliced into the served JSON.
    // metadata's resourceVersion precedes every user-controlled string, so the first match is that field.
    const value = serialized !== undefined
      ? serialized.replace(`"resourceVersion":${JSON.stringify(stored.metadata.resourceVersion ?? '')}`, '"resourceVersion":""')
      : undefined;
    stored.metadata.resourceVersion = '';
    const result = await this.deps.writer.submit({ op, key: this.key(obj.metadata.namespace, obj.metadata.name as string), value: value ?? JSON.stringify(stored), expectedRevision, ttlMs: this.ttl() }, stored);
    if (!result.ok) return result;
    const committed = this.deps.readModel.get(this.table, path);
    if (committed && this.view.needsPreparation) await this.view.prepare([committed]);
    return committed ? this.view.of(committed) : new StoredObject(obj, result.revision);
  }

  async create(namespace: string | undefined, body: KObject, ctx: WriteContext): Promise<StoredObject> {
    const usesGenerateName = !body.metadata?.name && Boolean(body.metadata?.generateName);
    if (this.kind.namespaced) (body.metadata ??= {}).namespace = namespace;
    await this.deps.admission.admit(this.attributes('CREATE', body, undefined, body.metadata?.name ?? '', ctx));
    for (let attempt = 0; ; attempt++) {
      const obj = prepareCreate(this.kind, body, namespace, ctx);
      await this.deps.admission.validate(this.attributes('CREATE', obj, undefined, obj.metadata.name ?? '', ctx));
      const out = await this.commit('create', obj, ctx);
      if (out instanceof StoredObject) return out;
      // a generated name that collided is retried with a new one, as RetryGenerateName does
      if (out.failure === 'exists' && usesGenerateName && attempt < 7) continue;
      throw this.failure(out, obj.metadata.name as string);
    }
  }

  /**
   * Kubernetes' GuaranteedUpdate: reads the current object, asks `attempt` what to write, writes
   * it with a compare-and-swap on the revision read, and starts over when another write won.
   */
  private async guaranteedUpdate<T>(namespace: string | undefined, name: string, ctx: WriteContext, attempt: (current: { stored: StoredObject; served: StoredObject } | undefined) => Promise<UpdateStep<T>>): Promise<T> {
    for (let i = 0; i < maxWriteAttempts; i++) {
      const current = await this.currentPrepared(namespace, name);
      const step = await attempt(current);
      if ('answer' in step) return step.answer;
      if (!current) throw errors.notFound(this.groupResource, name);
      const outcome = await this.writeUpdate(step.next, current.stored, ctx);
      if (outcome instanceof StoredObject) return step.written(outcome);
      if (outcome.failure === 'conflict' || outcome.failure === 'notFound') {
        if (step.retry) continue;
        throw errors.staleUpdate(this.groupResource, name);
      }
      throw this.failure(outcome, name);
    }
    throw errors.staleUpdate(this.groupResource, name);
  }

  /** A create inside an update (PUT or apply of a missing object); undefined when another create won the race. */
  private async createRacing(namespace: string | undefined, body: KObject, ctx: WriteContext): Promise<StoredObject | undefined> {
    try {
      return await this.create(namespace, body, ctx);
    } catch (err) {
      if (err instanceof StatusError && err.reason === 'AlreadyExists') return undefined;
      throw err;
    }
  }

  /**
   * PUT: replaces the object (or a subresource's part of it). Without a resourceVersion in the
   * body the update is unconditional and retried when it races; with one, a mismatch is 409.
   */
  update(namespace: string | undefined, name: string, body: KObject, ctx: WriteContext, subresource?: string): Promise<{ object: StoredObject; created: boolean }> {
    const wanted = body.metadata?.resourceVersion;
    return this.guaranteedUpdate<{ object: StoredObject; created: boolean }>(namespace, name, ctx, async (current) => {
      if (!current) {
        if (!this.kind.allowCreateOnUpdate || subresource || wanted) throw errors.notFound(this.groupResource, name);
        const created = await this.createRacing(namespace, body, ctx);
        return created ? { answer: { object: created, created: true } } : { answer: await this.update(namespace, name, body, ctx, subresource) };
      }
      const old = current.served.object;
      if (!wanted && this.kind.allowUnconditionalUpdate === false) {
        // the registry words this with the resource in place of the kind, as Kubernetes' does
        throw errors.invalid({ group: this.kind.group, kind: this.kind.resource }, name,
          [fieldErrors.invalid('metadata.resourceVersion', 0n, 'must be specified for an update')]);
      }
      if (wanted && wanted !== old.metadata.resourceVersion) throw errors.staleUpdate(this.groupResource, name);
      const uid = body.metadata?.uid;
      if (uid && uid !== old.metadata.uid) {
        // kube-apiserver turns a body uid into a storage precondition, failing as a storage error
        throw errors.conflict(this.groupResource, name, `StorageError: invalid object, Code: 4, Key: /registry/${this.key(namespace, name)}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${uid}, UID in object meta: ${old.metadata.uid}`);
      }
      const next = await this.admittedUpdate(body, old, ctx, subresource);
      return { next, written: (object) => ({ object, created: false }), retry: !wanted };
    });
  }

  /**
   * Changes an object by a function of its current state, retrying on races: how controllers
   * and the registry itself update. `mutate` returns undefined to skip.
   */
  modify(namespace: string | undefined, name: string, ctx: WriteContext, mutate: (current: KObject) => KObject | undefined, subresource?: string): Promise<StoredObject | undefined> {
    return this.guaranteedUpdate<StoredObject | undefined>(namespace, name, ctx, async (current) => {
      if (!current) return { answer: undefined };
      const changed = mutate(copyJson(current.served.object) as KObject);
      if (!changed) return { answer: current.served };
      return { next: await this.admittedUpdate(changed, current.served.object, ctx, subresource), written: (o) => o, retry: true };
    });
  }

  /**
   * PATCH: `transform` turns the current object into the patched one; it is applied again to the
   * newest state whenever the write races. A resourceVersion the patch sets is a precondition.
   */
  patch(namespace: string | undefined, name: string, ctx: WriteContext, transform: (current: KObject) => KObject, subresource?: string): Promise<StoredObject> {
    return this.guaranteedUpdate(namespace, name, ctx, async (current) => {
      if (!current) throw errors.notFound(this.groupResource, name);
      const old = current.served.object;
      const patched = transform(copyJson(old) as KObject);
      patched.metadata ??= {};
      if (patched.metadata.name !== name) {
        throw errors.badRequest(`the name of the object (${patched.metadata.name ?? ''}) does not match the name on the URL (${name})`);
      }
      if (this.kind.namespaced && patched.metadata.namespace !== namespace) {
        throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      const wanted = patched.metadata.resourceVersion;
      if (wanted && wanted !== old.metadata.resourceVersion) throw errors.staleUpdate(this.groupResource, name);
      return { next: await this.admittedUpdate(patched, old, ctx, subresource), written: (o) => o, retry: true };
    });
  }

  /**
   * Server-side apply: `merge` turns the live object (undefined when there is none) into the
   * applied result with its managedFields; a missing object is created. Retried when it races.
   */
  apply(namespace: string | undefined, name: string, ctx: WriteContext, merge: (live: KObject | undefined) => KObject, subresource?: string): Promise<{ object: StoredObject; created: boolean }> {
    const applyCtx: WriteContext = { ...ctx, applied: true };
    return this.guaranteedUpdate<{ object: StoredObject; created: boolean }>(namespace, name, applyCtx, async (current) => {
      // a subresource is applied to an object that exists; the object is applied to or created
      if (!current && subresource) throw errors.notFound(this.groupResource, name);
      const merged = merge(current ? copyJson(current.served.object) as KObject : undefined);
      if (!current) {
        const created = await this.createRacing(namespace, merged, applyCtx);
        return created ? { answer: { object: created, created: true } } : { answer: await this.apply(namespace, name, ctx, merge) };
      }
      return { next: await this.admittedUpdate(merged, current.served.object, applyCtx, subresource), written: (object) => ({ object, created: false }), retry: true };
    });
  }

  /** Writes an update, or deletes the object when the update removed its last finalizer. */
  private async writeUpdate(next: KObject, current: StoredObject, ctx: WriteContext): Promise<StoredObject | WriteFailure> {
    // serialized once: to see a no-op update (which writes nothing), then as the value committed
    if (this.view.needsPreparation) await this.view.prepareServed(next);
    const serialized = JSON.stringify(this.toStored(next));
    if (serialized === current.json) return this.view.of(current);
    const meta = next.metadata;
    const removable = meta.deletionTimestamp && (meta.finalizers ?? []).length === 0 && !this.kind.deletion?.blocksRemoval(next);
    if (removable) {
      if (ctx.dryRun) return new StoredObject(next, current.revision);
      const result = await this.deps.writer.submit({ op: 'delete', key: this.key(meta.namespace, meta.name as string), expectedRevision: current.revision });
      if (!result.ok) return result;
      return new StoredObject(atResourceVersion(next, String(result.revision)), result.revision);
    }
    return this.commit('update', next, ctx, current.revision, serialized);
  }

  async delete(namespace: string | undefined, name: string, options: DeleteOptions, ctx: WriteContext): Promise<DeleteOutcome> {
    for (let attempt = 0; attempt < maxWriteAttempts; attempt++) {
      const found = await this.currentPrepared(namespace, name);
      if (!found) throw errors.notFound(this.groupResource, name);
      const { stored } = found;
      const obj = found.served.object;
      await this.deps.admission.validate(this.attributes('DELETE', undefined, obj, name, ctx));
      const pre = options.preconditions;
      // rest.BeforeDelete words these with the kind (not the resource) as the conflicting "resource"
      const byKind = { group: this.kind.group, resource: this.kind.kind };
      if (pre?.uid !== undefined && pre.uid !== obj.metadata.uid) {
        throw errors.conflict(byKind, name, `the UID in the precondition (${pre.uid}) does not match the UID in record (${obj.metadata.uid}). The object might have been deleted and then recreated`);
      }
      if (pre?.resourceVersion !== undefined && pre.resourceVersion !== obj.metadata.resourceVersion) {
        throw errors.conflict(byKind, name, `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${obj.metadata.resourceVersion}). The object might have been modified`);
      }
      const deletion = this.kind.deletion;
      const terminating = Boolean(obj.metadata.deletionTimestamp);
      // the kind's own finalization (a namespace's spec.finalizers) is still running: nothing changes
      if (terminating && deletion?.blocksRemoval(obj as KObject)) return { kind: 'object', object: obj, deleted: false };
      const finalizers = this.finalizersAfterDelete(obj, options, terminating);
      if (finalizers.length > 0 || deletion?.blocksRemoval(obj as KObject)) {
        // finalizers pending: the object terminates (or already does) and stays until they are gone
        const unchanged = finalizers.length === (obj.metadata.finalizers ?? []).length && finalizers.every((f, i) => obj.metadata.finalizers?.[i] === f);
        if (terminating && unchanged) return { kind: 'object', object: obj, deleted: false };
        const next = copyJson(obj) as KObject;
        if (!unchanged && finalizers.length > 0) next.metadata.finalizers = [...finalizers];
        else if (!unchanged) delete next.metadata.finalizers;
        if (!terminating) {
          next.metadata.deletionTimestamp = formatTime(ctx.now);
          next.metadata.deletionGracePeriodSeconds = 0;
          deletion?.markTerminating(next);
        }
        if (ctx.dryRun) return { kind: 'object', object: next, deleted: false };
        const out = await this.commit('update', canonical(this.kind, next), ctx, stored.revision);
        if (out instanceof StoredObject) return { kind: 'object', object: out.object, deleted: false };
        if (out.failure === 'conflict') continue;
        throw this.failure(out, name);
      }
      if (ctx.dryRun) return this.deletedOutcome(obj, true);
      const result = await this.deps.writer.submit({ op: 'delete', key: this.key(namespace, name), expectedRevision: stored.revision });
      if (result.ok) {
        return this.deletedOutcome(atResourceVersion(obj, String(result.revision)), true);
      }
      if (result.failure === 'conflict') continue;
      throw this.failure(result, name);
    }
    throw errors.staleUpdate(this.groupResource, name);
  }

  /**
   * The metadata.finalizers a DELETE leaves: the garbage collector's `orphan` / `foregroundDeletion`
   * as the options, the existing finalizers and the kind's default policy choose (when the garbage
   * collector is enabled). The same array when unchanged.
   */
  private finalizersAfterDelete(obj: Readonly<KObject>, options: DeleteOptions, terminating: boolean): readonly string[] {
    const finalizers = obj.metadata.finalizers ?? [];
    if (!this.deps.config.enableGarbageCollector) return finalizers;
    const own = this.kind.deletion?.finalizersOnFirstDelete;
    if (own && !terminating) return own(finalizers, options);
    return finalizersAfterDelete(this.kind.garbageCollectionPolicy ?? 'DeleteDependents', finalizers, options);
  }

  private deletedOutcome(obj: Readonly<KObject>, deleted: boolean): DeleteOutcome {
    if (this.kind.returnDeletedObject) return { kind: 'object', object: obj, deleted };
    const details: { name: string; group?: string; kind: string; uid?: string } = { name: obj.metadata.name as string, kind: this.kind.resource };
    if (this.kind.group) details.group = this.kind.group;
    if (obj.metadata.uid) details.uid = obj.metadata.uid;
    return { kind: 'status', details };
  }

  /** DELETE on a collection: deletes every listed object and answers with the list as it was. */
  async deleteCollection(q: ListQuery, options: DeleteOptions, ctx: WriteContext): Promise<ListResult> {
    const listed = await this.list(q, ctx.now);
    for (const item of listed.items) {
      try {
        await this.delete(item.object.metadata.namespace, item.object.metadata.name as string, options, ctx);
      } catch (err) {
        if (!(err instanceof StatusError && err.reason === 'NotFound')) throw err;
      }
    }
    return listed;
  }
}
