/**
 * The generic registry: what create, get, list, update and delete mean for any kind, read from
 * its declaration (k8s.io/apiserver's registry/generic Store). Reads come from the read model;
 * writes go to the writer as compare-and-swap mutations and are retried when they raced.
 */
import { randomUUID } from 'node:crypto';
import { apiVersionOf, type KindDeclaration, type StrategyContext } from '../api/kind.js';
import type { KObject, ObjectMeta } from '../api/meta.js';
import { formatTime } from '../api/schema.js';
import type { FieldSelector } from '../api/selection/field-selector.js';
import type { LabelSelector } from '../api/selection/label-selector.js';
import { updateManagedFields } from '../patch/managed-fields.js';
import { decodeContinue, encodeContinue, expiredContinue, latestRevision } from '../store/continue-token.js';
import { StoredObject, tableOf, type ReadModel, type Table } from '../store/read-model.js';
import type { SnapshotCache } from '../store/snapshot-cache.js';
import { objectKey, type CurrentRevision, type MutationResult, type StoredItem } from '../store/storage.js';
import type { WriterClient } from '../store/writer-client.js';
import { errors, type GroupResource, StatusError } from '../status/status-error.js';
import type { AdmissionChain, Operation } from '../admission/admission.js';
import type { AuditAnnotator } from '../audit/capture.js';
import type { UserInfo } from '../auth/user.js';

export interface WriteContext extends StrategyContext {
  dryRun: boolean;
  /** the field manager recorded in managedFields */
  manager: string;
  /** the object's managedFields were computed by server-side apply: keep them (else: an Update by `manager`) */
  applied?: boolean;
  /** who asks, for admission; undefined for the server's own controllers */
  user?: UserInfo;
  /** the request's audit record, for admission plugins' annotations; undefined when not audited */
  audit?: AuditAnnotator;
}

export interface ListQuery {
  namespace?: string;
  labelSelector?: LabelSelector;
  fieldSelector?: FieldSelector;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
}

export interface ListResult {
  revision: number;
  items: StoredObject[];
  continue?: string;
  remainingItemCount?: number;
}

export interface DeleteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  gracePeriodSeconds?: number;
  propagationPolicy?: string;
}

/** What a DELETE answers: the object (deleted or terminating) or, for some kinds, a Success Status. */
export type DeleteOutcome =
  | { kind: 'object'; object: Readonly<KObject>; deleted: boolean }
  | { kind: 'status'; details: { name: string; group?: string; kind: string; uid?: string } };

export interface RegistryDeps {
  readModel: ReadModel;
  writer: WriterClient;
  snapshots: SnapshotCache;
  admission: AdmissionChain;
  config: { eventTtlMs: number; continueTtlMs: number };
}

/** How long a read for a revision the store has not reached waits before 504 (as Kubernetes). */
const tooLargeResourceVersionWaitMs = 3000;
const maxWriteAttempts = 16;
const generatedSuffixChars = 'bcdfghjklmnpqrstvwxz2456789';
const metaOrder: readonly (keyof ObjectMeta)[] = [
  'name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation', 'creationTimestamp',
  'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations', 'ownerReferences', 'finalizers', 'managedFields',
];

function generateName(base: string): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += generatedSuffixChars[Math.floor(Math.random() * generatedSuffixChars.length)];
  return `${base.slice(0, 63 - 5)}${suffix}`;
}

type WriteFailure = Extract<MutationResult, { ok: false }>;

export class ObjectStore {
  readonly groupResource: GroupResource;
  private readonly apiVersion: string;
  private readonly fieldNames: ReadonlySet<string>;

  constructor(readonly kind: KindDeclaration, private readonly deps: RegistryDeps) {
    this.groupResource = { group: kind.group, resource: kind.resource };
    this.apiVersion = apiVersionOf(kind);
    this.fieldNames = new Set(['metadata.name', 'metadata.namespace', ...Object.keys(kind.fieldLabels)]);
  }

  private path(namespace: string | undefined, name: string): string {
    return this.kind.namespaced ? `${namespace}/${name}` : name;
  }

