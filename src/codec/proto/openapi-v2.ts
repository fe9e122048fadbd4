/**
 * /openapi/v2 in protobuf: the Swagger 2.0 document, as JSON, written as gnostic's
 * openapi_v2.Document (openapi-v2.proto), which client-go's DiscoveryClient.OpenAPISchema decodes
 * and kubectl's client-side validation reads (a `kind: List` is validated item by item with it).
 *
 * The mapping is gnostic's, which kube-openapi applies to the JSON it serves: maps become repeated
 * {name, value} pairs in document order, `x-*` keys vendor extensions, free-form values (default,
 * example, enum items, extension values) Any messages holding YAML text, and a JSON value of several
 * possible shapes the matching member of a oneof. Keys a Swagger 2.0 message has no field for
 * (OpenAPI 3 keywords such as nullable, anyOf, oneOf and not, which custom resource schemas may
 * hold) are left out: gnostic would refuse them, and kube-apiserver strips them from v2 beforehand.
 */
import { existsSync, readFileSync } from 'node:fs';
import type * as protobuf from 'protobufjs';
import { protobufjs } from '../libraries.js';
import { toYaml } from '../yaml.js';
import { ProtobufError } from './errors.js';

/** Parsed on first use, not at start: few clients ask for this form (25 ms saved on every start). */
let documentType: protobuf.Type | undefined;

function loadDocumentType(): protobuf.Type {
  // beside this module in dist/ (scripts/build.mjs copies it there), else in the source tree
  const besideModule = new URL('./openapi-v2.proto', import.meta.url);
  const protoText = readFileSync(existsSync(besideModule) ? besideModule : new URL('../../../../src/codec/proto/openapi-v2.proto', import.meta.url), 'utf8');
  const protobuf = protobufjs();
  const root = new protobuf.Root();
  // the one import, google/protobuf/any.proto, is among protobufjs' bundled well-known types
  const any = protobuf.common.get('google/protobuf/any.proto');
  if (!any?.nested) throw new ProtobufError('protobufjs lacks google/protobuf/any.proto');
  root.addJSON(any.nested);
  protobuf.parse(protoText, root, { keepCase: true });
  root.resolveAll();
  return root.lookupType('openapi.v2.Document');
}

type Json = Record<string, unknown>;
/** a message as protobufjs encodes it: fields by their .proto names */
type Message = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const objectAt = (json: Json, key: string): Json => (isObject(json[key]) ? json[key] : {});
const arrayAt = (json: Json, key: string): unknown[] => (Array.isArray(json[key]) ? json[key] : []);

/** How a JSON value becomes a field; proto3 writes no zero scalars and no empty repeated fields. */
type Kind = 'string' | 'number' | 'bool' | 'strings' | 'any' | 'anys';

function fieldValue(kind: Kind, v: unknown): unknown {
  switch (kind) {
    case 'string': return typeof v === 'string' && v !== '' ? v : undefined;
    case 'number': return typeof v === 'number' && v !== 0 ? v : undefined;
    case 'bool': return v === true ? true : undefined;
    case 'strings': return Array.isArray(v) && v.length > 0 ? v.map(String) : undefined;
    case 'any': return v === undefined ? undefined : anyOf(v);
    case 'anys': return Array.isArray(v) && v.length > 0 ? v.map(anyOf) : undefined;
  }
}

/** JSON keys → [field, kind]: the plain fields of a message. */
type Plain = Readonly<Record<string, readonly [string, Kind]>>;

function plain(json: Json, fields: Plain, out: Message = {}): Message {
  for (const [key, [field, kind]] of Object.entries(fields)) {
    const value = fieldValue(kind, json[key]);
    if (value !== undefined) out[field] = value;
  }
  return out;
}

function anyOf(value: unknown): Message {
  return { yaml: toYaml(value) };
}

/** The `x-*` keys of an object, in its order. */
function vendorExtensions(json: Json, out: Message, field = 'vendor_extension'): Message {
  const named = Object.entries(json).filter(([k]) => k.startsWith('x-')).map(([name, v]) => ({ name, value: anyOf(v) }));
  if (named.length > 0) out[field] = named;
  return out;
}

