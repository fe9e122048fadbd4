/**
 * The CustomResourceDefinition kind (apiextensions.orch.io/v1, served as apiextensions.k8s.io/v1
 * too through the group aliases). Its strategy follows Kubernetes': status is the status
 * subresource's, generation moves with the spec, storedVersions gains the storage version, names
 * (singular, listKind), the conversion strategy and a webhook service's port are defaulted, and
 * the first DELETE adds the cleanup finalizer and the Terminating condition, so that every custom
 * resource goes before the definition does.
 */
import { copyJson } from '../api/json-copy.js';
import { allVerbs, builtinKind, defaultUnknownFieldLabelMessage, type KindDeclaration } from '../api/kind.js';
import { typeAndMeta, type KObject } from '../api/meta.js';
import { formatTime } from '../api/schema.js';
import { s } from '../api/schema/builtin-structural.js';
import { cleanupFinalizer, crdGroup, type CrdCondition, type CrdObject } from './crd-types.js';
import { validateCrd, validateCrdUpdate } from './crd-validation.js';
import { defaultServicePort } from './webhook-client-config.js';

const names = s.struct('CustomResourceDefinitionNames', {
  plural: s.string('plural is the plural name of the resource to serve.'),
  singular: s.string('singular is the singular name of the resource. It must be all lowercase. Defaults to lowercased `kind`.'),
  shortNames: s.atomicList(s.string(), 'shortNames are short names for the resource, exposed in API discovery documents.'),
  kind: s.string('kind is the serialized kind of the resource. It is normally CamelCase and singular.'),
  listKind: s.string('listKind is the serialized kind of the list for this resource. Defaults to "`kind`List".'),
  categories: s.atomicList(s.string(), 'categories is a list of grouped resources this custom resource belongs to (e.g. \'all\').'),
}, 'CustomResourceDefinitionNames indicates the names to serve this CustomResourceDefinition', { required: ['plural', 'kind'] });

const printerColumn = s.struct('CustomResourceColumnDefinition', {
  name: s.string('name is a human readable name for the column.'),
  type: s.string('type is an OpenAPI type definition for this column.'),
  format: s.string('format is an optional OpenAPI type definition for this column.'),
  description: s.string('description is a human readable description of this column.'),
  priority: s.int32('priority is an integer defining the relative importance of this column compared to others.'),
  jsonPath: s.string('jsonPath is a simple JSON path (i.e. with array notation) which is evaluated against each custom resource to produce the value for this column.'),
}, 'CustomResourceColumnDefinition specifies a column for server side printing.', { required: ['name', 'type', 'jsonPath'] });

const scale = s.struct('CustomResourceSubresourceScale', {
  specReplicasPath: s.string('specReplicasPath defines the JSON path inside of a custom resource that corresponds to Scale `spec.replicas`.'),
  statusReplicasPath: s.string('statusReplicasPath defines the JSON path inside of a custom resource that corresponds to Scale `status.replicas`.'),
  labelSelectorPath: s.string('labelSelectorPath defines the JSON path inside of a custom resource that corresponds to Scale `status.selector`.'),
}, 'CustomResourceSubresourceScale defines how to serve the scale subresource for CustomResources.', { required: ['specReplicasPath', 'statusReplicasPath'] });

const serviceReference = s.struct('ServiceReference', {
  namespace: s.string('namespace is the namespace of the service.'),
  name: s.string('name is the name of the service.'),
  path: s.string('path is an optional URL path at which the webhook will be contacted.'),
  port: s.int32('port is an optional service port at which the webhook will be contacted.'),
}, 'service is a reference to the service for this webhook.', { required: ['namespace', 'name'] });

const selectableField = s.struct('SelectableField', { jsonPath: s.string('jsonPath is a simple JSON path which is evaluated against each custom resource to produce a field selector value.') }, 'SelectableField specifies the JSON path of a field that may be used with field selectors.', { required: ['jsonPath'] });

