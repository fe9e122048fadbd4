/**
 * Whether a schema is structural, with the errors apiextensions-apiserver's ValidateStructural
 * reports (pkg/apiserver/schema/validation.go and complete.go): every node has a type (or is
 * int-or-string / preserves unknown fields), value validations (allOf, anyOf, oneOf, not) only
 * restrict what the structural part declares, metadata at the root only restricts name and
 * generateName. Errors are sorted by their text, as Kubernetes sorts them.
 */
import { fieldErrors, formatFieldError, type FieldError } from '../../status/status-error.js';
import type { Structural } from './structural.js';

type Level = 'root' | 'item' | 'field';

const child = (path: string, name: string) => `${path}.${name}`;
const key = (path: string, name: string) => `${path}[${name}]`;

function isTypeOnly(s: Structural, type: string): boolean {
  return Object.keys(s).length === 1 && s.type === type;
}

function isIntOrStringAnyOf(anyOf: Structural[] | undefined): boolean {
  return anyOf?.length === 2 && isTypeOnly(anyOf[0], 'integer') && isTypeOnly(anyOf[1], 'string');
}

export function validateStructural(s: Structural, path: string): FieldError[] {
  const errs = [...invariants(s, 'root', path), ...completeness(s, path)];
  return errs.sort((a, b) => (formatFieldError(a) < formatFieldError(b) ? -1 : formatFieldError(a) > formatFieldError(b) ? 1 : 0));
}

function invariants(s: Structural | undefined, level: Level, path: string): FieldError[] {
  if (!s) return [];
  const errs: FieldError[] = [];
  if (s.type === 'array' && !s.items) errs.push(fieldErrors.required(child(path, 'items'), 'must be specified'));
  errs.push(...invariants(s.items, 'item', child(path, 'items')));
  for (const [k, v] of Object.entries(s.properties ?? {})) errs.push(...invariants(v, 'field', key(child(path, 'properties'), k)));
  if (s.additionalProperties !== undefined) {
    if (level === 'root') errs.push(fieldErrors.forbidden(child(path, 'additionalProperties'), 'must not be used at the root'));
    if (typeof s.additionalProperties === 'object') errs.push(...invariants(s.additionalProperties, 'field', child(path, 'additionalProperties')));
  }
  if (s.intOrString && s.preserveUnknownFields) {
    errs.push(fieldErrors.invalid(child(path, 'x-kubernetes-preserve-unknown-fields'), true, 'must be false if x-kubernetes-int-or-string is true'));
  }
  if (s.intOrString && s.embeddedResource) {
    errs.push(fieldErrors.invalid(child(path, 'x-kubernetes-embedded-resource'), true, 'must be false if x-kubernetes-int-or-string is true'));
  }
  const skipAnyOf = isIntOrStringAnyOf(s.anyOf);
  const skipFirstAllOfAnyOf = isIntOrStringAnyOf(s.allOf?.[0]?.anyOf);
  errs.push(...valueValidation(s, skipAnyOf, skipFirstAllOfAnyOf, path));

  const checkMetadata = level === 'root' || s.embeddedResource === true;
  if (s.embeddedResource && s.type !== 'object') {
    if (!s.type) errs.push(fieldErrors.required(child(path, 'type'), 'must be object if x-kubernetes-embedded-resource is true'));
    else errs.push(fieldErrors.invalid(child(path, 'type'), s.type, 'must be object if x-kubernetes-embedded-resource is true'));
  } else if (!s.type && !s.intOrString && !s.preserveUnknownFields) {
    const why = { root: 'must not be empty at the root', item: 'must not be empty for specified array items', field: 'must not be empty for specified object fields' }[level];
    errs.push(fieldErrors.required(child(path, 'type'), why));
  }
  if (s.embeddedResource && s.additionalProperties !== undefined) {
    errs.push(fieldErrors.forbidden(child(path, 'additionalProperties'), 'must not be used if x-kubernetes-embedded-resource is set'));
  }
  if (level === 'root' && s.type && s.type !== 'object') errs.push(fieldErrors.invalid(child(path, 'type'), s.type, 'must be object at the root'));
  for (const typeMeta of ['kind', 'apiVersion']) {
    const p = s.properties?.[typeMeta];
    if (p && Object.hasOwn(s.properties!, typeMeta) && checkMetadata && p.type !== 'string') {
      errs.push(fieldErrors.invalid(child(key(child(path, 'properties'), typeMeta), 'type'), p.type ?? '', 'must be string'));
    }
  }
  const metadata = s.properties && Object.hasOwn(s.properties, 'metadata') ? s.properties.metadata : undefined;
  if (metadata) errs.push(...metadataInvariants(metadata, checkMetadata, level, key(child(path, 'properties'), 'metadata')));
  if (s.embeddedResource && !s.preserveUnknownFields && Object.keys(s.properties ?? {}).length === 0) {
    errs.push(fieldErrors.required(child(path, 'properties'), 'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields'));
  }
  return errs;
}