/** The validation keywords schemas and non-body parameters share (numbers differ per message; names do not). */
const validations: Plain = {
  format: ['format', 'string'], default: ['default', 'any'], maximum: ['maximum', 'number'], exclusiveMaximum: ['exclusive_maximum', 'bool'],
  minimum: ['minimum', 'number'], exclusiveMinimum: ['exclusive_minimum', 'bool'], maxLength: ['max_length', 'number'], minLength: ['min_length', 'number'],
  pattern: ['pattern', 'string'], maxItems: ['max_items', 'number'], minItems: ['min_items', 'number'], uniqueItems: ['unique_items', 'bool'],
  enum: ['enum', 'anys'], multipleOf: ['multiple_of', 'number'],
};

const schemaFields: Plain = {
  ...validations, $ref: ['_ref', 'string'], title: ['title', 'string'], description: ['description', 'string'],
  maxProperties: ['max_properties', 'number'], minProperties: ['min_properties', 'number'], required: ['required', 'strings'],
  discriminator: ['discriminator', 'string'], readOnly: ['read_only', 'bool'], example: ['example', 'any'],
};

function schema(json: Json): Message {
  const out = plain(json, schemaFields);
  const additional = json.additionalProperties;
  if (typeof additional === 'boolean') out.additional_properties = { boolean: additional };
  else if (isObject(additional)) out.additional_properties = { schema: schema(additional) };
  if (typeof json.type === 'string') out.type = { value: [json.type] };
  else if (Array.isArray(json.type)) out.type = { value: json.type.map(String) };
  if (isObject(json.items)) out.items = { schema: [schema(json.items)] };
  else if (Array.isArray(json.items)) out.items = { schema: json.items.filter(isObject).map(schema) };
  if (Array.isArray(json.allOf)) out.all_of = json.allOf.filter(isObject).map(schema);
  // present even when empty: kubectl tells a struct (properties) from a map (none) by it
  if (isObject(json.properties)) out.properties = { additional_properties: namedSchemas(json.properties) };
  return vendorExtensions(json, out);
}

function namedSchemas(json: Json): Message[] {
  return Object.entries(json).filter(([, v]) => isObject(v)).map(([name, v]) => ({ name, value: schema(v as Json) }));
}

function primitivesItems(json: Json): Message {
  const out = plain(json, { ...validations, type: ['type', 'string'], collectionFormat: ['collection_format', 'string'] });
  if (isObject(json.items)) out.items = primitivesItems(json.items);
  return vendorExtensions(json, out);
}

/** The oneof member of NonBodyParameter for each `in`; query and formData alone allow empty values. */
const nonBodyMembers: Readonly<Record<string, string>> = {
  header: 'header_parameter_sub_schema', formData: 'form_data_parameter_sub_schema',
  query: 'query_parameter_sub_schema', path: 'path_parameter_sub_schema',
};

const parameterFields: Plain = {
  required: ['required', 'bool'], in: ['in', 'string'], description: ['description', 'string'], name: ['name', 'string'],
};

function parameter(json: Json): Message {
  if (json.in === 'body') {
    const out = plain(json, parameterFields);
    if (isObject(json.schema)) out.schema = schema(json.schema);
    return { body_parameter: vendorExtensions(json, out) };
  }
  const member = typeof json.in === 'string' ? nonBodyMembers[json.in] : undefined;
  if (!member) throw new ProtobufError(`an OpenAPI parameter cannot be in ${String(json.in)}`);
  const out = plain(json, { ...parameterFields, ...validations, type: ['type', 'string'], collectionFormat: ['collection_format', 'string'] });
  if (json.in === 'query' || json.in === 'formData') Object.assign(out, plain(json, { allowEmptyValue: ['allow_empty_value', 'bool'] }));
  if (isObject(json.items)) out.items = primitivesItems(json.items);
  return { non_body_parameter: { [member]: vendorExtensions(json, out) } };
}