const version = s.struct('CustomResourceDefinitionVersion', {
  name: s.string('name is the version name, e.g. “v1”, “v2beta1”, etc.'),
  served: s.boolean('served is a flag enabling/disabling this version from being served via REST APIs'),
  storage: s.boolean('storage indicates this version should be used when persisting custom resources to storage.'),
  deprecated: s.boolean('deprecated indicates this version of the custom resource API is deprecated.'),
  deprecationWarning: s.string('deprecationWarning overrides the default warning returned to API clients.'),
  schema: s.struct('CustomResourceValidation', {
    openAPIV3Schema: s.any('openAPIV3Schema is the OpenAPI v3 schema to use for validation and pruning.'),
  }, 'schema describes the schema used for validation, pruning, and defaulting of this version of the custom resource.'),
  subresources: s.struct('CustomResourceSubresources', {
    status: s.struct('CustomResourceSubresourceStatus', {}, 'status indicates the custom resource should serve a `/status` subresource.'),
    scale,
  }, 'subresources specify what subresources this version of the defined custom resource have.', { pointers: ['status', 'scale'] }),
  additionalPrinterColumns: s.atomicList(printerColumn, 'additionalPrinterColumns specifies additional columns returned in Table output.'),
  selectableFields: s.atomicList(selectableField, 'selectableFields specifies paths to fields that may be used as field selectors.'),
}, 'CustomResourceDefinitionVersion describes a version for CRD.', { required: ['name', 'served', 'storage'], pointers: ['schema', 'subresources'] });

const webhookConversion = s.struct('WebhookConversion', {
  clientConfig: s.struct('WebhookClientConfig', {
    url: s.string('url gives the location of the webhook, in standard URL form (`scheme://host:port/path`).'),
    service: serviceReference,
    caBundle: s.bytes('caBundle is a PEM encoded CA bundle which will be used to validate the webhook\'s server certificate.'),
  }, 'clientConfig is the instructions for how to call the webhook if strategy is `Webhook`.', { pointers: ['service'] }),
  conversionReviewVersions: s.atomicList(s.string(), 'conversionReviewVersions is an ordered list of preferred `ConversionReview` versions the Webhook expects.'),
}, 'webhook describes how to call the conversion webhook.', { required: ['conversionReviewVersions'], pointers: ['clientConfig'] });

const conversion = s.struct('CustomResourceConversion', {
  strategy: s.string('strategy specifies how custom resources are converted between versions. Allowed values are: - `"None"`: The converter only change the apiVersion and would not touch any other field in the custom resource. - `"Webhook"`: API Server will call to an external webhook to do the conversion.'),
  webhook: webhookConversion,
}, 'conversion defines conversion settings for the CRD.', { required: ['strategy'], pointers: ['webhook'] });

const spec = s.struct('CustomResourceDefinitionSpec', {
  group: s.string('group is the API group of the defined custom resource.'),
  names,
  scope: s.string('scope indicates whether the defined custom resource is cluster- or namespace-scoped. Allowed values are `Cluster` and `Namespaced`.'),
  versions: s.atomicList(version, 'versions is the list of all API versions of the defined custom resource.'),
  conversion,
  preserveUnknownFields: s.boolean('preserveUnknownFields indicates that object fields which are not specified in the OpenAPI schema should be preserved when persisting to storage.'),
}, 'spec describes how the user wants the resources to appear', { required: ['group', 'names', 'scope', 'versions'], pointers: ['conversion'] });

const condition = s.struct('CustomResourceDefinitionCondition', {
  type: s.string('type is the type of the condition. Types include Established, NamesAccepted and Terminating.'),
  status: s.string('status is the status of the condition. Can be True, False, Unknown.'),
  lastTransitionTime: s.time('lastTransitionTime last time the condition transitioned from one status to another.'),
  reason: s.string('reason is a unique, one-word, CamelCase reason for the condition\'s last transition.'),
  message: s.string('message is a human-readable message indicating details about last transition.'),
}, 'CustomResourceDefinitionCondition contains details for the current condition of this pod.', { required: ['type', 'status'] });

const crdSchema = s.struct('CustomResourceDefinition', typeAndMeta({
  spec,
  status: s.struct('CustomResourceDefinitionStatus', {
    conditions: s.mapList(condition, ['type'], 'conditions indicate state for particular aspects of a CustomResourceDefinition'),
    acceptedNames: names,
    storedVersions: s.atomicList(s.string(), 'storedVersions lists all versions of CustomResources that were ever persisted.'),
  }, 'status indicates the actual state of the CustomResourceDefinition', { withoutOmitEmpty: ['conditions', 'storedVersions'] }),
}), 'CustomResourceDefinition represents a resource that should be exposed on the API server.  Its name MUST be in the format <.spec.name>.<.spec.group>.', { required: ['spec'] });