  private key(namespace: string | undefined, name: string): string {
    return objectKey(this.kind.resource, this.kind.namespaced ? namespace : undefined, name);
  }

  // ---- reads ---------------------------------------------------------------------------------

  get(namespace: string | undefined, name: string): StoredObject {
    const found = this.deps.readModel.get(this.kind.resource, this.path(namespace, name));
    if (!found) throw errors.notFound(this.groupResource, name);
    return found;
  }

  /**
   * GET without a resourceVersion: like a list without one, it must see every write any
   * replica acknowledged before it began.
   */
  async getLatest(namespace: string | undefined, name: string): Promise<StoredObject> {
    const current = await this.currentRevision();
    if (current.cacheCurrent) return this.get(namespace, name);
    const key = this.key(namespace, name);
    const found = (await this.storageRead(key, current.revision)).find((item) => item.key === key);
    const object = found && tableOf([found]).get(this.path(namespace, name));
    if (!object) throw errors.notFound(this.groupResource, name);
    return object;
  }

  private async currentRevision(): Promise<CurrentRevision> {
    try {
      return await this.deps.writer.currentRevision(`${this.kind.resource}/`);
    } catch (err) {
      throw errors.serviceUnavailable(`storage is unavailable: ${(err as Error).message}`, 1);
    }
  }

  /** Keys under `prefix` read from storage at the revision it just reported as current. */
  private async storageRead(prefix: string, revision: number): Promise<StoredItem[]> {
    let read;
    try {
      read = await this.deps.writer.readAt(prefix, revision);
    } catch (err) {
      throw errors.serviceUnavailable(`storage is unavailable: ${(err as Error).message}`, 1);
    }
    if ('compacted' in read) throw errors.serviceUnavailable(`storage compacted revision ${revision} while it was read`, 1);
    return read.items;
  }

  /**
   * A list without resourceVersion (consistent): from the read model when it already holds
   * storage's current state of this resource, else from storage at that revision (shared storage
   * whose watch has not yet brought another replica's latest writes).
   */
  private async latestSource(now: number): Promise<{ table: Table; revision: number; live: boolean }> {
    const rm = this.deps.readModel;
    const resource = this.kind.resource;
    const current = await this.currentRevision();
    if (current.cacheCurrent) return { table: rm.table(resource), revision: rm.revision, live: true };
    const table = tableOf(await this.storageRead(`${resource}/`, current.revision));
    // kept like a snapshot, so continue tokens at this revision find it
    this.deps.snapshots.put(resource, current.revision, table, now);
    return { table, revision: current.revision, live: false };
  }

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

  /** The table a list reads, at the revision its resourceVersion semantics ask for. */
  private async listSource(q: ListQuery, now: number): Promise<{ table: Table; revision: number; start?: string; live: boolean; expiresAt?: number; remaining?: number }> {
    const rm = this.deps.readModel;
    const resource = this.kind.resource;
    if (q.continue) {
      if (q.resourceVersion && q.resourceVersion !== '0') {
        throw errors.badRequest('specifying resource version is not allowed when using continue');
      }
      const token = decodeContinue(q.continue);
      if (token.revision === latestRevision) {
        return { table: rm.table(resource), revision: rm.revision, start: token.start, live: true };
      }
      if (token.expiresAt !== undefined && token.expiresAt <= now) throw expiredContinue(token.start);
      const table = await this.tableAt(token.revision, now, token.start);
      return { table, revision: token.revision, start: token.start, live: false, expiresAt: token.expiresAt, remaining: token.remaining };
    }
    const rv = q.resourceVersion ?? '';
    if (rv === '0') return { table: rm.table(resource), revision: rm.revision, live: true };
    if (rv === '') return this.latestSource(now);
    const revision = parseResourceVersion(rv);
    const exact = q.resourceVersionMatch === 'Exact' || (q.resourceVersionMatch === undefined && (q.limit ?? 0) > 0);
    await this.waitForRevision(revision);
    if (!exact || revision === rm.revision) return { table: rm.table(resource), revision: rm.revision, live: true };
    return { table: await this.tableAt(revision, now), revision, live: false };
  }

