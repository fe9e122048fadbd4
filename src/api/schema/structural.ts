/**
 * The structural schema custom resources declare (apiextensions' JSONSchemaProps, OpenAPI v3), read
 * from a CRD's `openAPIV3Schema`; built-in kinds declare theirs in it too (./builtin-structural.ts).
 * Kubernetes' `x-kubernetes-*` extensions and ours (`x-orch-*`) are the same thing: both are
 * accepted on input and both written on output (OpenAPI), so that controller-gen manifests and
 * kubectl work unchanged.
 */
import { setOwn } from '../own-member.js';

export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

export interface Structural {
  type?: string;
  format?: string;
  title?: string;
  description?: string;
  nullable?: boolean;
  default?: unknown;
  example?: unknown;
  properties?: Record<string, Structural>;
  additionalProperties?: Structural | boolean;
  items?: Structural;
  required?: string[];
  enum?: unknown[];
  pattern?: string;
  maximum?: number;
  exclusiveMaximum?: boolean;
  minimum?: number;
  exclusiveMinimum?: boolean;
  multipleOf?: number;
  maxLength?: number;
  minLength?: number;
  maxItems?: number;
  minItems?: number;
  uniqueItems?: boolean;
  maxProperties?: number;
  minProperties?: number;
  allOf?: Structural[];
  anyOf?: Structural[];
  oneOf?: Structural[];
  not?: Structural;
  /** keywords a structural schema must not use ($ref, patternProperties, ...), kept to be refused */
  unsupported?: string[];
  preserveUnknownFields?: boolean;
  intOrString?: boolean;
  embeddedResource?: boolean;
  listType?: string;
  listMapKeys?: string[];
  mapType?: string;
  validations?: ValidationRule[];
}

/** The extensions, by our suffix; each is read under both prefixes. */
const extensions = {
  preserveUnknownFields: 'preserve-unknown-fields',
  intOrString: 'int-or-string',
  embeddedResource: 'embedded-resource',
  listType: 'list-type',
  listMapKeys: 'list-map-keys',
  mapType: 'map-type',
  validations: 'validations',
} as const;

export const extensionPrefixes = ['x-orch-', 'x-kubernetes-'] as const;

/** A problem with the schema document's shape (a keyword of the wrong JSON type). */
export interface SchemaProblem { path: string; value: unknown; detail: string }

const numberKeys = ['maximum', 'minimum', 'multipleOf'] as const;
const countKeys = ['maxLength', 'minLength', 'maxItems', 'minItems', 'maxProperties', 'minProperties'] as const;
const boolKeys = ['nullable', 'exclusiveMaximum', 'exclusiveMinimum', 'uniqueItems'] as const;
const stringKeys = ['type', 'format', 'title', 'description', 'pattern'] as const;
const unsupportedKeys = ['$ref', '$schema', 'id', 'patternProperties', 'dependencies', 'additionalItems', 'definitions', 'externalDocs'];

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Reads a JSONSchemaProps document; problems with its shape are collected, not thrown. */
export function parseStructural(raw: unknown, path: string, problems: SchemaProblem[]): Structural {
  const out: Structural = {};
  if (!isObject(raw)) {
    problems.push({ path, value: raw, detail: 'must be an object' });
    return out;
  }
  const bad = (key: string, want: string) => problems.push({ path: `${path}.${key}`, value: raw[key], detail: `must be ${want}` });
  for (const key of stringKeys) {
    if (raw[key] === undefined) continue;
    if (typeof raw[key] === 'string') out[key] = raw[key] as string; else bad(key, 'a string');
  }
  for (const key of numberKeys) {
    if (raw[key] === undefined) continue;
    if (typeof raw[key] === 'number') out[key] = raw[key] as number; else bad(key, 'a number');
  }
  for (const key of countKeys) {
    if (raw[key] === undefined) continue;
    if (Number.isInteger(raw[key])) out[key] = raw[key] as number; else bad(key, 'an integer');
  }
  for (const key of boolKeys) {
    if (raw[key] === undefined) continue;
    if (typeof raw[key] === 'boolean') out[key] = raw[key] as boolean; else bad(key, 'a boolean');
  }
  if (raw.default !== undefined) out.default = raw.default;
  if (raw.example !== undefined) out.example = raw.example;
  if (raw.enum !== undefined) {
    if (Array.isArray(raw.enum)) out.enum = raw.enum; else bad('enum', 'a list');
  }
  if (raw.required !== undefined) {
    if (Array.isArray(raw.required) && raw.required.every((r) => typeof r === 'string')) out.required = raw.required as string[];
    else bad('required', 'a list of strings');
  }
  if (raw.properties !== undefined) {
    if (isObject(raw.properties)) {
      const props: Record<string, Structural> = {};
      for (const [k, v] of Object.entries(raw.properties)) setOwn(props, k, parseStructural(v, `${path}.properties[${k}]`, problems));
      out.properties = props;
    } else bad('properties', 'an object');
  }
  if (raw.additionalProperties !== undefined) {
    out.additionalProperties = typeof raw.additionalProperties === 'boolean'
      ? raw.additionalProperties
      : parseStructural(raw.additionalProperties, `${path}.additionalProperties`, problems);
  }
  if (raw.items !== undefined) {
    if (Array.isArray(raw.items)) problems.push({ path: `${path}.items`, value: raw.items, detail: 'items must be a schema object and not an array' });
    else out.items = parseStructural(raw.items, `${path}.items`, problems);
  }
  for (const key of ['allOf', 'anyOf', 'oneOf'] as const) {
    if (raw[key] === undefined) continue;
    if (Array.isArray(raw[key])) out[key] = (raw[key] as unknown[]).map((v, i) => parseStructural(v, `${path}.${key}[${i}]`, problems));
    else bad(key, 'a list');
  }
  if (raw.not !== undefined) out.not = parseStructural(raw.not, `${path}.not`, problems);
  const unsupported = unsupportedKeys.filter((k) => raw[k] !== undefined);
  if (unsupported.length) out.unsupported = unsupported;
  readExtensions(raw, out, path, problems);
  return out;
}

