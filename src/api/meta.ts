/** ObjectMeta and the reference types every kind shares, as declared in k8s.io/apimachinery. */
import type { StructSchema } from './schema.js';
import { s, type BuiltinStructural } from './schema/builtin-structural.js';
import { internalStructOf } from './schema/to-internal.js';

/** A stored or decoded object. Kinds refine it with their own fields. */
export interface KObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: ManagedFieldsEntry[];
  [field: string]: unknown;
}

export interface OwnerReference {
  apiVersion: string; kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean;
}

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: 'Apply' | 'Update';
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
}

const ownerReference = s.struct('OwnerReference', {
  apiVersion: s.string('API version of the referent.'),
  kind: s.string('Kind of the referent.'),
  name: s.string('Name of the referent.'),
  uid: s.string('UID of the referent.'),
  controller: s.boolean('If true, this reference points to the managing controller.'),
  blockOwnerDeletion: s.boolean('If true, the owner cannot be deleted from storage until this reference is removed.'),
}, undefined, {
  proto: { kind: 1, name: 3, uid: 4, apiVersion: 5, controller: 6, blockOwnerDeletion: 7 },
  required: ['apiVersion', 'kind', 'name', 'uid'],
});

const managedFieldsEntry = s.struct('ManagedFieldsEntry', {
  manager: s.string('Manager is an identifier of the workflow managing these fields.'),
  operation: s.string('Operation is the type of operation which lead to this ManagedFieldsEntry being created: Apply or Update.'),
  apiVersion: s.string('APIVersion defines the version of this resource that this field set applies to.'),
  time: s.time('Time is the timestamp of when the ManagedFields entry was added.'),
  fieldsType: s.string('FieldsType is the discriminator for the different fields format and version: FieldsV1.'),
  fieldsV1: s.any('FieldsV1 holds the first JSON version format as described in the "FieldsV1" type.'),
  subresource: s.string('Subresource is the name of the subresource used to update that object.'),
}, undefined, { proto: { manager: 1, operation: 2, apiVersion: 3, time: 4, fieldsType: 6, fieldsV1: 7, subresource: 8 }, pointers: ['time'] });

const objectMeta = s.struct('ObjectMeta', {
  name: s.string('Name must be unique within a namespace.'),
  generateName: s.string('An optional prefix used by the server to generate a unique name when Name is not provided.'),
  namespace: s.string('Namespace defines the space within which each name must be unique.'),
  selfLink: s.string('Deprecated: selfLink is a legacy read-only field that is no longer populated by the system.'),
  uid: s.string('UID is the unique in time and space value for this object.'),
  resourceVersion: s.string('An opaque value that represents the internal version of this object.'),
  generation: s.int64('A sequence number representing a specific generation of the desired state.'),
  creationTimestamp: s.time('Time at which this object was created, set by the server.'),
  deletionTimestamp: s.time('Time at which this resource will be deleted, set by the server when a deletion is requested.'),
  deletionGracePeriodSeconds: s.int64('Seconds allowed for this object to gracefully terminate before it is removed.'),
  labels: s.map(s.string(), 'Map of string keys and values that can be used to organize and categorize objects.'),
  annotations: s.map(s.string(), 'Unstructured key value map stored with a resource that may be set by external tools.'),
  ownerReferences: s.mapList(ownerReference, ['uid'], 'Objects depended on by this object.', { strategy: 'merge', mergeKey: 'uid' }),
  finalizers: s.setList(s.string(), 'Must be empty before the object is deleted from the registry.', { strategy: 'merge' }),
  managedFields: s.atomicList(managedFieldsEntry, 'Maps workflow-id and version to the set of fields that are managed by that workflow.'),
}, undefined, {
  proto: {
    name: 1, generateName: 2, namespace: 3, selfLink: 4, uid: 5, resourceVersion: 6, generation: 7, creationTimestamp: 8,
    deletionTimestamp: 9, deletionGracePeriodSeconds: 10, labels: 11, annotations: 12, ownerReferences: 13, finalizers: 14, managedFields: 17,
  },
  // an empty list resets them (the field manager reads it, then stores its own entries or none)
  keepsEmpty: ['managedFields'],
  pointers: ['deletionTimestamp'],
});
export const objectMetaSchema: StructSchema = internalStructOf(objectMeta);

