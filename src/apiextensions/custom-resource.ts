/**
 * The KindDeclarations a CustomResourceDefinition serves: one per served version, the storage
 * version owning the stored objects and the others views of them (conversion None: apiVersion
 * rewritten). Objects are unstructured: decoded by pruning and defaulting with the version's
 * structural schema, validated against every keyword, printed by the printer columns, selected
 * by the selectable fields. Protobuf is refused, as Kubernetes refuses it for custom resources.
 */
import { copyJson } from '../api/json-copy.js';
import { allVerbs, defaultUnknownFieldLabelMessage, fieldLabelNotSupported, type Conversion, type KindDeclaration } from '../api/kind.js';
import { objectMetaSchema, typeAndMeta, type KObject } from '../api/meta.js';
import { decodeValue, type DecodeOutcome, type Schema, type StructSchema } from '../api/schema.js';
import { s } from '../api/schema/builtin-structural.js';
import { applyDefaults, hasDefaults } from '../api/schema/defaulting.js';
import { prune } from '../api/schema/prune.js';
import type { Structural } from '../api/schema/structural.js';
import { internalStructOf, toInternal } from '../api/schema/to-internal.js';
import { validateValue } from '../api/schema/value-validation.js';
import { Correlated } from '../api/schema/correlation.js';
import { validateObjectMeta, validateObjectMetaUpdate } from '../api/validation/names.js';
import { fieldErrors, type FieldError } from '../status/status-error.js';
import type { CrdObject, CrdVersion } from './crd-types.js';
import { versionSchema } from './crd-validation.js';
import { fieldNameOf, parseJsonPath, valueAt } from './json-path.js';
import { printerColumns } from './printer-columns.js';
import { compareVersionPriority } from './version-priority.js';
import { RuleValidator } from './cel/rule-validator.js';
import { ConversionWebhook, webhookConversion } from './conversion-webhook.js';
import { scaleSubresource } from './scale.js';
import { scaleKind } from '../api/autoscaling/scale.js';

/** Errors after which an object does not have the shape its CEL rules were written for (strategy.go's hasBlockingErr). */
const blockingErrors = new Set(['FieldValueNotSupported', 'FieldValueRequired', 'FieldValueTooLong', 'FieldValueTooMany', 'FieldValueTypeInvalid']);

/** apiVersion, kind and metadata (ObjectMeta), as built-in kinds declare them */
const typeAndMetaSchema = internalStructOf(s.struct('TypeAndMeta', typeAndMeta({})));

/** The internal schema of a custom resource: the structural properties, with ObjectMeta as metadata. */
function internalSchemaOf(kind: string, structural: Structural): StructSchema {
  const fields: Record<string, Schema> = { ...typeAndMetaSchema.fields };
  for (const [k, v] of Object.entries(structural.properties ?? {})) {
    if (k === 'apiVersion' || k === 'kind' || k === 'metadata') continue;
    fields[k] = toInternal(v, `${kind}.${k}`);
  }
  const schema: StructSchema = { type: 'struct', goName: kind, fields, description: structural.description };
  if (structural.preserveUnknownFields) schema.preservesUnknownFields = true;
  return schema;
}