  /** A past state: a kept snapshot, else the store's history, else 410. `continueFrom`: the key a continue token resumes at. */
  private async tableAt(revision: number, now: number, continueFrom?: string): Promise<Table> {
    const rm = this.deps.readModel;
    const resource = this.kind.resource;
    if (revision === rm.revision) return rm.table(resource);
    const kept = this.deps.snapshots.get(resource, revision, now);
    if (kept) return kept;
    const expired = () => continueFrom !== undefined ? expiredContinue(continueFrom)
      : errors.expired('The resourceVersion for the provided list is too old.');
    if (revision < rm.compactRevision || revision > rm.revision) throw expired();
    const read = await this.deps.writer.readAt(`${resource}/`, revision);
    if ('compacted' in read) throw expired();
    const table = tableOf(read.items);
    this.deps.snapshots.put(resource, revision, table, now);
    return table;
  }

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

    if (name !== undefined && (namespace || !this.kind.namespaced) && !source.start) {
      const one = table.get(this.kind.namespaced ? `${namespace}/${name}` : name);
      if (one && this.matches(one.object, q.labelSelector, q.fieldSelector)) items.push(one);
      return { revision: source.revision, items };
    }

    const from = source.start ?? lo;
    let next: string | undefined;
    table.forRange(from ?? table.minKey() ?? '', hi ?? '\uffff', false, (k, v) => {
      if (!this.matches(v.object, q.labelSelector, q.fieldSelector)) return undefined;
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
      if (source.live) this.deps.snapshots.put(this.kind.resource, source.revision, table.clone(), now);
    }
    return result;
  }

  // ---- writes --------------------------------------------------------------------------------

  /** Puts an object in canonical field order (kind, apiVersion, metadata, then the schema's order). */
  private canonical(obj: KObject): KObject {
    const meta: ObjectMeta = {};
    for (const k of metaOrder) if (obj.metadata[k] !== undefined) meta[k] = obj.metadata[k];
    for (const [k, v] of Object.entries(obj.metadata)) if (meta[k] === undefined && v !== undefined) meta[k] = v;
    const out: KObject = { kind: this.kind.kind, apiVersion: this.apiVersion, metadata: meta };
    for (const field of Object.keys(this.kind.schema.fields)) {
      if (field === 'kind' || field === 'apiVersion' || field === 'metadata') continue;
      if (obj[field] !== undefined) out[field] = obj[field];
    }
    return out;
  }

  private ttl(): number | undefined {
    return this.kind.ttlMs?.(this.deps.config);
  }

  private invalid(name: string, errs: ReturnType<KindDeclaration['validate']>): StatusError {
    return errors.invalid({ group: this.kind.group, kind: this.kind.kind }, name, errs);
  }

  /** Stamps server-owned fields, defaults, validates. Returns the object to store. */
  private prepareCreate(body: KObject, namespace: string | undefined, ctx: WriteContext): KObject {
    const obj = structuredClone(body);
    const meta = obj.metadata ?? (obj.metadata = {});
    if (this.kind.namespaced) meta.namespace = namespace;
    if (meta.resourceVersion) {
      // kube-apiserver's storage refuses this with a plain error: 500 without a reason
      throw errors.unknown('resourceVersion should not be set on objects to be created');
    }
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.selfLink;
    delete meta.generation;
    this.kind.prepareForCreate?.(obj, ctx);
    meta.uid = randomUUID();
    meta.creationTimestamp = formatTime(ctx.now);
    if (!meta.name && meta.generateName) meta.name = generateName(meta.generateName);
    const errs = this.kind.validate(obj);
    if (errs.length) throw this.invalid(meta.name ?? '', errs);
    if (!ctx.applied) meta.managedFields = updateManagedFields(obj, undefined, { kind: this.kind, manager: ctx.manager, now: ctx.now, resetFields: this.resetFields() });
    if (meta.managedFields?.length === 0) delete meta.managedFields;
    meta.resourceVersion = ''; // keeps the field's place in canonical order; the commit's revision fills it
    return this.canonical(obj);
  }