/** Sets a condition, keeping lastTransitionTime when the status did not change (SetCRDCondition). */
export function setCondition(crd: CrdObject, c: CrdCondition, now: number): void {
  const status = crd.status ??= {};
  const conditions = status.conditions ??= [];
  const i = conditions.findIndex((x) => x.type === c.type);
  const existing = i >= 0 ? conditions[i] : undefined;
  const next = { ...c, lastTransitionTime: existing && existing.status === c.status ? existing.lastTransitionTime : formatTime(now) };
  if (i >= 0) conditions[i] = next; else conditions.push(next);
}

function storageVersionOf(crd: CrdObject): string | undefined {
  return crd.spec?.versions?.find((v) => v.storage)?.name;
}

function defaultSpec(crd: CrdObject): void {
  const n = crd.spec?.names;
  if (!n) return;
  if (n.kind && !n.singular) n.singular = n.kind.toLowerCase();
  if (n.kind && !n.listKind) n.listKind = `${n.kind}List`;
  crd.spec.conversion ??= { strategy: 'None' };
  const service = crd.spec.conversion.webhook?.clientConfig?.service;
  if (service && service.port === undefined) service.port = defaultServicePort;
}

function recordStoredVersion(crd: CrdObject): void {
  const storage = storageVersionOf(crd);
  const status = crd.status ??= {};
  const stored = status.storedVersions ??= [];
  if (storage && !stored.includes(storage)) stored.push(storage);
}

export const crdKind: KindDeclaration = builtinKind({
  group: crdGroup, version: 'v1', kind: 'CustomResourceDefinition', listKind: 'CustomResourceDefinitionList',
  resource: 'customresourcedefinitions', singular: 'customresourcedefinition', shortNames: ['crd', 'crds'],
  categories: ['api-extensions'], namespaced: false, verbs: allVerbs,
  structural: crdSchema,
  // the schema document (JSONSchemaProps) has no protobuf form here: JSON, YAML and CBOR only
  protobuf: false,
  nameRule: 'dns1123Subdomain',
  returnDeletedObject: true,
  allowCreateOnUpdate: false,
  fieldLabels: {},
  unknownFieldLabelMessage: defaultUnknownFieldLabelMessage,
  setDefaults: (obj) => defaultSpec(obj as CrdObject),
  prepareForCreate(obj) {
    const crd = obj as CrdObject;
    crd.status = {};
    crd.metadata.generation = 1;
    recordStoredVersion(crd);
  },
  prepareForUpdate(obj, old) {
    const crd = obj as CrdObject;
    const prev = old as CrdObject;
    crd.status = copyJson(prev.status ?? {});
    if (JSON.stringify(crd.spec) !== JSON.stringify(prev.spec)) crd.metadata.generation = (prev.metadata.generation ?? 0) + 1;
    else crd.metadata.generation = prev.metadata.generation;
    recordStoredVersion(crd);
  },
  subresources: {
    status: (submitted, stored) => ({ ...stored, status: (submitted as CrdObject).status }),
  },
  deletion: {
    markTerminating(obj: KObject) {
      const crd = obj as CrdObject;
      const finalizers = crd.metadata.finalizers ??= [];
      if (!finalizers.includes(cleanupFinalizer)) finalizers.push(cleanupFinalizer);
      setCondition(crd, {
        type: 'Terminating', status: 'True', reason: 'InstanceDeletionPending',
        message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
      }, Date.parse(crd.metadata.deletionTimestamp ?? '') || Date.now());
    },
    // the first DELETE never removes at once: it adds the cleanup finalizer (markTerminating)
    blocksRemoval: (obj) => !obj.metadata.deletionTimestamp,
  },
  validate: (obj) => validateCrd(obj as CrdObject),
  validateUpdate: (obj, old) => validateCrdUpdate(obj as CrdObject, old as CrdObject),
});
