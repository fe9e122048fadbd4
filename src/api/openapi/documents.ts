/**
 * The OpenAPI documents kube-apiserver 1.32 serves, generated from the registry: Swagger 2.0 at
 * /openapi/v2 and OpenAPI 3.0 at /openapi/v3/<key>, one document per discovery path (`api`,
 * `api/v1`, `apis`, `apis/<group>`, `apis/<group>/<version>`), listed by the index at /openapi/v3.
 * Shapes follow Kubernetes' api/openapi-spec (swagger.json, v3/*_openapi.json). Keys are sorted,
 * as in those files, so a document and its hash depend only on the registry.
 */
import { createHash } from 'node:crypto';
import type { ApiRegistry } from '../registry/api-registry.js';
import { extensions, sortKeys, sortBy, type Json } from './json.js';
import { catalogOf, definitions, ref, v2, v3, type Catalog, type Dialect } from './definitions.js';
import { codeText, docKey, pathsOf, type Operation, type Param, type PathEntry } from './operations.js';

const objectMediaTypes = ['application/json', 'application/yaml', 'application/vnd.orch.protobuf'];
const streamMediaTypes = ['application/json;stream=watch', 'application/vnd.orch.protobuf;stream=watch'];
const patchMediaTypes = {
  strategic: ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml'],
  generic: ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'],
} as const;

/** kube-apiserver titles its documents so and versions them by its git version (/version's gitVersion). */
const info = { title: 'Kubernetes', version: 'v1.32.0' };
const bearerToken = { description: 'Bearer Token authentication', in: 'header', name: 'authorization', type: 'apiKey' };

/** A parameter's identity for sharing it on the path item; computed once per parameter (many CRDs: many path items). */
const paramKeys = new WeakMap<Param, string>();
function paramKey(param: Param): string {
  let key = paramKeys.get(param);
  if (key === undefined) paramKeys.set(param, (key = JSON.stringify(param)));
  return key;
}

function renderParam(param: Param, d: Dialect): Json {
  const type = d === v2 ? { type: param.type, uniqueItems: true } : { schema: { type: param.type, uniqueItems: true } };
  return { description: param.description, in: param.in, name: param.name, ...(param.in === 'path' ? { required: true } : {}), ...type };
}

function byName<T extends { name: string }>(params: readonly T[]): T[] {
  return sortBy(params, (q) => q.name);
}

/**
 * One path item. As kube-openapi does, parameters every operation of the path takes (path
 * parameters, `pretty`, all of a watch path's) move to the path item; the body stays with its operation.
 */
export function pathItem(entry: PathEntry, d: Dialect): Json {
  const shared = entry.ops[0].params.filter((q) => entry.ops.every((op) => op.params.some((o) => paramKey(o) === paramKey(q))));
  const sharedKeys = new Set(shared.map(paramKey));
  const item: Json = {};
  if (shared.length > 0) item.parameters = byName(shared).map((q) => renderParam(q, d));
  for (const op of entry.ops) {
    const own = byName(op.params.filter((q) => !sharedKeys.has(paramKey(q))));
    item[op.method] = d === v2 ? operationV2(op, own) : operationV3(op, own);
  }
  return item;
}

function operationExtensions(op: Operation): Json {
  return op.action ? extensions({ action: op.action.name, 'group-version-kind': op.action.gvk }) : {};
}

function operationV2(op: Operation, params: readonly Param[]): Json {
  const body = op.body ? [{ in: 'body', name: 'body', ...(op.body.required ? { required: true } : {}), schema: ref(v2, op.body.ref) }] : [];
  return {
    consumes: op.body?.patch ? patchMediaTypes[op.body.patch] : ['*/*'],
    description: op.description,
    operationId: op.id,
    ...(body.length + params.length > 0 ? { parameters: [...body, ...params.map((q) => renderParam(q, v2))] } : {}),
    produces: op.streams ? [...objectMediaTypes, ...streamMediaTypes] : objectMediaTypes,
    responses: {
      ...Object.fromEntries(op.responses.map((r) => [r.code, { description: codeText[r.code], schema: ref(v2, r.ref) }])),
      401: { description: 'Unauthorized' },
    },
    schemes: ['https'],
    tags: [op.tag],
    ...operationExtensions(op),
  };
}

function operationV3(op: Operation, params: readonly Param[]): Json {
  const content = (types: readonly string[], name: string): Json => Object.fromEntries(types.map((t) => [t, { schema: ref(v3, name) }]));
  const produces = op.streams ? [...objectMediaTypes, ...streamMediaTypes] : objectMediaTypes;
  return {
    description: op.description,
    operationId: op.id,
    ...(params.length > 0 ? { parameters: params.map((q) => renderParam(q, v3)) } : {}),
    ...(op.body ? {
      requestBody: { content: content(op.body.patch ? patchMediaTypes[op.body.patch] : ['*/*'], op.body.ref), ...(op.body.required ? { required: true } : {}) },
    } : {}),
    responses: {
      ...Object.fromEntries(op.responses.map((r) => [r.code, { content: content(produces, r.ref), description: codeText[r.code] }])),
      401: { description: 'Unauthorized' },
    },
    tags: [op.tag],
    ...operationExtensions(op),
  };
}