function extension(raw: Record<string, unknown>, suffix: string): { key: string; value: unknown } | undefined {
  for (const prefix of extensionPrefixes) {
    const key = `${prefix}${suffix}`;
    if (raw[key] !== undefined) return { key, value: raw[key] };
  }
  return undefined;
}

function readExtensions(raw: Record<string, unknown>, out: Structural, path: string, problems: SchemaProblem[]): void {
  const flag = (suffix: string): boolean | undefined => {
    const found = extension(raw, suffix);
    if (!found) return undefined;
    if (typeof found.value === 'boolean') return found.value;
    problems.push({ path: `${path}.${found.key}`, value: found.value, detail: 'must be a boolean' });
    return undefined;
  };
  const text = (suffix: string): string | undefined => {
    const found = extension(raw, suffix);
    if (!found) return undefined;
    if (typeof found.value === 'string') return found.value;
    problems.push({ path: `${path}.${found.key}`, value: found.value, detail: 'must be a string' });
    return undefined;
  };
  const preserve = flag(extensions.preserveUnknownFields);
  if (preserve !== undefined) out.preserveUnknownFields = preserve;
  const intOrString = flag(extensions.intOrString);
  if (intOrString !== undefined) out.intOrString = intOrString;
  const embedded = flag(extensions.embeddedResource);
  if (embedded !== undefined) out.embeddedResource = embedded;
  const listType = text(extensions.listType);
  if (listType !== undefined) out.listType = listType;
  const mapType = text(extensions.mapType);
  if (mapType !== undefined) out.mapType = mapType;
  const keys = extension(raw, extensions.listMapKeys);
  if (keys) {
    if (Array.isArray(keys.value) && keys.value.every((k) => typeof k === 'string')) out.listMapKeys = keys.value as string[];
    else problems.push({ path: `${path}.${keys.key}`, value: keys.value, detail: 'must be a list of strings' });
  }
  const rules = extension(raw, extensions.validations);
  if (rules) {
    if (!Array.isArray(rules.value)) {
      problems.push({ path: `${path}.${rules.key}`, value: rules.value, detail: 'must be a list' });
    } else {
      out.validations = rules.value.map((r, i) => {
        const rule: ValidationRule = { rule: '' };
        if (!isObject(r)) { problems.push({ path: `${path}.${rules.key}[${i}]`, value: r, detail: 'must be an object' }); return rule; }
        for (const k of ['rule', 'message', 'messageExpression', 'reason', 'fieldPath'] as const) {
          if (r[k] === undefined) continue;
          if (typeof r[k] === 'string') rule[k] = r[k] as string;
          else problems.push({ path: `${path}.${rules.key}[${i}].${k}`, value: r[k], detail: 'must be a string' });
        }
        if (typeof r.optionalOldSelf === 'boolean') rule.optionalOldSelf = r.optionalOldSelf;
        return rule;
      });
    }
  }
}

/**
 * The schema as an OpenAPI document writes it: each extension under both prefixes (ours and
 * Kubernetes', which kubectl and client generators read).
 */
export function toOpenApiSchema(s: Structural): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of [...stringKeys, ...numberKeys, ...countKeys, ...boolKeys] as const) {
    if (s[key] !== undefined) out[key] = s[key];
  }
  if (s.default !== undefined) out.default = s.default;
  if (s.example !== undefined) out.example = s.example;
  if (s.enum) out.enum = s.enum;
  if (s.required) out.required = s.required;
  if (s.properties) {
    const props: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(s.properties)) setOwn(props, k, toOpenApiSchema(v));
    out.properties = props;
  }
  if (s.additionalProperties !== undefined) {
    out.additionalProperties = typeof s.additionalProperties === 'boolean' ? s.additionalProperties : toOpenApiSchema(s.additionalProperties);
  }
  if (s.items) out.items = toOpenApiSchema(s.items);
  for (const key of ['allOf', 'anyOf', 'oneOf'] as const) if (s[key]) out[key] = s[key]!.map(toOpenApiSchema);
  if (s.not) out.not = toOpenApiSchema(s.not);
  const ext: Array<[keyof typeof extensions, unknown]> = [
    ['preserveUnknownFields', s.preserveUnknownFields], ['intOrString', s.intOrString], ['embeddedResource', s.embeddedResource],
    ['listType', s.listType], ['listMapKeys', s.listMapKeys], ['mapType', s.mapType], ['validations', s.validations],
  ];
  for (const [name, value] of ext) {
    if (value === undefined) continue;
    for (const prefix of extensionPrefixes) out[`${prefix}${extensions[name]}`] = value;
  }
  return out;
}
