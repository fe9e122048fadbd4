/**
 * Name, label and annotation rules with the exact wording of
 * k8s.io/apimachinery/pkg/util/validation, since clients show these messages to people.
 */
import { fieldErrors, type FieldError } from '../../status/status-error.js';
import type { ManagedFieldsEntry, ObjectMeta } from '../meta.js';
import { validateOwnerReferences, validatePropagationFinalizers } from './owner-references.js';

// The name rules below test their languages with linear character checks rather than the upstream
// regexes (Go's RE2 is linear; a backtracking JS regex is not), and count lengths as Go's len()
// does, in UTF-8 bytes.
const dns1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const dns1123SubdomainFmt = `${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`;
const qualifiedNameFmt = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const qualifiedNameMsg = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** validation.RegexError: note the upstream double space after each example's comma. */
function regexError(msg: string, fmt: string, ...examples: string[]): string {
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}

function maxLenError(n: number): string { return `must be no more than ${n} characters`; }

const byteLength = (s: string): number => Buffer.byteLength(s, 'utf8');

const isAlnum = (c: number): boolean => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isLowerAlnum = (c: number): boolean => (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7a);

/** `s[from, to)` matches [a-z0-9]([-a-z0-9]*[a-z0-9])? */
function isLabelAt(s: string, from: number, to: number): boolean {
  if (to <= from || !isLowerAlnum(s.charCodeAt(from)) || !isLowerAlnum(s.charCodeAt(to - 1))) return false;
  for (let i = from + 1; i < to - 1; i++) {
    const c = s.charCodeAt(i);
    if (!isLowerAlnum(c) && c !== 0x2d) return false;
  }
  return true;
}

/** Matches ^dns1123SubdomainFmt$: dot-separated labels. */
function matchesSubdomain(s: string): boolean {
  let start = 0;
  for (let i = 0; i <= s.length; i++) {
    if (i < s.length && s.charCodeAt(i) !== 0x2e) continue;
    if (!isLabelAt(s, start, i)) return false;
    start = i + 1;
  }
  return true;
}

/** Matches ^qualifiedNameFmt$ */
function matchesQualifiedName(s: string): boolean {
  const n = s.length;
  if (n === 0 || !isAlnum(s.charCodeAt(0)) || !isAlnum(s.charCodeAt(n - 1))) return false;
  for (let i = 1; i < n - 1; i++) {
    const c = s.charCodeAt(i);
    if (!isAlnum(c) && c !== 0x2d && c !== 0x5f && c !== 0x2e) return false;
  }
  return true;
}

export function isDns1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63));
  if (!isLabelAt(value, 0, value.length)) {
    errs.push(regexError("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character", dns1123LabelFmt, 'my-name', '123-abc'));
  }
  return errs;
}

export function isDns1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 253) errs.push(maxLenError(253));
  if (!matchesSubdomain(value)) {
    errs.push(regexError("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character", dns1123SubdomainFmt, 'example.com'));
  }
  return errs;
}

