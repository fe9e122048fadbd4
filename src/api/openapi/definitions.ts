/**
 * The schema half of the OpenAPI documents: every struct the API uses named once by its Go package
 * (the catalog), written as Swagger 2.0 definitions or OpenAPI 3.0 component schemas, with the
 * list/map/patch markers as vendor extensions.
 */
import type { GroupVersionKind } from '../discovery.js';
import type { KindDeclaration } from '../kind.js';
import { deleteOptionsSchema, fieldSelectorRequirementStructural, labelSelectorStructural, listMetaSchema, listSchemaOf, objectMetaSchema, statusSchema } from '../meta.js';
import type { ApiRegistry } from '../registry/api-registry.js';
import type { Schema, StructSchema } from '../schema.js';
import { s } from '../schema/builtin-structural.js';
import { internalStructOf } from '../schema/to-internal.js';
import { toOpenApiSchema, type Structural } from '../schema/structural.js';
import { extensions, sortBy, type Json } from './json.js';

export const metaPackage = 'io.orch.apimachinery.pkg.apis.meta.v1';
const runtimePackage = 'io.orch.apimachinery.pkg.runtime';
const timeName = `${metaPackage}.Time`;
const microTimeName = `${metaPackage}.MicroTime`;

/** Time and MicroTime are strings on the wire, with definitions of their own as in Kubernetes. */
const primitiveDefinitions: Readonly<Record<string, Json>> = {
  [timeName]: {
    description: 'Time is a wrapper around time.Time which supports correct marshaling to YAML and JSON.  Wrappers are provided for many of the factory methods that the time package offers.',
    type: 'string', format: 'date-time',
  },
  [microTimeName]: { description: 'MicroTime is version of Time with microsecond level precision.', type: 'string', format: 'date-time' },
};

/** The apimachinery types the API uses around the kinds: request bodies, watch events, discovery. */
const typeMeta = {
  apiVersion: s.string('APIVersion defines the versioned schema of this representation of an object.'),
  kind: s.string('Kind is a string value representing the REST resource this object represents.'),
};

const rawExtension = s.struct('RawExtension', {}, 'RawExtension is used to hold extensions in external versions.');

export const watchEventSchema = internalStructOf(s.struct('WatchEvent', { type: s.string(), object: rawExtension },
  'Event represents a single event to a watched resource.', { required: ['type', 'object'] }));

export const patchSchema = internalStructOf(s.struct('Patch', {}, 'Patch is provided to give a concrete name and type to the PATCH request body.'));

const serverAddress = s.struct('ServerAddressByClientCIDR', {
  clientCIDR: s.string('The CIDR with which clients can match their IP to figure out the server address that they should use.'),
  serverAddress: s.string('Address of this server, suitable for a client that matches the above CIDR.'),
}, 'ServerAddressByClientCIDR helps the client to determine the server address that they should use, depending on the clientCIDR that they match.', { required: ['clientCIDR', 'serverAddress'] });
const serverAddresses = s.atomicList(serverAddress, 'a map of client CIDR to server address that is serving this group.');

const groupVersion = s.struct('GroupVersionForDiscovery', {
  groupVersion: s.string('groupVersion specifies the API group and version in the form "group/version"'),
  version: s.string('version specifies the version in the form of "version".'),
}, 'GroupVersion contains the "group/version" and "version" string of a version.', { required: ['groupVersion', 'version'] });

const apiVersions = s.struct('APIVersions', {
  ...typeMeta,
  versions: s.atomicList(s.string(), 'versions are the api versions that are available.'),
  serverAddressByClientCIDRs: serverAddresses,
}, 'APIVersions lists the versions that are available, to allow clients to discover the API at /api, which is the root path of the legacy v1 API.', { required: ['versions', 'serverAddressByClientCIDRs'] });

const apiGroup = s.struct('APIGroup', {
  ...typeMeta,
  name: s.string('name is the name of the group.'),
  versions: s.atomicList(groupVersion, 'versions are the versions supported in this group.'),
  preferredVersion: groupVersion,
  serverAddressByClientCIDRs: serverAddresses,
}, 'APIGroup contains the name, the supported versions, and the preferred version of a group.', { required: ['name', 'versions'] });