  /** Mutating admission: may change `object` in place. */
  private async admit(operation: Operation, object: KObject | undefined, old: Readonly<KObject> | undefined, name: string, ctx: WriteContext, subresource?: string): Promise<void> {
    await this.deps.admission.admit({
      operation, kind: this.kind, namespace: object?.metadata?.namespace ?? old?.metadata.namespace, name, subresource,
      object, oldObject: old, user: ctx.user, dryRun: ctx.dryRun, audit: ctx.audit,
    });
  }

  /** Validating admission, after the kind's own validation. */
  private async validateAdmission(operation: Operation, object: KObject | undefined, old: Readonly<KObject> | undefined, name: string, ctx: WriteContext, subresource?: string): Promise<void> {
    await this.deps.admission.validate({
      operation, kind: this.kind, namespace: object?.metadata?.namespace ?? old?.metadata.namespace, name, subresource,
      object, oldObject: old, user: ctx.user, dryRun: ctx.dryRun, audit: ctx.audit,
    });
  }

  private resetFields(): string[] {
    return this.kind.subresources?.status ? ['f:status'] : [];
  }

  private failure(result: WriteFailure, name: string): StatusError {
    switch (result.failure) {
      case 'exists': return errors.alreadyExists(this.groupResource, name);
      case 'notFound': return errors.notFound(this.groupResource, name);
      case 'conflict': return errors.staleUpdate(this.groupResource, name);
      default: return errors.serviceUnavailable(`storage is unavailable: ${result.message ?? 'unknown error'}`, 1);
    }
  }

  /** Commits a prepared object; returns what the read model now holds (or the object, on dry run). */
  /** `serialized`: the object's JSON when the caller already has it, with its resourceVersion at the canonical place. */
  private async commit(op: 'create' | 'update', obj: KObject, ctx: WriteContext, expectedRevision?: number, serialized?: string): Promise<StoredObject | WriteFailure> {
    if (ctx.dryRun) {
      // a dry run checks what storage would: a create of an existing name is still a conflict
      if (op === 'create' && this.deps.readModel.get(this.kind.resource, this.path(obj.metadata.namespace, obj.metadata.name as string))) {
        return { id: 0, ok: false, failure: 'exists' };
      }
      const out = structuredClone(obj);
      if (op === 'create') delete out.metadata.resourceVersion;
      return new StoredObject(out, 0);
    }
    const key = this.key(obj.metadata.namespace, obj.metadata.name as string);
    // stored with an empty resourceVersion in place: the commit's revision is spliced into the served JSON.
    // metadata's resourceVersion precedes every user-controlled string, so the first match is that field.
    const value = serialized !== undefined
      ? serialized.replace(`"resourceVersion":${JSON.stringify(obj.metadata.resourceVersion ?? '')}`, '"resourceVersion":""')
      : undefined;
    obj.metadata.resourceVersion = '';
    const result = await this.deps.writer.submit({ op, key, value: value ?? JSON.stringify(obj), expectedRevision, ttlMs: this.ttl() }, obj);
    if (!result.ok) return result;
    return this.deps.readModel.get(this.kind.resource, this.path(obj.metadata.namespace, obj.metadata.name as string))
      ?? new StoredObject(obj, result.revision);
  }

  async create(namespace: string | undefined, body: KObject, ctx: WriteContext): Promise<StoredObject> {
    const usesGenerateName = !body.metadata?.name && Boolean(body.metadata?.generateName);
    if (this.kind.namespaced) (body.metadata ??= {}).namespace = namespace;
    await this.admit('CREATE', body, undefined, body.metadata?.name ?? '', ctx);
    for (let attempt = 0; ; attempt++) {
      const obj = this.prepareCreate(body, namespace, ctx);
      await this.validateAdmission('CREATE', obj, undefined, obj.metadata.name ?? '', ctx);
      const out = await this.commit('create', obj, ctx);
      if (out instanceof StoredObject) return out;
      // a generated name that collided is retried with a new one, as RetryGenerateName does
      if (out.failure === 'exists' && usesGenerateName && attempt < 7) continue;
      throw this.failure(out, obj.metadata.name as string);
    }
  }