function metadataInvariants(s: Structural, checkMetadata: boolean, level: Level, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (checkMetadata && s.type !== 'object') errs.push(fieldErrors.invalid(child(path, 'type'), s.type ?? '', 'must be object'));
  if (level === 'root') {
    // only name and generateName may be restricted; type and default are checked elsewhere
    const rest: Record<string, unknown> = { ...s };
    delete rest.type;
    delete rest.default;
    const names = Object.keys(s.properties ?? {});
    if (names.length > 0 && names.every((n) => n === 'name' || n === 'generateName')) delete rest.properties;
    if (Object.values(rest).some((v) => v !== undefined)) {
      errs.push(fieldErrors.forbidden(path, 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
    }
  }
  return errs;
}

function valueValidation(v: Structural, skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!skipAnyOf) (v.anyOf ?? []).forEach((n, i) => errs.push(...nested(n, false, `${child(path, 'anyOf')}[${i}]`)));
  (v.allOf ?? []).forEach((n, i) => errs.push(...nested(n, skipFirstAllOfAnyOf && i === 0, `${child(path, 'allOf')}[${i}]`)));
  (v.oneOf ?? []).forEach((n, i) => errs.push(...nested(n, false, `${child(path, 'oneOf')}[${i}]`)));
  if (v.not) errs.push(...nested(v.not, false, child(path, 'not')));
  if (v.pattern !== undefined) {
    try {
      new RegExp(v.pattern);
    } catch (err) {
      errs.push(fieldErrors.invalid(child(path, 'pattern'), v.pattern, `must be a valid regular expression, but isn't: ${(err as Error).message}`));
    }
  }
  return errs;
}

/** A schema under allOf/anyOf/oneOf/not: value validation only. */
function nested(v: Structural, skipAnyOf: boolean, path: string): FieldError[] {
  const errs = valueValidation(v, skipAnyOf, false, path);
  if (v.items) errs.push(...nested(v.items, false, child(path, 'items')));
  for (const [k, fld] of Object.entries(v.properties ?? {})) errs.push(...nested(fld, false, key(child(path, 'properties'), k)));
  const forbidden = (name: string, why: string) => errs.push(fieldErrors.forbidden(child(path, name), why));
  if (v.type) forbidden('type', 'must be empty to be structural');
  if (v.additionalProperties !== undefined) forbidden('additionalProperties', 'must be undefined to be structural');
  if (v.default !== undefined) forbidden('default', 'must be undefined to be structural');
  if (v.title) forbidden('title', 'must be empty to be structural');
  if (v.description) forbidden('description', 'must be empty to be structural');
  if (v.nullable) forbidden('nullable', 'must be false to be structural');
  if (v.preserveUnknownFields) forbidden('x-kubernetes-preserve-unknown-fields', 'must be false to be structural');
  if (v.embeddedResource) forbidden('x-kubernetes-embedded-resource', 'must be false to be structural');
  if (v.intOrString) forbidden('x-kubernetes-int-or-string', 'must be false to be structural');
  if (v.listMapKeys?.length) forbidden('x-kubernetes-list-map-keys', 'must be empty to be structural');
  if (v.listType !== undefined) forbidden('x-kubernetes-list-type', 'must be undefined to be structural');
  if (v.mapType !== undefined) forbidden('x-kubernetes-map-type', 'must be undefined to be structural');
  if (v.validations?.length) forbidden('x-kubernetes-validations', 'must be empty to be structural');
  if (v.properties && Object.hasOwn(v.properties, 'metadata')) {
    errs.push(fieldErrors.forbidden(key(child(path, 'properties'), 'metadata'), 'must not be specified in a nested context'));
  }
  return errs;
}

/** Every field or item a value validation names is also declared by the structural part (complete.go). */
function completeness(s: Structural, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const visitJunctors = (v: Structural, vPath: string) => {
    (v.allOf ?? []).forEach((n, i) => errs.push(...nestedCompleteness(n, s, path, `${child(vPath, 'allOf')}[${i}]`)));
    (v.anyOf ?? []).forEach((n, i) => errs.push(...nestedCompleteness(n, s, path, `${child(vPath, 'anyOf')}[${i}]`)));
    (v.oneOf ?? []).forEach((n, i) => errs.push(...nestedCompleteness(n, s, path, `${child(vPath, 'oneOf')}[${i}]`)));
    if (v.not) errs.push(...nestedCompleteness(v.not, s, path, child(vPath, 'not')));
  };
  visitJunctors(s, path);
  if (s.items) errs.push(...completeness(s.items, child(path, 'items')));
  for (const [k, v] of Object.entries(s.properties ?? {})) errs.push(...completeness(v, key(child(path, 'properties'), k)));
  if (typeof s.additionalProperties === 'object') errs.push(...completeness(s.additionalProperties, child(path, 'additionalProperties')));
  return errs;
}

function nestedCompleteness(v: Structural, s: Structural | undefined, sPath: string, vPath: string): FieldError[] {
  if (!s) return [fieldErrors.required(sPath, `because it is defined in ${vPath}`)];
  const errs: FieldError[] = [];
  (v.allOf ?? []).forEach((n, i) => errs.push(...nestedCompleteness(n, s, sPath, `${child(vPath, 'allOf')}[${i}]`)));
  (v.anyOf ?? []).forEach((n, i) => errs.push(...nestedCompleteness(n, s, sPath, `${child(vPath, 'anyOf')}[${i}]`)));
  (v.oneOf ?? []).forEach((n, i) => errs.push(...nestedCompleteness(n, s, sPath, `${child(vPath, 'oneOf')}[${i}]`)));
  if (v.not) errs.push(...nestedCompleteness(v.not, s, sPath, child(vPath, 'not')));
  if (v.items) errs.push(...nestedCompleteness(v.items, s.items, child(sPath, 'items'), child(vPath, 'items')));
  for (const [k, fld] of Object.entries(v.properties ?? {})) {
    const declared = s.properties && Object.hasOwn(s.properties, k) ? s.properties[k] : undefined;
    if (!declared) {
      if (s.additionalProperties === undefined) {
        errs.push(fieldErrors.required(key(child(sPath, 'properties'), k), `because it is defined in ${key(child(vPath, 'properties'), k)}`));
      }
    } else {
      errs.push(...nestedCompleteness(fld, declared, key(child(sPath, 'properties'), k), key(child(vPath, 'properties'), k)));
    }
  }
  return errs;
}
