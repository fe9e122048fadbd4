/**
 * Validation of a value against a structural schema's keywords, with the messages kube-openapi's
 * validator produces and the field errors apiextensions-apiserver turns them into
 * (kubeOpenAPIResultToFieldErrors): `spec.replicas: Invalid value: 200: spec.replicas in body
 * should be less than or equal to 100`. A node whose type does not match reports only that.
 * On update with a correlation (validation ratcheting, apiextensions' ratcheting.go), the errors
 * of a node, its descendants' included, are dropped when its value equals its old value.
 */
import { fieldErrors, type FieldError } from '../../status/status-error.js';
import { matchesFormat } from './formats.js';
import type { Structural } from './structural.js';
import type { Correlated } from './correlation.js';

/** The JSON type name kube-openapi reports for a decoded value (integers and floats apart, as Go decodes them). */
export function jsonTypeOf(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'array';
  switch (typeof value) {
    case 'string': return 'string';
    case 'boolean': return 'boolean';
    case 'number': case 'bigint': return Number.isInteger(value) || typeof value === 'bigint' ? 'integer' : 'number';
    default: return 'object';
  }
}

function hasType(type: string, value: unknown): boolean {
  const actual = jsonTypeOf(value);
  return actual === type || (type === 'number' && actual === 'integer');
}

const patternCache = new Map<string, RegExp | null>();
function compiled(pattern: string): RegExp | null {
  let re = patternCache.get(pattern);
  if (re === undefined) {
    try { re = new RegExp(pattern); } catch { re = null; }
    if (patternCache.size > 10_000) patternCache.clear();
    patternCache.set(pattern, re);
  }
  return re;
}

/** Deep equality of JSON values (enum membership, uniqueItems). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((x, i) => jsonEqual(x, (b as unknown[])[i]));
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** `path` joined with a property name, as kube-openapi names a nested value. */
function childPath(path: string, name: string): string {
  return path ? `${path}.${name}` : name;
}

function describe(path: string): string {
  return `${path} in body`;
}

function enumValues(values: readonly unknown[]): string[] {
  return values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
}

/** The errors of `value`; with `correlation` (its old value), those of unchanged values ratcheted away. */
export function validateValue(s: Structural, value: unknown, path: string, correlation?: Correlated): FieldError[] {
  const errs: FieldError[] = [];
  if (correlation) validateRatcheting(s, value, path, errs, correlation, true);
  else validateNode(s, value, path, errs);
  return errs;
}

/** A correlated node: its errors kept only when it changed (`apiVersion` and `kind` never correlate at the root). */
function validateRatcheting(s: Structural, value: unknown, path: string, errs: FieldError[], c: Correlated, root = false): void {
  const own: FieldError[] = [];
  validateNode(s, value, path, own, c, root);
  if (own.length && !c.deepEqual()) errs.push(...own);
}

/** Validates a child, ratcheting it when it correlates. */
function validateChild(s: Structural, value: unknown, path: string, errs: FieldError[], c: Correlated | undefined): void {
  if (c) validateRatcheting(s, value, path, errs, c);
  else validateNode(s, value, path, errs);
}

function validateNode(s: Structural, value: unknown, path: string, errs: FieldError[], c?: Correlated, root = false): void {
  if (value === null && s.nullable) return;
  if (s.intOrString && !s.type) {
    const t = jsonTypeOf(value);
    if (t !== 'integer' && t !== 'string') {
      errs.push({ type: 'FieldValueTypeInvalid', field: path, badValue: t, detail: `${describe(path)} must be of type integer,string: ${JSON.stringify(t)}` });
      return;
    }
  } else if (s.type && !hasType(s.type, value)) {
    const t = jsonTypeOf(value);
    errs.push({ type: 'FieldValueTypeInvalid', field: path, badValue: t, detail: `${describe(path)} must be of type ${s.type}: ${JSON.stringify(t)}` });
    return;
  }
  junctors(s, value, path, errs);
  if (typeof value === 'string') strings(s, value, path, errs);
  if (typeof value === 'number') numbers(s, value, path, errs);
  if (Array.isArray(value)) arrays(s, value, path, errs, c);
  if (s.enum && !s.enum.some((e) => jsonEqual(e, value))) {
    errs.push(fieldErrors.notSupported(path, value, enumValues(s.enum)));
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) objects(s, value as Record<string, unknown>, path, errs, c, root);
}

function strings(s: Structural, value: string, path: string, errs: FieldError[]): void {
  const length = [...value].length;
  if (s.maxLength !== undefined && length > s.maxLength) {
    errs.push({ type: 'FieldValueTooLong', field: path, badValue: value, detail: `may not be more than ${s.maxLength} ${s.maxLength === 1 ? 'byte' : 'bytes'}` });
  }
  if (s.minLength !== undefined && length < s.minLength) {
    errs.push(fieldErrors.invalid(path, value, `${describe(path)} should be at least ${s.minLength} chars long`));
  }
  if (s.pattern !== undefined) {
    const re = compiled(s.pattern);
    if (re && !re.test(value)) errs.push(fieldErrors.invalid(path, value, `${describe(path)} should match '${s.pattern}'`));
  }
  if (s.format && !matchesFormat(s.format, value)) {
    errs.push({ type: 'FieldValueTypeInvalid', field: path, badValue: value, detail: `${describe(path)} must be of type ${s.format}: ${JSON.stringify(value)}` });
  }
}