const apiGroupList = s.struct('APIGroupList', {
  ...typeMeta,
  groups: s.atomicList(apiGroup, 'groups is a list of APIGroup.'),
}, 'APIGroupList is a list of APIGroup, to allow clients to discover the API at /apis.', { required: ['groups'] });

const apiResource = s.struct('APIResource', {
  name: s.string('name is the plural name of the resource.'),
  singularName: s.string('singularName is the singular name of the resource.'),
  namespaced: s.boolean('namespaced indicates if a resource is namespaced or not.'),
  group: s.string('group is the preferred group of the resource.'),
  version: s.string('version is the preferred version of the resource.'),
  kind: s.string("kind is the kind for the resource (e.g. 'Foo' is the kind for a resource 'foo')"),
  verbs: s.atomicList(s.string(), 'verbs is a list of supported kube verbs.'),
  shortNames: s.atomicList(s.string(), 'shortNames is a list of suggested short names of the resource.'),
  categories: s.atomicList(s.string(), "categories is a list of the grouped resources this resource belongs to (e.g. 'all')"),
  storageVersionHash: s.string('The hash value of the storage version, the version this resource is converted to when written to the data store.'),
}, 'APIResource specifies the name of a resource and whether it is namespaced.', { required: ['name', 'singularName', 'namespaced', 'kind', 'verbs'] });

const apiResourceList = s.struct('APIResourceList', {
  ...typeMeta,
  groupVersion: s.string('groupVersion is the group and version this APIResourceList is for.'),
  resources: s.atomicList(apiResource, 'resources contains the name of the resources and if they are namespaced.'),
}, 'APIResourceList is a list of APIResource, it is used to expose the name of the resources supported in a specific group and version, and if the resource is namespaced.', { required: ['groupVersion', 'resources'] });

/** the apimachinery roots, in their internal form */
const rawExtensionSchema = internalStructOf(rawExtension);
const discoverySchemas = [apiVersions, apiGroupList, apiGroup, apiResourceList].map(internalStructOf);

interface Definition {
  schema: StructSchema;
  gvks: GroupVersionKind[];
  description?: string;
  /** a custom resource's structural schema, published as written */
  structural?: Structural;
}

/**
 * Names each struct once, by the Go package Kubernetes declares it in: a struct belongs to the first
 * root (apimachinery types first, then the kinds in registry order) that reaches it, so a type
 * shared by kinds, such as ObjectReference, has one definition.
 */
export class Catalog {
  private readonly names = new Map<StructSchema, string>();
  readonly definitions = new Map<string, Definition>();

  /** A root: its description is the type's. */
  add(schema: StructSchema, pkg: string, extra: Omit<Partial<Definition>, 'schema'> = {}): void {
    // one schema served under two group names (an alias) is one definition with both kinds
    const known = this.names.get(schema);
    if (known) {
      const definition = this.definitions.get(known) as Definition;
      for (const gvk of extra.gvks ?? []) {
        if (!definition.gvks.some((g) => g.group === gvk.group && g.version === gvk.version && g.kind === gvk.kind)) definition.gvks.push(gvk);
      }
      return;
    }
    this.define(schema, pkg, { description: schema.description, ...extra });
  }

  nameOf(schema: StructSchema): string {
    const name = this.names.get(schema);
    if (!name) throw new Error(`schema ${schema.goName} was not added to the catalog`);
    return name;
  }

  /**
   * A nested struct's description describes the field holding it (the field carries it), so its
   * definition goes without; otherwise `kubectl explain` prints it twice.
   */
  private define(schema: StructSchema, pkg: string, extra: Omit<Partial<Definition>, 'schema'>): void {
    if (this.names.has(schema)) return;
    const name = `${pkg}.${schema.goName}`;
    if (this.definitions.has(name)) throw new Error(`two schemas are named ${name}`);
    this.names.set(schema, name);
    this.definitions.set(name, { schema, gvks: [], ...extra });
    // a structural schema is written whole, without named nested types
    if (extra.structural) return;
    for (const field of Object.values(schema.fields)) this.addNested(field, pkg);
  }

