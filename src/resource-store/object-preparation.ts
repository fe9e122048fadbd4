/**
 * What the generic store does to an object before it is written, for any kind (the strategy's
 * BeforeCreate / BeforeUpdate in Kubernetes): server-owned metadata, the kind's prepare hooks,
 * validation, managed fields, and the canonical field order every stored object has.
 */
import { isDeepStrictEqual } from 'node:util';
import { randomUUID } from 'node:crypto';
import { copyJson } from '../api/json-copy.js';
import { apiVersionOf, type KindDeclaration } from '../api/kind.js';
import type { KObject, ObjectMeta } from '../api/meta.js';
import { setOwn } from '../api/own-member.js';
import { formatTime } from '../api/schema.js';
import { fillGoZeros } from '../api/schema/go-zero-values.js';
import { validateManagedFields } from '../api/validation/names.js';
import { updateManagedFields } from '../patch/managed-fields.js';
import { errors, type StatusError } from '../status/status-error.js';
import type { WriteContext } from './store-types.js';

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

/** The object in canonical field order: kind, apiVersion, metadata (in ObjectMeta's order), then the schema's order, then the rest. */
export function canonical(kind: KindDeclaration, obj: KObject): KObject {
  const meta: ObjectMeta = {};
  for (const k of metaOrder) if (obj.metadata[k] !== undefined) meta[k] = obj.metadata[k];
  for (const [k, v] of Object.entries(obj.metadata)) if (meta[k] === undefined && v !== undefined) meta[k] = v;
  const out: KObject = { kind: kind.kind, apiVersion: apiVersionOf(kind), metadata: meta };
  for (const field of Object.keys(kind.schema.fields)) {
    if (field === 'kind' || field === 'apiVersion' || field === 'metadata') continue;
    if (obj[field] !== undefined) out[field] = obj[field];
  }
  // then what the schema does not name: a custom resource's fields that
  // x-kubernetes-preserve-unknown-fields keeps at its root (any other kind's were dropped when decoded)
  if (kind.schema.preservesUnknownFields) {
    for (const field of Object.keys(obj)) {
      if (!Object.hasOwn(out, field) && obj[field] !== undefined) setOwn(out, field, obj[field]);
    }
  }
  return out;
}

export function invalid(kind: KindDeclaration, name: string, errs: ReturnType<KindDeclaration['validate']>): StatusError {
  // rest.BeforeCreate/BeforeUpdate name the kind by strategy.ObjectKinds(internal object)[0]
  return errors.invalid({ group: kind.internalGroup ?? kind.group, kind: kind.kind }, name, errs);
}

/** Fields the main resource never changes: a status subresource owns them. */
export function resetFields(kind: KindDeclaration): string[] {
  return kind.subresources?.status ? ['f:status'] : [];
}

/**
 * Fields a write to the status subresource does not change: every top-level field but status
 * (the strategy copies the rest from the stored object), named in the applied object or the schema.
 */
export function statusResetFields(kind: KindDeclaration, applied: Readonly<KObject>): string[] {
  const fields = new Set([...Object.keys(kind.schema.fields), ...Object.keys(applied)]);
  for (const kept of ['apiVersion', 'kind', 'metadata', 'status']) fields.delete(kept);
  return [...fields].map((f) => `f:${f}`);
}