  /**
   * PUT: replaces the object (or a subresource's part of it). Without a resourceVersion in the
   * body the update is unconditional and retried when it races; with one, a mismatch is 409.
   */
  async update(namespace: string | undefined, name: string, body: KObject, ctx: WriteContext, subresource?: string): Promise<{ object: StoredObject; created: boolean }> {
    const wanted = body.metadata?.resourceVersion;
    for (let attempt = 0; attempt < maxWriteAttempts; attempt++) {
      const current = this.deps.readModel.get(this.kind.resource, this.path(namespace, name));
      if (!current) {
        if (!this.kind.allowCreateOnUpdate || subresource) throw errors.notFound(this.groupResource, name);
        if (wanted) throw errors.notFound(this.groupResource, name);
        try {
          return { object: await this.create(namespace, body, ctx), created: true };
        } catch (err) {
          if (err instanceof StatusError && err.reason === 'AlreadyExists') continue;
          throw err;
        }
      }
      if (wanted && wanted !== current.object.metadata.resourceVersion) throw errors.staleUpdate(this.groupResource, name);
      const uid = body.metadata?.uid;
      if (uid && uid !== current.object.metadata.uid) {
        // kube-apiserver turns a body uid into a storage precondition, failing as a storage error
        throw errors.conflict(this.groupResource, name, `StorageError: invalid object, Code: 4, Key: /registry/${this.key(namespace, name)}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${uid}, UID in object meta: ${current.object.metadata.uid}`);
      }
      const next = await this.admittedUpdate(body, current.object, ctx, subresource);
      const outcome = await this.writeUpdate(next, current, ctx);
      if (outcome instanceof StoredObject) return { object: outcome, created: false };
      if (outcome.failure === 'conflict' || outcome.failure === 'notFound') {
        if (wanted) throw errors.staleUpdate(this.groupResource, name);
        continue;
      }
      throw this.failure(outcome, name);
    }
    throw errors.staleUpdate(this.groupResource, name);
  }

  /**
   * Changes an object by a function of its current state, retrying on races: how controllers
   * and the registry itself update (GuaranteedUpdate). `mutate` returns undefined to skip.
   */
  async modify(namespace: string | undefined, name: string, ctx: WriteContext, mutate: (current: KObject) => KObject | undefined, subresource?: string): Promise<StoredObject | undefined> {
    for (let attempt = 0; attempt < maxWriteAttempts; attempt++) {
      const current = this.deps.readModel.get(this.kind.resource, this.path(namespace, name));
      if (!current) return undefined;
      const changed = mutate(structuredClone(current.object) as KObject);
      if (!changed) return current;
      const next = await this.admittedUpdate(changed, current.object, ctx, subresource);
      const outcome = await this.writeUpdate(next, current, ctx);
      if (outcome instanceof StoredObject) return outcome;
      if (outcome.failure === 'conflict') continue;
      if (outcome.failure === 'notFound') return undefined;
      throw this.failure(outcome, name);
    }
    throw errors.staleUpdate(this.groupResource, name);
  }