function parametersItem(json: Json): Message {
  if (typeof json.$ref === 'string') return { json_reference: plain(json, { $ref: ['_ref', 'string'], description: ['description', 'string'] }) };
  return { parameter: parameter(json) };
}

function responses(json: Json): Message {
  const codes = Object.entries(json).filter(([k, v]) => (/^[0-9]{3}$/.test(k) || k === 'default') && isObject(v));
  const out: Message = {
    response_code: codes.map(([name, v]) => {
      const value = v as Json;
      if (typeof value.$ref === 'string') return { name, value: { json_reference: plain(value, { $ref: ['_ref', 'string'], description: ['description', 'string'] }) } };
      const response = plain(value, { description: ['description', 'string'] });
      if (isObject(value.schema)) response.schema = { schema: schema(value.schema) };
      return { name, value: { response: vendorExtensions(value, response) } };
    }),
  };
  return vendorExtensions(json, out);
}

function securityRequirements(list: unknown[]): Message[] {
  return list.filter(isObject).map((req) => ({
    additional_properties: Object.entries(req).map(([name, scopes]) => ({ name, value: { value: Array.isArray(scopes) ? scopes.map(String) : [] } })),
  }));
}

const operationFields: Plain = {
  tags: ['tags', 'strings'], summary: ['summary', 'string'], description: ['description', 'string'], operationId: ['operation_id', 'string'],
  produces: ['produces', 'strings'], consumes: ['consumes', 'strings'], schemes: ['schemes', 'strings'], deprecated: ['deprecated', 'bool'],
};

function operation(json: Json): Message {
  const out = plain(json, operationFields);
  const params = arrayAt(json, 'parameters').filter(isObject);
  if (params.length > 0) out.parameters = params.map(parametersItem);
  if (isObject(json.responses)) out.responses = responses(json.responses);
  if (Array.isArray(json.security)) out.security = securityRequirements(json.security);
  return vendorExtensions(json, out);
}

const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const;

function pathItem(json: Json): Message {
  const out = plain(json, { $ref: ['_ref', 'string'] });
  for (const method of methods) if (isObject(json[method])) out[method] = operation(json[method]);
  const params = arrayAt(json, 'parameters').filter(isObject);
  if (params.length > 0) out.parameters = params.map(parametersItem);
  return vendorExtensions(json, out);
}

function securityDefinitions(json: Json): Message {
  return {
    additional_properties: Object.entries(json).filter(([, v]) => isObject(v) && v.type === 'apiKey').map(([name, v]) => ({
      name,
      value: { api_key_security: vendorExtensions(v as Json, plain(v as Json, { type: ['type', 'string'], name: ['name', 'string'], in: ['in', 'string'], description: ['description', 'string'] })) },
    })),
  };
}

const documentFields: Plain = {
  swagger: ['swagger', 'string'], host: ['host', 'string'], basePath: ['base_path', 'string'],
  schemes: ['schemes', 'strings'], consumes: ['consumes', 'strings'], produces: ['produces', 'strings'],
};

/** The document's protobuf encoding; `doc` is the Swagger 2.0 document as served in JSON. */
export function openApiV2Protobuf(doc: Json): Uint8Array {
  const out = plain(doc, documentFields);
  if (isObject(doc.info)) {
    out.info = vendorExtensions(doc.info, plain(doc.info, {
      title: ['title', 'string'], version: ['version', 'string'], description: ['description', 'string'], termsOfService: ['terms_of_service', 'string'],
    }));
  }
  const paths = objectAt(doc, 'paths');
  out.paths = vendorExtensions(paths, {
    path: Object.entries(paths).filter(([k, v]) => k.startsWith('/') && isObject(v)).map(([name, v]) => ({ name, value: pathItem(v as Json) })),
  });
  out.definitions = { additional_properties: namedSchemas(objectAt(doc, 'definitions')) };
  if (Array.isArray(doc.security)) out.security = securityRequirements(doc.security);
  if (isObject(doc.securityDefinitions)) out.security_definitions = securityDefinitions(doc.securityDefinitions);
  vendorExtensions(doc, out);
  documentType ??= loadDocumentType();
  return documentType.encode(out).finish();
}
