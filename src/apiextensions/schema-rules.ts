/**
 * What a CRD's schema must satisfy beyond structural-ness (apiextensions' validation of
 * JSONSchemaProps in v1): keywords Kubernetes refuses, the list/map markers' values, and defaults
 * that validate against their own schema (checked after pruning, as Kubernetes does).
 */
import { applyDefaults } from '../api/schema/defaulting.js';
import { prune } from '../api/schema/prune.js';
import type { Structural } from '../api/schema/structural.js';
import { validateValue } from '../api/schema/value-validation.js';
import { fieldErrors, type FieldError } from '../status/status-error.js';

const listTypes = ['atomic', 'map', 'set'];
const mapTypes = ['atomic', 'granular'];

export function validateSchemaRules(s: Structural, path: string, root = true): FieldError[] {
  const errs: FieldError[] = [];
  const at = (name: string) => `${path}.${name}`;
  for (const keyword of s.unsupported ?? []) errs.push(fieldErrors.forbidden(at(keyword), `${keyword} is not supported`));
  if (s.uniqueItems) errs.push(fieldErrors.forbidden(at('uniqueItems'), 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
  if (s.additionalProperties !== undefined && s.properties && Object.keys(s.properties).length > 0) {
    errs.push(fieldErrors.forbidden(at('additionalProperties'), 'additionalProperties and properties are mutual exclusive'));
  }
  if (s.additionalProperties === false) errs.push(fieldErrors.forbidden(at('additionalProperties'), 'additionalProperties cannot be set to false'));
  if (s.preserveUnknownFields === false) errs.push(fieldErrors.invalid(at('x-kubernetes-preserve-unknown-fields'), false, 'must be true or undefined'));
  if (s.listType !== undefined) {
    if (!listTypes.includes(s.listType)) errs.push(fieldErrors.notSupported(at('x-kubernetes-list-type'), s.listType, listTypes));
    else if (s.type !== 'array') errs.push(fieldErrors.invalid(at('type'), s.type ?? '', 'must be array if x-kubernetes-list-type is specified'));
    if (s.listType === 'map' && !s.listMapKeys?.length) errs.push(fieldErrors.required(at('x-kubernetes-list-map-keys'), 'must not be empty if x-kubernetes-list-type is map'));
    if (s.listType === 'map' && s.items?.type !== 'object') errs.push(fieldErrors.invalid(at('items.type'), s.items?.type ?? '', 'must be object when x-kubernetes-list-type is map'));
    if (s.listType === 'set' && s.items?.type === 'object') errs.push(fieldErrors.invalid(at('items.type'), 'object', 'must be a scalar or atomic list when x-kubernetes-list-type is set'));
  }
  if (s.listMapKeys?.length && s.listType !== 'map') errs.push(fieldErrors.invalid(at('x-kubernetes-list-type'), s.listType ?? '', 'must be map if x-kubernetes-list-map-keys is non-empty'));
  for (const key of s.listMapKeys ?? []) {
    const keySchema = s.items?.properties && Object.hasOwn(s.items.properties, key) ? s.items.properties[key] : undefined;
    if (!keySchema) errs.push(fieldErrors.invalid(at('x-kubernetes-list-map-keys'), s.listMapKeys, `entries must all be names of item properties`));
    else if (!['string', 'integer', 'number', 'boolean'].includes(keySchema.type ?? '')) {
      errs.push(fieldErrors.invalid(at('x-kubernetes-list-map-keys'), s.listMapKeys, `must only include scalar types`));
    }
  }
  if (s.mapType !== undefined && !mapTypes.includes(s.mapType)) errs.push(fieldErrors.notSupported(at('x-kubernetes-map-type'), s.mapType, mapTypes));
  if (s.default !== undefined) {
    if (root) errs.push(fieldErrors.forbidden(at('default'), 'must not be set at the root'));
    else errs.push(...validateDefault(s, at('default')));
  }
  if (s.items) errs.push(...validateSchemaRules(s.items, at('items'), false));
  for (const [k, v] of Object.entries(s.properties ?? {})) errs.push(...validateSchemaRules(v, `${path}.properties[${k}]`, false));
  if (typeof s.additionalProperties === 'object') errs.push(...validateSchemaRules(s.additionalProperties, at('additionalProperties'), false));
  return errs;
}

/** A default, pruned and defaulted by its own schema, must validate against it. */
function validateDefault(s: Structural, path: string): FieldError[] {
  const value = structuredClone(s.default);
  const pruned = prune({ value }, { type: 'object', properties: { value: s } });
  const errs: FieldError[] = pruned.map((f) => fieldErrors.invalid(path, s.default, `must not have unknown fields, but ${f.replace(/^value\.?/, '')} is unknown`));
  applyDefaults({ value }, { type: 'object', properties: { value: { ...s, default: undefined } } });
  for (const e of validateValue(s, value, 'default')) errs.push({ ...e, field: `${path}${e.field.slice('default'.length)}` });
  return errs;
}