export const objectReferenceStructural = s.struct('ObjectReference', {
  kind: s.string('Kind of the referent.'),
  namespace: s.string('Namespace of the referent.'),
  name: s.string('Name of the referent.'),
  uid: s.string('UID of the referent.'),
  apiVersion: s.string('API version of the referent.'),
  resourceVersion: s.string('Specific resourceVersion to which this reference is made, if any.'),
  fieldPath: s.string('If referring to a piece of an object instead of an entire object, a JSON path to it.'),
}, undefined, { atomic: true, proto: { kind: 1, namespace: 2, name: 3, uid: 4, apiVersion: 5, resourceVersion: 6, fieldPath: 7 } });

export const localObjectReferenceStructural = s.struct('LocalObjectReference', {
  name: s.string('Name of the referent.'),
}, undefined, { atomic: true, proto: { name: 1 } });

/** metav1.LabelSelectorRequirement and FieldSelectorRequirement: one shape */
function selectorRequirement(goName: string, what: string, description: string): BuiltinStructural {
  return s.struct(goName, {
    key: s.string(`key is the ${what} key that the selector applies to.`),
    operator: s.string("operator represents a key's relationship to a set of values. Valid operators are In, NotIn, Exists and DoesNotExist."),
    values: s.atomicList(s.string(), 'values is an array of string values.'),
  }, description, { proto: { key: 1, operator: 2, values: 3 }, required: ['key', 'operator'] });
}

export const labelSelectorRequirementStructural = selectorRequirement('LabelSelectorRequirement', 'label',
  'A label selector requirement is a selector that contains values, a key, and an operator that relates the key and values.');

export const fieldSelectorRequirementStructural = selectorRequirement('FieldSelectorRequirement', 'field',
  'FieldSelectorRequirement is a selector that contains values, a key, and an operator that relates the key and values.');

export const labelSelectorStructural = s.struct('LabelSelector', {
  matchLabels: s.map(s.string(), 'matchLabels is a map of {key,value} pairs.'),
  matchExpressions: s.atomicList(labelSelectorRequirementStructural, 'matchExpressions is a list of label selector requirements. The requirements are ANDed.'),
}, 'A label selector is a label query over a set of resources.', { proto: { matchLabels: 1, matchExpressions: 2 }, atomic: true });

/** The top-level fields every kind has. */
export function typeAndMeta(fields: Record<string, BuiltinStructural>): Record<string, BuiltinStructural> {
  return {
    apiVersion: s.string('APIVersion defines the versioned schema of this representation of an object.'),
    kind: s.string('Kind is a string value representing the REST resource this object represents.'),
    metadata: objectMeta,
    ...fields,
  };
}

/** The metadata of lists (and of Status, which carries a continue token with an expired one). */
const listMeta = s.struct('ListMeta', {
  selfLink: s.string('Deprecated: selfLink is a legacy read-only field that is no longer populated by the system.'),
  resourceVersion: s.string('String that identifies the server\'s internal version of this object.'),
  continue: s.string('continue may be set if the user set a limit on the number of items returned.'),
  remainingItemCount: s.int64('remainingItemCount is the number of subsequent items in the list which are not included in this list response.'),
}, undefined, { proto: { selfLink: 1, resourceVersion: 2, continue: 3, remainingItemCount: 4 } });
export const listMetaSchema: StructSchema = internalStructOf(listMeta);

const statusCause = s.struct('StatusCause', {
  reason: s.string('A machine-readable description of the cause of the error.'),
  message: s.string('A human-readable description of the cause of the error.'),
  field: s.string('The field of the resource that has caused this error.'),
}, undefined, { proto: { reason: 1, message: 2, field: 3 } });