/** A selectable field's value as a field selector compares it (strings, integers and booleans as text). */
function selectableValue(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Everything but metadata and status: what a change to moves the generation. */
function specOf(obj: Readonly<KObject>, withStatus: boolean): string {
  const { metadata: _m, status: _s, ...rest } = obj as KObject & { status?: unknown };
  return JSON.stringify(withStatus ? rest : { ...rest, status: _s });
}

/** How the declarations of a CRD behave, from the server's feature gates. */
export interface CrdServingOptions {
  /** CRDValidationRatcheting: on update, errors of values that did not change are dropped */
  ratcheting: boolean;
}

function declarationOf(crd: CrdObject, v: CrdVersion, index: number, storageVersion: string, webhook: ConversionWebhook | undefined, options: CrdServingOptions): KindDeclaration | undefined {
  const { schema: structural } = versionSchema(v, `spec.versions[${index}]`);
  if (!structural) return undefined;
  const { group, names } = crd.spec;
  const namespaced = crd.spec.scope === 'Namespaced';
  const hasStatus = v.subresources?.status !== undefined;
  const apiVersion = `${group}/${v.name}`;
  const defaults = hasDefaults(structural);
  const selectable = (v.selectableFields ?? []).map((f) => parseJsonPath(f.jsonPath));
  const fieldLabels: Record<string, (o: KObject) => string | undefined> = {};
  for (const path of selectable) fieldLabels[fieldNameOf(path)] = (o) => selectableValue(valueAt(o, path));

  const defaulted = (o: KObject, apiVersionServed: string): KObject => {
    if (!defaults && o.apiVersion === apiVersionServed) return o;
    const copy = copyJson(o);
    copy.apiVersion = apiVersionServed;
    if (defaults) applyDefaults(copy, structural);
    return copy;
  };
  let storage: KindDeclaration['storage'];
  let conversion: Conversion | undefined;
  if (v.name !== storageVersion) {
    const storedApiVersion = `${group}/${storageVersion}`;
    storage = { group, resource: names.plural };
    conversion = webhook
      ? webhookConversion(webhook, apiVersion, storedApiVersion, (o) => defaulted(o, apiVersion))
      : { fromStorage: (o) => defaulted(o, apiVersion), toStorage: (o) => ({ ...o, apiVersion: storedApiVersion }) };
  } else if (defaults) {
    // objects stored before a default existed are defaulted when read
    conversion = { fromStorage: (o) => defaulted(o, apiVersion), toStorage: (o) => o };
  }

  const rules = new RuleValidator(structural);
  /**
   * Schema validation, then the CEL rules unless the object does not have the shape they were
   * written for; on update with ratcheting, both drop the errors of values that did not change.
   */
  const validateBody = (obj: KObject, old?: KObject): FieldError[] => {
    const correlation = old && options.ratcheting ? new Correlated(obj, old, structural) : undefined;
    const errs = validateValue(structural, obj, '', correlation);
    if (!rules.active) return errs;
    if (errs.some((e) => blockingErrors.has(e.type))) {
      return [...errs, fieldErrors.invalid('<nil>', 'null', 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation')];
    }
    return [...errs, ...rules.validate(obj, old, undefined, correlation)];
  };
  const subresources: Record<string, (submitted: KObject, stored: KObject) => KObject> = {};
  if (hasStatus) subresources.status = (submitted, stored) => ({ ...stored, status: (submitted as { status?: unknown }).status } as KObject);
  const scale = v.subresources?.scale ? scaleSubresource(v.subresources.scale) : undefined;
  if (scale) subresources.scale = scale.project;

  const decl: KindDeclaration = {
    group, version: v.name, kind: names.kind, listKind: names.listKind ?? `${names.kind}List`,
    resource: names.plural, singular: names.singular ?? names.kind.toLowerCase(), shortNames: names.shortNames ?? [],
    categories: names.categories, namespaced, verbs: allVerbs,
    storage, conversion,
    schema: internalSchemaOf(names.kind, structural),
    structural,
    openApiAsWritten: true,
    protobuf: false,
    nameRule: 'dns1123Subdomain',
    returnDeletedObject: true,
    allowCreateOnUpdate: false,
    fieldLabels,
    unknownFieldLabelMessage: selectable.length ? fieldLabelNotSupported : defaultUnknownFieldLabelMessage,
    table: printerColumns(v.additionalPrinterColumns),
    deprecationWarning: v.deprecated ? (v.deprecationWarning ?? `${apiVersion} ${names.kind} is deprecated`) : undefined,
    decodeUnstructured(raw) {
      const outcome: DecodeOutcome = { unknownFields: [] };
      const object = raw as KObject;
      object.metadata = isObject(raw.metadata) ? decodeValue(objectMetaSchema, raw.metadata, 'metadata', 'ObjectMeta', outcome) as KObject['metadata'] : {};
      const pruned = prune(object, structural);
      applyDefaults(object, structural);
      return { object, unknownFields: [...outcome.unknownFields, ...pruned] };
    },
    // apply and patch results are defaulted here too (bodies already were, when decoded)
    setDefaults: (obj) => applyDefaults(obj, structural),
    prepareForCreate(obj) {
      if (hasStatus) delete (obj as { status?: unknown }).status;
      obj.metadata.generation = 1;
    },
    prepareForUpdate(obj, old) {
      if (hasStatus) {
        const prev = (old as { status?: unknown }).status;
        if (prev === undefined) delete (obj as { status?: unknown }).status; else (obj as { status?: unknown }).status = prev;
      }
      const changed = specOf(obj, hasStatus) !== specOf(old, hasStatus);
      obj.metadata.generation = (old.metadata.generation ?? 1) + (changed ? 1 : 0);
    },
    subresources: Object.keys(subresources).length ? subresources : undefined,
    subresourceViews: scale ? { scale: { kind: scaleKind, view: scale.view } } : undefined,
    validate: (obj) => [...validateObjectMeta(obj.metadata, namespaced, 'dns1123Subdomain'), ...validateBody(obj), ...(scale?.validate(obj) ?? [])],
    validateUpdate: (obj, old) => [
      ...validateObjectMeta(obj.metadata, namespaced, 'dns1123Subdomain'), ...validateObjectMetaUpdate(obj.metadata, old.metadata),
      ...validateBody(obj, old), ...(scale?.validate(obj) ?? []),
    ],
  };
  return decl;
}

/** What a CRD registers: its served versions, and its storage version when that is not served. */
export interface CrdDeclarations {
  /** in version priority order (discovery's preferred version first) */
  served: KindDeclaration[];
  /** the storage version of a CRD that does not serve it (`served: false`): stored, never routed */
  unservedStorage?: KindDeclaration;
}

/** The declarations of a CRD; none when the storage version's schema is unusable. */
export function declarationsOf(crd: CrdObject, options: CrdServingOptions): CrdDeclarations {
  const versions = crd.spec.versions.map((v, i) => ({ v, i }));
  const storage = versions.find(({ v }) => v.storage);
  if (!storage) return { served: [] };
  const storageVersion = storage.v.name;
  const conversion = crd.spec.conversion;
  const webhook = conversion?.strategy === 'Webhook' ? new ConversionWebhook(conversion.webhook?.clientConfig, `${crd.spec.group}/${storageVersion}, Kind=${crd.spec.names.kind}`) : undefined;
  const unservedStorage = storage.v.served ? undefined : declarationOf(crd, storage.v, storage.i, storageVersion, webhook, options);
  if (!storage.v.served && !unservedStorage) return { served: [] };
  const served: KindDeclaration[] = [];
  for (const { v, i } of versions.filter(({ v }) => v.served).sort((a, b) => compareVersionPriority(a.v.name, b.v.name))) {
    const decl = declarationOf(crd, v, i, storageVersion, webhook, options);
    if (decl) served.push(decl);
  }
  return { served, unservedStorage };
}