function numbers(s: Structural, value: number, path: string, errs: FieldError[]): void {
  if (s.multipleOf !== undefined && s.multipleOf > 0) {
    const q = value / s.multipleOf;
    if (Math.abs(q - Math.round(q)) > 1e-9) errs.push(fieldErrors.invalid(path, value, `${describe(path)} should be a multiple of ${s.multipleOf}`));
  }
  if (s.maximum !== undefined && (s.exclusiveMaximum ? value >= s.maximum : value > s.maximum)) {
    errs.push(fieldErrors.invalid(path, value, `${describe(path)} should be less than ${s.exclusiveMaximum ? '' : 'or equal to '}${s.maximum}`));
  }
  if (s.minimum !== undefined && (s.exclusiveMinimum ? value <= s.minimum : value < s.minimum)) {
    errs.push(fieldErrors.invalid(path, value, `${describe(path)} should be greater than ${s.exclusiveMinimum ? '' : 'or equal to '}${s.minimum}`));
  }
}

function arrays(s: Structural, value: unknown[], path: string, errs: FieldError[], c: Correlated | undefined): void {
  if (s.maxItems !== undefined && value.length > s.maxItems) {
    errs.push({ type: 'FieldValueTooMany', field: path, badValue: value.length, detail: `must have at most ${s.maxItems} ${s.maxItems === 1 ? 'item' : 'items'}` });
  }
  if (s.minItems !== undefined && value.length < s.minItems) {
    errs.push(fieldErrors.invalid(path, value.length, `${describe(path)} should have at least ${s.minItems} items`));
  }
  if (s.uniqueItems && value.some((v, i) => value.findIndex((w) => jsonEqual(v, w)) !== i)) {
    errs.push(fieldErrors.invalid(path, '', `${describe(path)} shouldn't contain duplicates`));
  }
  if (s.items) value.forEach((v, i) => validateChild(s.items!, v, `${path}[${i}]`, errs, c?.index(i)));
}

function objects(s: Structural, value: Record<string, unknown>, path: string, errs: FieldError[], c: Correlated | undefined, root: boolean): void {
  const count = Object.keys(value).length;
  if (s.maxProperties !== undefined && count > s.maxProperties) {
    errs.push({ type: 'FieldValueTooMany', field: path, badValue: count, detail: `must have at most ${s.maxProperties} ${s.maxProperties === 1 ? 'item' : 'items'}` });
  }
  if (s.minProperties !== undefined && count < s.minProperties) {
    errs.push(fieldErrors.invalid(path, count, `${describe(path)} should have at least ${s.minProperties} properties`));
  }
  for (const name of s.required ?? []) {
    if (!Object.hasOwn(value, name)) errs.push(fieldErrors.required(childPath(path, name), ''));
  }
  for (const [k, v] of Object.entries(value)) {
    const prop = s.properties && Object.hasOwn(s.properties, k) ? s.properties[k] : undefined;
    const child = c && !(root && (k === 'apiVersion' || k === 'kind')) ? c.key(k) : undefined;
    if (prop) validateChild(prop, v, childPath(path, k), errs, child);
    else if (typeof s.additionalProperties === 'object') validateChild(s.additionalProperties, v, childPath(path, k), errs, child);
  }
}

/** allOf, anyOf, oneOf and not, with kube-openapi's messages. */
function junctors(s: Structural, value: unknown, path: string, errs: FieldError[]): void {
  for (const sub of s.allOf ?? []) validateNode(sub, value, path, errs);
  const name = JSON.stringify(path);
  if (s.anyOf?.length) {
    const results = s.anyOf.map((sub) => validateValue(sub, value, path));
    if (!results.some((r) => r.length === 0)) {
      errs.push(fieldErrors.invalid(path, value, `${name} must validate at least one schema (anyOf)`));
      errs.push(...results[0]);
    }
  }
  if (s.oneOf?.length) {
    const results = s.oneOf.map((sub) => validateValue(sub, value, path));
    const valid = results.filter((r) => r.length === 0).length;
    if (valid !== 1) {
      const why = valid === 0 ? '' : `Found ${valid} valid alternatives`;
      errs.push(fieldErrors.invalid(path, value, `${name} must validate one and only one schema (oneOf). ${why}`.trimEnd()));
      if (valid === 0) errs.push(...results[0]);
    }
  }
  if (s.not && validateValue(s.not, value, path).length === 0) {
    errs.push(fieldErrors.invalid(path, value, `${name} must not validate the schema (not)`));
  }
}