  /**
   * PATCH: `transform` turns the current object into the patched one; it is applied again to the
   * newest state whenever the write races. A resourceVersion the patch sets is a precondition.
   */
  async patch(namespace: string | undefined, name: string, ctx: WriteContext, transform: (current: KObject) => KObject, subresource?: string): Promise<StoredObject> {
    for (let attempt = 0; attempt < maxWriteAttempts; attempt++) {
      const current = this.get(namespace, name);
      const patched = transform(structuredClone(current.object) as KObject);
      patched.metadata ??= {};
      if (patched.metadata.name !== name) {
        throw errors.badRequest(`the name of the object (${patched.metadata.name ?? ''}) does not match the name on the URL (${name})`);
      }
      if (this.kind.namespaced && patched.metadata.namespace !== namespace) {
        throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      const wanted = patched.metadata.resourceVersion;
      if (wanted && wanted !== current.object.metadata.resourceVersion) throw errors.staleUpdate(this.groupResource, name);
      const next = await this.admittedUpdate(patched, current.object, ctx, subresource);
      const outcome = await this.writeUpdate(next, current, ctx);
      if (outcome instanceof StoredObject) return outcome;
      if (outcome.failure === 'conflict' && !(wanted && wanted !== current.object.metadata.resourceVersion)) continue;
      throw this.failure(outcome, name);
    }
    throw errors.staleUpdate(this.groupResource, name);
  }

  /**
   * Server-side apply: `merge` turns the live object (undefined when there is none) into the
   * applied result with its managedFields; a missing object is created. Retried when it races.
   */
  async apply(namespace: string | undefined, name: string, ctx: WriteContext, merge: (live: KObject | undefined) => KObject): Promise<{ object: StoredObject; created: boolean }> {
    const applyCtx: WriteContext = { ...ctx, applied: true };
    for (let attempt = 0; attempt < maxWriteAttempts; attempt++) {
      const current = this.deps.readModel.get(this.kind.resource, this.path(namespace, name));
      const merged = merge(current ? structuredClone(current.object) as KObject : undefined);
      if (!current) {
        try {
          return { object: await this.create(namespace, merged, applyCtx), created: true };
        } catch (err) {
          if (err instanceof StatusError && err.reason === 'AlreadyExists') continue;
          throw err;
        }
      }
      const next = await this.admittedUpdate(merged, current.object, applyCtx);
      const outcome = await this.writeUpdate(next, current, applyCtx);
      if (outcome instanceof StoredObject) return { object: outcome, created: false };
      if (outcome.failure === 'conflict' || outcome.failure === 'notFound') continue;
      throw this.failure(outcome, name);
    }
    throw errors.staleUpdate(this.groupResource, name);
  }

  /** An update through mutating admission, the kind's strategy, then validating admission. */
  private async admittedUpdate(body: KObject, stored: Readonly<KObject>, ctx: WriteContext, subresource?: string): Promise<KObject> {
    const name = stored.metadata.name as string;
    await this.admit('UPDATE', body, stored, name, ctx, subresource);
    const next = this.prepareUpdate(body, stored, ctx, subresource);
    await this.validateAdmission('UPDATE', next, stored, name, ctx, subresource);
    return next;
  }

  private prepareUpdate(body: KObject, stored: Readonly<KObject>, ctx: WriteContext, subresource?: string): KObject {
    const old = stored as KObject;
    let obj = structuredClone(body);
    obj.metadata ??= {};
    const name = old.metadata.name as string;
    if (subresource) {
      const project = this.kind.subresources?.[subresource];
      if (!project) throw errors.notFound(this.groupResource, name);
      obj = project(obj, structuredClone(old));
    } else {
      this.kind.prepareForUpdate?.(obj, old, ctx);
    }
    const meta = obj.metadata;
    // server-owned metadata follows the stored object whatever the body says
    if (!meta.uid) meta.uid = old.metadata.uid;
    meta.creationTimestamp = old.metadata.creationTimestamp;
    meta.deletionTimestamp = old.metadata.deletionTimestamp;
    meta.deletionGracePeriodSeconds = old.metadata.deletionGracePeriodSeconds;
    meta.generation = old.metadata.generation;
    if (this.kind.namespaced) meta.namespace ??= old.metadata.namespace;
    const errs = this.kind.validateUpdate(obj, old);
    if (errs.length) throw this.invalid(name, errs);
    if (!ctx.applied) {
      if (!meta.managedFields || meta.managedFields.length === 0) meta.managedFields = old.metadata.managedFields;
      const base = { ...old, metadata: { ...old.metadata, managedFields: meta.managedFields } };
      meta.managedFields = updateManagedFields(obj, base, { kind: this.kind, manager: ctx.manager, now: ctx.now, resetFields: subresource ? [] : this.resetFields() });
    }
    if (meta.managedFields?.length === 0) delete meta.managedFields;
    meta.resourceVersion = old.metadata.resourceVersion;
    return this.canonical(obj);
  }

  /** Writes an update, or deletes the object when the update removed its last finalizer. */
  private async writeUpdate(next: KObject, current: StoredObject, ctx: WriteContext): Promise<StoredObject | WriteFailure> {
    // serialized once: to see a no-op update (which writes nothing), then as the value committed
    const serialized = JSON.stringify(next);
    if (serialized === current.json) return current;
    const meta = next.metadata;
    const removable = meta.deletionTimestamp && (meta.finalizers ?? []).length === 0 && !this.kind.deletion?.blocksRemoval(next);
    if (removable) {
      if (ctx.dryRun) return new StoredObject(next, current.revision);
      const result = await this.deps.writer.submit({ op: 'delete', key: this.key(meta.namespace, meta.name as string), expectedRevision: current.revision });
      if (!result.ok) return result;
      const gone = structuredClone(next);
      gone.metadata.resourceVersion = String(result.revision);
      return new StoredObject(gone, result.revision);
    }
    return this.commit('update', next, ctx, current.revision, serialized);
  }

  async delete(namespace: string | undefined, name: string, options: DeleteOptions, ctx: WriteContext): Promise<DeleteOutcome> {
    for (let attempt = 0; attempt < maxWriteAttempts; attempt++) {
      const current = this.get(namespace, name);
      const obj = current.object;
      await this.validateAdmission('DELETE', undefined, obj, name, ctx);
      const pre = options.preconditions;
      // rest.BeforeDelete words these with the kind (not the resource) as the conflicting "resource"
      const byKind = { group: this.kind.group, resource: this.kind.kind };
      if (pre?.uid !== undefined && pre.uid !== obj.metadata.uid) {
        throw errors.conflict(byKind, name, `the UID in the precondition (${pre.uid}) does not match the UID in record (${obj.metadata.uid}). The object might have been deleted and then recreated`);
      }
      if (pre?.resourceVersion !== undefined && pre.resourceVersion !== obj.metadata.resourceVersion) {
        throw errors.conflict(byKind, name, `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${obj.metadata.resourceVersion}). The object might have been modified`);
      }
      if (obj.metadata.deletionTimestamp) {
        // already terminating: deleting again changes nothing
        return this.deletedOutcome(obj, false);
      }
      const pending = (obj.metadata.finalizers ?? []).length > 0 || Boolean(this.kind.deletion?.blocksRemoval(obj as KObject));
      if (pending) {
        const next = structuredClone(obj) as KObject;
        next.metadata.deletionTimestamp = formatTime(ctx.now);
        next.metadata.deletionGracePeriodSeconds = 0;
        this.kind.deletion?.markTerminating(next);
        if (ctx.dryRun) return { kind: 'object', object: next, deleted: false };
        const out = await this.commit('update', this.canonical(next), ctx, current.revision);
        if (out instanceof StoredObject) return { kind: 'object', object: out.object, deleted: false };
        if (out.failure === 'conflict') continue;
        throw this.failure(out, name);
      }
      if (ctx.dryRun) return this.deletedOutcome(obj, true);
      const result = await this.deps.writer.submit({ op: 'delete', key: this.key(namespace, name), expectedRevision: current.revision });
      if (result.ok) {
        const last = structuredClone(obj) as KObject;
        last.metadata.resourceVersion = String(result.revision);
        return this.deletedOutcome(last, true);
      }
      if (result.failure === 'conflict') continue;
      throw this.failure(result, name);
    }
    throw errors.staleUpdate(this.groupResource, name);
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

export function parseResourceVersion(rv: string): number {
  if (!/^[0-9]+$/.test(rv)) throw errors.badRequest(`invalid resource version: ${JSON.stringify(rv)}`);
  const n = Number(rv);
  if (!Number.isSafeInteger(n)) throw errors.badRequest(`invalid resource version: ${JSON.stringify(rv)}`);
  return n;
}