  private addNested(schema: Schema, pkg: string): void {
    if (schema.type === 'struct') this.define(schema, pkg, {});
    else if (schema.type === 'list') this.addNested(schema.items, pkg);
    else if (schema.type === 'map') this.addNested(schema.values, pkg);
  }
}

/**
 * `io.orch.api.<package>.<version>`, the package being the group's first label, `core` for ''.
 * A custom resource is named by its reversed group, as Kubernetes names them (`com.example.stable.v1`).
 */
function kindPackage(k: KindDeclaration): string {
  if (k.openApiAsWritten) return `${k.group.split('.').reverse().join('.')}.${k.version}`;
  return `io.orch.api.${k.group ? k.group.split('.')[0] : 'core'}.${k.version}`;
}

export function catalogOf(registry: ApiRegistry): Catalog {
  const catalog = new Catalog();
  const core = (kind: string): GroupVersionKind[] => [{ group: '', kind, version: 'v1' }];
  // the options types are registered in every group-version the server serves
  const everyGroupVersion = (kind: string): GroupVersionKind[] => sortBy([...registry.groups()]
    .flatMap(([group, versions]) => versions.map((version) => ({ group, kind, version }))), (gvk) => `${gvk.group}/${gvk.version}`);
  catalog.add(objectMetaSchema, metaPackage);
  catalog.add(listMetaSchema, metaPackage);
  catalog.add(statusSchema, metaPackage, { gvks: core('Status') });
  catalog.add(deleteOptionsSchema, metaPackage, { gvks: everyGroupVersion('DeleteOptions') });
  catalog.add(rawExtensionSchema, runtimePackage);
  catalog.add(watchEventSchema, metaPackage, { gvks: everyGroupVersion('WatchEvent') });
  catalog.add(patchSchema, metaPackage);
  // apimachinery's selector types, shared by kinds of several groups
  catalog.add(internalStructOf(labelSelectorStructural), metaPackage);
  catalog.add(internalStructOf(fieldSelectorRequirementStructural), metaPackage);
  for (const discovery of discoverySchemas) {
    catalog.add(discovery, metaPackage, { gvks: core(discovery.goName) });
  }
  for (const k of registry.kinds) {
    catalog.add(k.schema, kindPackage(k), { gvks: [{ group: k.group, kind: k.kind, version: k.version }], structural: k.openApiAsWritten ? k.structural : undefined });
    for (const sub of Object.values(k.subresourceCreate ?? {})) {
      const body = sub.kinds[0];
      catalog.add(body.schema, kindPackage(body), { gvks: [{ group: body.group, kind: body.kind, version: body.version }] });
    }
    // a kind that is never stored is never listed
    if (k.virtualCreate) continue;
    catalog.add(listSchemaOf(k.schema), kindPackage(k), {
      gvks: [{ group: k.group, kind: k.listKind, version: k.version }],
      description: `${k.listKind} is a list of ${k.kind} objects.`,
    });
  }
  return catalog;
}

/** How the two versions differ in writing a schema. */
export interface Dialect {
  refBase: string;
  /** v3 writes Go's zero values as defaults where Kubernetes' generator does; v2 drops them */
  defaults: boolean;
  /** v3 cannot give a `$ref` siblings, so a described reference becomes `allOf: [{$ref}]` */
  wrapRefs: boolean;
}

export const v2: Dialect = { refBase: '#/definitions/', defaults: false, wrapRefs: false };
export const v3: Dialect = { refBase: '#/components/schemas/', defaults: true, wrapRefs: true };

export function ref(d: Dialect, name: string, siblings: Json = {}): Json {
  const target = { $ref: d.refBase + name };
  if (Object.keys(siblings).length === 0) return target;
  return d.wrapRefs ? { allOf: [target], ...siblings } : { ...target, ...siblings };
}

/** ObjectMeta and ListMeta are embedded by value in every Kubernetes type, hence `default: {}` in v3. */
const embeddedByValue: ReadonlySet<StructSchema> = new Set([objectMetaSchema, listMetaSchema]);