/** Stamps server-owned fields, defaults, validates. Returns the object to store. */
export function prepareCreate(kind: KindDeclaration, body: KObject, namespace: string | undefined, ctx: WriteContext): KObject {
  const obj = copyJson(body);
  const meta = obj.metadata ?? (obj.metadata = {});
  if (kind.namespaced) meta.namespace = namespace;
  if (meta.resourceVersion) {
    // kube-apiserver's storage refuses this with a plain error: 500 without a reason
    throw errors.unknown('resourceVersion should not be set on objects to be created');
  }
  delete meta.deletionTimestamp;
  delete meta.deletionGracePeriodSeconds;
  delete meta.selfLink;
  delete meta.generation;
  kind.setDefaults?.(obj);
  fillGoZeros(kind.schema, obj);
  // ownership as the submitted object has it, defaulted, before the strategy's own changes
  if (!ctx.applied) meta.managedFields = updateManagedFields(obj, undefined, { kind, manager: ctx.manager, now: ctx.now, resetFields: resetFields(kind) });
  if (meta.managedFields?.length === 0) delete meta.managedFields;
  kind.prepareForCreate?.(obj, ctx);
  fillGoZeros(kind.schema, obj); // what the strategy reset (a status) Go writes empty
  if (kind.tracksGeneration) meta.generation = 1;
  meta.uid = randomUUID();
  meta.creationTimestamp = formatTime(ctx.now);
  if (!meta.name && meta.generateName) meta.name = generateName(meta.generateName);
  const errs = kind.validate(obj);
  if (errs.length) throw invalid(kind, meta.name ?? '', errs);
  const managedErrs = validateManagedFields(meta.managedFields);
  if (managedErrs.length) throw invalid(kind, meta.name ?? '', managedErrs);
  meta.resourceVersion = ''; // keeps the field's place in canonical order; the commit's revision fills it
  return canonical(kind, obj);
}

/** The stored object changed as `body` says (or a subresource's projection of it), server-owned metadata kept. */
export function prepareUpdate(kind: KindDeclaration, body: KObject, stored: Readonly<KObject>, ctx: WriteContext, subresource?: string): KObject {
  const old = stored as KObject;
  let obj = copyJson(body);
  obj.metadata ??= {};
  const name = old.metadata.name as string;
  if (subresource) {
    const project = kind.subresources?.[subresource];
    if (!project) throw errors.notFound({ group: kind.group, resource: kind.resource }, name);
    const applied = ctx.applied ? obj.metadata.managedFields : undefined;
    obj = project(obj, copyJson(old));
    // the apply's ownership of the subresource's fields goes with it (the projection keeps the stored metadata)
    if (ctx.applied) obj.metadata.managedFields = applied;
  } else {
    // generation is the server's: the kind's strategy may move it from the stored value
    obj.metadata.generation = old.metadata.generation;
    if (obj.metadata.generation === undefined) delete obj.metadata.generation;
  }
  kind.setDefaults?.(obj);
  fillGoZeros(kind.schema, obj);
  const meta = obj.metadata;
  // ownership as the submitted object has it, defaulted, before the strategy's own changes
  if (!ctx.applied) {
    meta.managedFields = updateManagedFields(obj, old, {
      kind, manager: ctx.manager, now: ctx.now, resetFields: subresource ? [] : resetFields(kind), subresource, ignoreSentManagedFields: subresource !== undefined,
    });
  }
  if (meta.managedFields?.length === 0) delete meta.managedFields;
  if (!subresource) kind.prepareForUpdate?.(obj, old, ctx);
  fillGoZeros(kind.schema, obj); // what the strategy or the subresource reset Go writes empty
  // server-owned metadata follows the stored object whatever the body says
  if (!meta.uid) meta.uid = old.metadata.uid;
  meta.creationTimestamp = old.metadata.creationTimestamp;
  meta.deletionTimestamp = old.metadata.deletionTimestamp;
  meta.deletionGracePeriodSeconds = old.metadata.deletionGracePeriodSeconds;
  // a kind that tracks its generation counts the changes of its spec (FlowSchema, PriorityLevelConfiguration)
  if (kind.tracksGeneration && !isDeepStrictEqual((obj as { spec?: unknown }).spec, (old as { spec?: unknown }).spec)) {
    meta.generation = (old.metadata.generation ?? 0) + 1;
  }
  if (kind.namespaced) meta.namespace ??= old.metadata.namespace;
  const errs = kind.validateUpdate(obj, old);
  if (errs.length) throw invalid(kind, name, errs);
  const managedErrs = validateManagedFields(meta.managedFields);
  if (managedErrs.length) throw invalid(kind, name, managedErrs);
  meta.resourceVersion = old.metadata.resourceVersion;
  return canonical(kind, obj);
}