interface Model {
  catalog: Catalog;
  paths: PathEntry[];
  /** the registry generation this model was built from */
  generation: number;
  /** derived once per model, shared by every document built from it (hundreds with many CRDs) */
  v3Definitions?: Json;
  pathsByDoc?: Map<string, PathEntry[]>;
  v3Documents: Map<string, object | undefined>;
}

/** The last model built for each registry: every document of one generation is built from one catalog. */
const models = new WeakMap<ApiRegistry, Model>();

function modelOf(registry: ApiRegistry): Model {
  const cached = models.get(registry);
  if (cached && cached.generation === registry.generation) return cached;
  const catalog = catalogOf(registry);
  const model: Model = { catalog, paths: pathsOf(registry, catalog), generation: registry.generation, v3Documents: new Map() };
  models.set(registry, model);
  return model;
}

/** GET /openapi/v2: every path and definition in one Swagger 2.0 document. */
export function openApiV2(registry: ApiRegistry): object {
  const { catalog, paths } = modelOf(registry);
  return sortKeys({
    swagger: '2.0',
    info,
    paths: Object.fromEntries(paths.map((entry) => [entry.path, pathItem(entry, v2)])),
    definitions: definitions(catalog, v2),
    security: [{ BearerToken: [] }],
    securityDefinitions: { BearerToken: bearerToken },
  });
}

/** The names every `$ref` below `value` points at, followed through `schemas` transitively. */
function referenced(value: unknown, schemas: Json, base: string, seen = new Set<string>()): Set<string> {
  if (Array.isArray(value)) {
    for (const item of value) referenced(item, schemas, base, seen);
  } else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key === '$ref' && typeof item === 'string' && item.startsWith(base) && !seen.has(item.slice(base.length))) {
        const name = item.slice(base.length);
        seen.add(name);
        referenced(schemas[name], schemas, base, seen);
      } else {
        referenced(item, schemas, base, seen);
      }
    }
  }
  return seen;
}

function v3Document(model: Model, key: string): object | undefined {
  if (model.v3Documents.has(key)) return model.v3Documents.get(key);
  if (!model.pathsByDoc) {
    model.pathsByDoc = new Map();
    for (const entry of model.paths) {
      const list = model.pathsByDoc.get(entry.doc);
      if (list) list.push(entry); else model.pathsByDoc.set(entry.doc, [entry]);
    }
  }
  const entries = model.pathsByDoc.get(key) ?? [];
  let doc: object | undefined;
  if (entries.length > 0) {
    const paths = Object.fromEntries(entries.map((entry) => [entry.path, pathItem(entry, v3)]));
    const all = (model.v3Definitions ??= definitions(model.catalog, v3));
    const schemas = Object.fromEntries([...referenced(paths, all, v3.refBase)].map((name) => [name, all[name]]));
    doc = sortKeys({ openapi: '3.0.0', info, paths, components: { schemas, securitySchemes: { BearerToken: bearerToken } } });
  }
  // keys come from the index or from a request; only listed ones are kept (a client cannot grow the map)
  if (doc) model.v3Documents.set(key, doc);
  return doc;
}

/**
 * GET /openapi/v3/<key>, for every key the index lists (`api`, `api/v1`, `apis`,
 * `apis/<group>`, `apis/<group>/<version>`); undefined for any other key.
 */
export function openApiV3Document(registry: ApiRegistry, key: string): object | undefined {
  return v3Document(modelOf(registry), key);
}

/** GET /openapi/v3/api/v1 or /openapi/v3/apis/<group>/<version>; undefined if not served. */
export function openApiV3GroupVersion(registry: ApiRegistry, group: string, version: string): object | undefined {
  return openApiV3Document(registry, docKey(group, version));
}

/**
 * GET /openapi/v3: each document's URL with its hash, which changes exactly when the document does
 * (clients cache a URL for good). The hash goes in the query unquoted, as kube-openapi writes it.
 */
export function openApiV3Index(registry: ApiRegistry): object {
  const model = modelOf(registry);
  const keys = [...new Set(model.paths.map((entry) => entry.doc))].sort();
  return {
    paths: Object.fromEntries(keys.map((key) => [key, {
      serverRelativeURL: `/openapi/v3/${key}?hash=${openApiHash(v3Document(model, key) as object)}`,
    }])),
  };
}

/**
 * kube-openapi's hash of a document: SHA-512 of the JSON it serves, in upper-case hex. It is the
 * `?hash=` of the index and, quoted, the ETag; serve exactly `JSON.stringify(doc)` for it to hold.
 */
export function openApiHash(doc: object): string {
  return createHash('sha512').update(JSON.stringify(doc)).digest('hex').toUpperCase();
}