/** The zero value of a list or map element, which Kubernetes writes as its default in v3. */
function elementDefault(schema: Schema): unknown {
  switch (schema.type) {
    case 'string': return '';
    case 'integer': return 0;
    case 'boolean': return false;
    case 'struct': return {};
    default: return undefined;
  }
}

/**
 * The zero value v3 gives a required field (one Go serializes without omitempty): scalars and
 * structs, times included; lists and maps go without.
 */
function requiredDefault(schema: Schema): unknown {
  return schema.type === 'time' || schema.type === 'microTime' ? {} : elementDefault(schema);
}

/** `element`: the schema of a list's or map's items; `required`: a field its struct lists as required. */
function property(schema: Schema, catalog: Catalog, d: Dialect, element = false, required = false): Json {
  // a struct's description describes the field holding it, so an element struct goes without
  const described = schema.description && !(element && schema.type === 'struct') ? { description: schema.description } : {};
  const zero = !d.defaults ? undefined
    : element || (schema.type === 'struct' && embeddedByValue.has(schema)) ? elementDefault(schema)
      : required ? requiredDefault(schema) : undefined;
  const withDefault = zero === undefined ? {} : { default: zero };
  switch (schema.type) {
    case 'string': case 'boolean': return { ...described, ...withDefault, type: schema.type };
    case 'integer': return { ...described, ...withDefault, type: 'integer', format: schema.format };
    case 'bytes': return { ...described, type: 'string', format: 'byte' };
    case 'any': return { ...described, type: 'object' };
    case 'time': return ref(d, timeName, { ...described, ...withDefault });
    case 'microTime': return ref(d, microTimeName, { ...described, ...withDefault });
    case 'struct': return ref(d, catalog.nameOf(schema), { ...described, ...withDefault });
    case 'map':
      return {
        ...described, type: 'object', additionalProperties: property(schema.values, catalog, d, true),
        ...extensions({ 'map-type': schema.mapType === 'atomic' ? 'atomic' : undefined }),
      };
    case 'list':
      return {
        ...described, type: 'array', items: property(schema.items, catalog, d, true),
        ...extensions({
          'list-type': schema.listType,
          'list-map-keys': schema.listType === 'map' ? schema.listMapKeys : undefined,
          'patch-strategy': schema.patchStrategy,
          'patch-merge-key': schema.patchMergeKey,
        }),
      };
  }
}

/**
 * A custom resource's definition: its structural schema, with apiVersion and kind described and
 * metadata a reference to ObjectMeta, as Kubernetes' CRD OpenAPI builder writes it.
 */
function customResourceDefinition(def: Definition & { structural: Structural }, d: Dialect): Json {
  const out = toOpenApiSchema(def.structural) as Json;
  const properties = { ...(out.properties as Json | undefined) };
  properties.apiVersion = { description: 'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources', type: 'string' };
  properties.kind = { description: 'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds', type: 'string' };
  properties.metadata = ref(d, `${metaPackage}.ObjectMeta`, { description: "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata" });
  return { ...out, properties, type: 'object', ...extensions({ 'group-version-kind': def.gvks }) };
}

export function definitions(catalog: Catalog, d: Dialect): Json {
  const out: Json = { ...primitiveDefinitions };
  for (const [name, def] of catalog.definitions) {
    if (def.structural) {
      out[name] = customResourceDefinition(def as Definition & { structural: Structural }, d);
      continue;
    }
    const fields = Object.entries(def.schema.fields);
    out[name] = {
      ...(def.description ? { description: def.description } : {}),
      ...(fields.length > 0 ? {
        properties: Object.fromEntries(fields.map(([f, schema]) => [f, property(schema, catalog, d, false, def.schema.required?.includes(f))])),
      } : {}),
      ...(def.schema.required ? { required: [...def.schema.required] } : {}),
      type: 'object',
      ...extensions({
        'map-type': def.schema.structType === 'atomic' ? 'atomic' : undefined,
        'group-version-kind': def.gvks.length > 0 ? def.gvks : undefined,
      }),
    };
  }
  return out;
}