const statusDetails = s.struct('StatusDetails', {
  name: s.string('The name attribute of the resource associated with the status StatusReason.'),
  group: s.string('The group attribute of the resource associated with the status StatusReason.'),
  kind: s.string('The kind attribute of the resource associated with the status StatusReason.'),
  uid: s.string('UID of the resource.'),
  causes: s.atomicList(statusCause, 'The Causes array includes more details associated with the StatusReason failure.'),
  retryAfterSeconds: s.int32('If specified, the time in seconds before the operation should be retried.'),
}, undefined, { proto: { name: 1, group: 2, kind: 3, causes: 4, retryAfterSeconds: 5, uid: 6 } });

export const statusSchema: StructSchema = internalStructOf(s.struct('Status', {
  apiVersion: s.string(),
  kind: s.string(),
  metadata: listMeta,
  status: s.string('Status of the operation. One of: "Success" or "Failure".'),
  message: s.string('A human-readable description of the status of this operation.'),
  reason: s.string('A machine-readable description of why this operation is in the "Failure" status.'),
  details: statusDetails,
  code: s.int32('Suggested HTTP return code for this status, 0 if not set.'),
}, undefined, { proto: { metadata: 1, status: 2, message: 3, reason: 4, details: 5, code: 6 } }));

/** The options of a DELETE, which clients send as a body (client-go in Protobuf) or as query parameters. */
const preconditions = s.struct('Preconditions', {
  uid: s.string('Specifies the target UID.'),
  resourceVersion: s.string('Specifies the target ResourceVersion'),
}, 'Must be fulfilled before a deletion is carried out. If not possible, a 409 Conflict status will be returned.', { proto: { uid: 1, resourceVersion: 2 } });

export const deleteOptionsSchema: StructSchema = internalStructOf(s.struct('DeleteOptions', {
  apiVersion: s.string('APIVersion defines the versioned schema of this representation of an object.'),
  kind: s.string('Kind is a string value representing the REST resource this object represents.'),
  gracePeriodSeconds: s.int64('The duration in seconds before the object should be deleted. Value must be non-negative integer. The value zero indicates delete immediately.'),
  preconditions,
  orphanDependents: s.boolean('Deprecated: please use the PropagationPolicy. Should the dependent objects be orphaned.'),
  propagationPolicy: s.string('Whether and how garbage collection will be performed: Orphan, Background or Foreground.'),
  dryRun: s.atomicList(s.string(), 'When present, indicates that modifications should not be persisted. Valid values are: - All: all dry run stages will be processed'),
}, 'DeleteOptions may be provided when deleting an API object.', { proto: { gracePeriodSeconds: 1, preconditions: 2, orphanDependents: 3, propagationPolicy: 4, dryRun: 5 } }));

/** Any object as its metadata alone (`as=PartialObjectMetadata`), and a list of them. */
const partialObjectMetadata = s.struct('PartialObjectMetadata', {
  apiVersion: s.string(),
  kind: s.string(),
  metadata: objectMeta,
}, undefined, { proto: { metadata: 1 } });
export const partialObjectMetadataSchema: StructSchema = internalStructOf(partialObjectMetadata);

export const partialObjectMetadataListSchema: StructSchema = internalStructOf(s.struct('PartialObjectMetadataList', {
  apiVersion: s.string(),
  kind: s.string(),
  metadata: listMeta,
  items: s.atomicList(partialObjectMetadata),
}, undefined, { proto: { metadata: 1, items: 2 } }));

/** A list's fields besides its items, as every `<Kind>List` declares them. */
const listEnvelope = internalStructOf(s.struct('List', { apiVersion: s.string(), kind: s.string(), metadata: listMeta }));

const listSchemas = new WeakMap<StructSchema, StructSchema>();

/**
 * The `<Kind>List` message of a kind: ListMeta and the items. Written in the internal form, as it
 * wraps the item's internal schema (a custom resource's has no built-in declaration to wrap).
 */
export function listSchemaOf(item: StructSchema): StructSchema {
  let list = listSchemas.get(item);
  if (!list) {
    list = {
      type: 'struct', goName: `${item.goName}List`,
      fields: { ...listEnvelope.fields, items: { type: 'list', items: item, listType: 'atomic' } },
      required: ['items'], proto: { metadata: 1, items: 2 },
    };
    listSchemas.set(item, list);
  }
  return list;
}