/**
 * IsQualifiedName, for label and annotation keys: an optional DNS-subdomain prefix and a name of
 * at most 63 characters. As in Go, an empty name part also fails the pattern (two messages).
 */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0];
  } else if (parts.length === 2) {
    const [prefix, rest] = parts;
    name = rest;
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else for (const msg of isDns1123Subdomain(prefix)) errs.push(`prefix part ${msg}`);
  } else {
    return [`a qualified name ${regexError(qualifiedNameMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (byteLength(name) > 63) errs.push(`name part ${maxLenError(63)}`);
  if (!matchesQualifiedName(name)) errs.push(`name part ${regexError(qualifiedNameMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63));
  if (value.length !== 0 && !matchesQualifiedName(value)) {
    errs.push(regexError("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", `(${qualifiedNameFmt})?`, 'MyValue', 'my_value', '12345'));
  }
  return errs;
}

const configMapKeyFmt = '[-._a-zA-Z0-9]+';
const configMapKey = new RegExp(`^${configMapKeyFmt}$`);

/** IsConfigMapKey: a key of a ConfigMap's or Secret's data, which may become a file name. */
export function isConfigMapKey(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 253) errs.push(maxLenError(253));
  if (!configMapKey.test(value)) {
    errs.push(`a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '${configMapKeyFmt}')`);
  }
  if (value === '.') errs.push("must not be '.'");
  else if (value === '..') errs.push("must not be '..'");
  else if (value.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

/** IsValidPathSegmentName: what a name needs to be one segment of a URL path (core Events' only rule). */
export function isValidPathSegmentName(value: string): string[] {
  if (value === '.' || value === '..') return [`may not be '${value}'`];
  const errs: string[] = [];
  for (const c of ['/', '%']) if (value.includes(c)) errs.push(`may not contain '${c}'`);
  return errs;
}

export type NameRule = 'dns1123Subdomain' | 'dns1123Label' | 'pathSegment';
const nameRules: Record<NameRule, (v: string) => string[]> = {
  dns1123Subdomain: isDns1123Subdomain, dns1123Label: isDns1123Label, pathSegment: isValidPathSegmentName,
};

const totalAnnotationSizeLimit = 256 * 1024;

/** ValidateObjectMeta for a new or updated object of a kind. */
export function validateObjectMeta(meta: ObjectMeta, namespaced: boolean, nameRule: NameRule): FieldError[] {
  const errs: FieldError[] = [];
  if (!meta.name) {
    errs.push(fieldErrors.required('metadata.name', 'name or generateName is required'));
  } else {
    for (const msg of nameRules[nameRule](meta.name)) errs.push(fieldErrors.invalid('metadata.name', meta.name, msg));
  }
  if (meta.generateName) {
    // generateName is validated as a name prefix: trailing '-' and '.' are allowed
    const prefix = meta.generateName.replace(/[-.]+$/, '') || 'a';
    for (const msg of nameRules[nameRule](prefix)) errs.push(fieldErrors.invalid('metadata.generateName', meta.generateName, msg));
  }
  if (namespaced) {
    if (!meta.namespace) errs.push(fieldErrors.required('metadata.namespace', ''));
    else for (const msg of isDns1123Label(meta.namespace)) errs.push(fieldErrors.invalid('metadata.namespace', meta.namespace, msg));
  } else if (meta.namespace) {
    errs.push(fieldErrors.forbidden('metadata.namespace', 'not allowed on this type'));
  }
  for (const [k, v] of Object.entries(meta.labels ?? {})) {
    for (const msg of isQualifiedName(k)) errs.push(fieldErrors.invalid('metadata.labels', k, msg));
    for (const msg of isValidLabelValue(v)) errs.push(fieldErrors.invalid('metadata.labels', v, msg));
  }
  let annotationBytes = 0;
  for (const [k, v] of Object.entries(meta.annotations ?? {})) {
    for (const msg of isQualifiedName(k.toLowerCase())) errs.push(fieldErrors.invalid('metadata.annotations', k, msg));
    annotationBytes += Buffer.byteLength(k) + Buffer.byteLength(v);
  }
  if (annotationBytes > totalAnnotationSizeLimit) errs.push(fieldErrors.tooLong('metadata.annotations', totalAnnotationSizeLimit));
  errs.push(...validateOwnerReferences(meta.ownerReferences ?? []));
  const seen = new Set<string>();
  (meta.finalizers ?? []).forEach((f, i) => {
    for (const msg of isQualifiedName(f)) errs.push(fieldErrors.invalid(`metadata.finalizers[${i}]`, f, msg));
    if (seen.has(f)) errs.push(fieldErrors.duplicate(`metadata.finalizers[${i}]`, f));
    seen.add(f);
  });
  errs.push(...validatePropagationFinalizers(meta.finalizers ?? []));
  return errs;
}

/** Fields the server owns: a client may not change them on update. */
export function validateObjectMetaUpdate(meta: ObjectMeta, old: ObjectMeta): FieldError[] {
  const errs: FieldError[] = [];
  const immutable = (field: 'name' | 'namespace' | 'uid' | 'creationTimestamp') => {
    if (meta[field] !== old[field]) errs.push(fieldErrors.invalid(`metadata.${field}`, meta[field] ?? '', 'field is immutable'));
  };
  immutable('name');
  immutable('namespace');
  immutable('uid');
  immutable('creationTimestamp');
  return errs;
}

const fieldManagerMaxLength = 128;
const maxSubresourceNameLength = 256;

/** ValidateManagedFields: what the entries an object is stored with must satisfy (clients may send their own). */
export function validateManagedFields(entries: readonly ManagedFieldsEntry[] | undefined): FieldError[] {
  const errs: FieldError[] = [];
  (entries ?? []).forEach((e, i) => {
    const p = `metadata.managedFields[${i}]`;
    if (e.operation !== 'Apply' && e.operation !== 'Update') errs.push(fieldErrors.invalid(`${p}.operation`, e.operation ?? '', 'must be `Apply` or `Update`'));
    if (e.fieldsType && e.fieldsType !== 'FieldsV1') errs.push(fieldErrors.invalid(`${p}.fieldsType`, e.fieldsType, 'must be `FieldsV1`'));
    const manager = e.manager ?? '';
    if (Buffer.byteLength(manager) > fieldManagerMaxLength) errs.push(fieldErrors.tooLong(`${p}.manager`, fieldManagerMaxLength));
    if (/[\u0000-\u001f\u007f]/.test(manager)) errs.push(fieldErrors.invalid(`${p}.manager`, manager, 'must only contain printable characters'));
    if ((e.subresource ?? '').length > maxSubresourceNameLength) errs.push(fieldErrors.tooLong(`${p}.subresource`, maxSubresourceNameLength));
  });
  return errs;
}
