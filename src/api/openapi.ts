/**
 * The OpenAPI documents kube-apiserver 1.32 serves, generated from the kind declarations: Swagger
 * 2.0 at /openapi/v2 and OpenAPI 3.0 at /openapi/v3/<key>, one document per discovery path (`api`,
 * `api/v1`, `apis`, `apis/<group>`, `apis/<group>/<version>`), listed by the index at /openapi/v3.
 * Shapes follow Kubernetes' api/openapi-spec (swagger.json, v3/*_openapi.json): definitions named
 * by Go package, paths and operation ids as the apiserver installer registers them, parameters and
 * responses per verb, and the list/map/patch markers as vendor extensions. Keys are sorted, as in
 * those files, so a document and its hash depend only on the declarations.
 */
import { createHash } from 'node:crypto';

import { apiResourceList, type GroupVersionKind } from './discovery.js';
import type { KindDeclaration, Verb } from './kind.js';
import { listMetaSchema, listSchemaOf, objectMetaSchema, statusSchema } from './meta.js';
import type { KindRegistry } from './registry.js';
import { s, type Schema, type StructSchema } from './schema.js';

type Json = Record<string, unknown>;

/**
 * Every extension is written under our prefix and under Kubernetes': kubectl and client-go look up
 * only `x-kubernetes-*` (explain, client-side apply's patch metadata, the fieldValidation probe),
 * just as discovery answers under both group names.
 */
const extensionPrefixes = ['x-orch-', 'x-kubernetes-'];

function extensions(values: Readonly<Record<string, unknown>>): Json {
  const out: Json = {};
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined) continue;
    for (const prefix of extensionPrefixes) out[prefix + name] = value;
  }
  return out;
}

// ---- schemas ------------------------------------------------------------------------------

const metaPackage = 'io.orch.apimachinery.pkg.apis.meta.v1';
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

const preconditionsSchema = s.struct('Preconditions', {
  uid: s.string('Specifies the target UID.'),
  resourceVersion: s.string('Specifies the target ResourceVersion'),
}, 'Must be fulfilled before a deletion is carried out. If not possible, a 409 Conflict status will be returned.');

const deleteOptionsSchema = s.struct('DeleteOptions', {
  ...typeMeta,
  gracePeriodSeconds: s.int64('The duration in seconds before the object should be deleted. Value must be non-negative integer. The value zero indicates delete immediately.'),
  preconditions: preconditionsSchema,
  orphanDependents: s.boolean('Deprecated: please use the PropagationPolicy. Should the dependent objects be orphaned.'),
  propagationPolicy: s.string('Whether and how garbage collection will be performed: Orphan, Background or Foreground.'),
  dryRun: s.atomicList(s.string(), 'When present, indicates that modifications should not be persisted. Valid values are: - All: all dry run stages will be processed'),
}, 'DeleteOptions may be provided when deleting an API object.');

const rawExtensionSchema = s.struct('RawExtension', {}, 'RawExtension is used to hold extensions in external versions.');

const watchEventSchema = s.struct('WatchEvent', { type: s.string(), object: rawExtensionSchema },
  'Event represents a single event to a watched resource.');

const patchSchema = s.struct('Patch', {}, 'Patch is provided to give a concrete name and type to the PATCH request body.');

const serverAddressSchema = s.struct('ServerAddressByClientCIDR', {
  clientCIDR: s.string('The CIDR with which clients can match their IP to figure out the server address that they should use.'),
  serverAddress: s.string('Address of this server, suitable for a client that matches the above CIDR.'),
}, 'ServerAddressByClientCIDR helps the client to determine the server address that they should use, depending on the clientCIDR that they match.');
const serverAddresses = s.atomicList(serverAddressSchema, 'a map of client CIDR to server address that is serving this group.');

const groupVersionSchema = s.struct('GroupVersionForDiscovery', {
  groupVersion: s.string('groupVersion specifies the API group and version in the form "group/version"'),
  version: s.string('version specifies the version in the form of "version".'),
}, 'GroupVersion contains the "group/version" and "version" string of a version.');

const apiVersionsSchema = s.struct('APIVersions', {
  ...typeMeta,
  versions: s.atomicList(s.string(), 'versions are the api versions that are available.'),
  serverAddressByClientCIDRs: serverAddresses,
}, 'APIVersions lists the versions that are available, to allow clients to discover the API at /api, which is the root path of the legacy v1 API.');

const apiGroupSchema = s.struct('APIGroup', {
  ...typeMeta,
  name: s.string('name is the name of the group.'),
  versions: s.atomicList(groupVersionSchema, 'versions are the versions supported in this group.'),
  preferredVersion: groupVersionSchema,
  serverAddressByClientCIDRs: serverAddresses,
}, 'APIGroup contains the name, the supported versions, and the preferred version of a group.');

const apiGroupListSchema = s.struct('APIGroupList', {
  ...typeMeta,
  groups: s.atomicList(apiGroupSchema, 'groups is a list of APIGroup.'),
}, 'APIGroupList is a list of APIGroup, to allow clients to discover the API at /apis.');

const apiResourceSchema = s.struct('APIResource', {
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
}, 'APIResource specifies the name of a resource and whether it is namespaced.');

const apiResourceListSchema = s.struct('APIResourceList', {
  ...typeMeta,
  groupVersion: s.string('groupVersion is the group and version this APIResourceList is for.'),
  resources: s.atomicList(apiResourceSchema, 'resources contains the name of the resources and if they are namespaced.'),
}, 'APIResourceList is a list of APIResource, it is used to expose the name of the resources supported in a specific group and version, and if the resource is namespaced.');

interface Definition {
  schema: StructSchema;
  gvks: GroupVersionKind[];
  description?: string;
  required?: readonly string[];
}

/**
 * Names each struct once, by the Go package Kubernetes declares it in: a struct belongs to the first
 * root (apimachinery types first, then the kinds in registry order) that reaches it, so a type
 * shared by kinds, such as ObjectReference, has one definition.
 */
class Catalog {
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
    for (const field of Object.values(schema.fields)) this.addNested(field, pkg);
  }

  private addNested(schema: Schema, pkg: string): void {
    if (schema.type === 'struct') this.define(schema, pkg, {});
    else if (schema.type === 'list') this.addNested(schema.items, pkg);
    else if (schema.type === 'map') this.addNested(schema.values, pkg);
  }
}

/** `io.orch.api.<package>.<version>`, the package being the group's first label, `core` for ''. */
function kindPackage(k: KindDeclaration): string {
  return `io.orch.api.${k.group ? k.group.split('.')[0] : 'core'}.${k.version}`;
}

function catalogOf(registry: KindRegistry): Catalog {
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
  catalog.add(watchEventSchema, metaPackage, { gvks: everyGroupVersion('WatchEvent'), required: ['type', 'object'] });
  catalog.add(patchSchema, metaPackage);
  for (const discovery of [apiVersionsSchema, apiGroupListSchema, apiGroupSchema, apiResourceListSchema]) {
    catalog.add(discovery, metaPackage, { gvks: core(discovery.goName) });
  }
  for (const k of registry.kinds) {
    catalog.add(k.schema, kindPackage(k), { gvks: [{ group: k.group, kind: k.kind, version: k.version }] });
    for (const sub of Object.values(k.subresourceCreate ?? {})) {
      const body = sub.kinds[0];
      catalog.add(body.schema, kindPackage(body), { gvks: [{ group: body.group, kind: body.kind, version: body.version }] });
    }
    // a kind that is never stored is never listed
    if (k.virtualCreate) continue;
    catalog.add(listSchemaOf(k.schema), kindPackage(k), {
      gvks: [{ group: k.group, kind: k.listKind, version: k.version }],
      description: `${k.listKind} is a list of ${k.kind} objects.`,
      required: ['items'],
    });
  }
  return catalog;
}

/** How the two versions differ in writing a schema. */
interface Dialect {
  refBase: string;
  /** v3 writes Go's zero values as defaults where Kubernetes' generator does; v2 drops them */
  defaults: boolean;
  /** v3 cannot give a `$ref` siblings, so a described reference becomes `allOf: [{$ref}]` */
  wrapRefs: boolean;
}

const v2: Dialect = { refBase: '#/definitions/', defaults: false, wrapRefs: false };
const v3: Dialect = { refBase: '#/components/schemas/', defaults: true, wrapRefs: true };

function ref(d: Dialect, name: string, siblings: Json = {}): Json {
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

function property(schema: Schema, catalog: Catalog, d: Dialect, element = false): Json {
  // a struct's description describes the field holding it, so an element struct goes without
  const described = schema.description && !(element && schema.type === 'struct') ? { description: schema.description } : {};
  const zero = d.defaults && (element || (schema.type === 'struct' && embeddedByValue.has(schema)))
    ? elementDefault(schema) : undefined;
  const withDefault = zero === undefined ? {} : { default: zero };
  switch (schema.type) {
    case 'string': case 'boolean': return { ...described, ...withDefault, type: schema.type };
    case 'integer': return { ...described, ...withDefault, type: 'integer', format: schema.format };
    case 'bytes': return { ...described, type: 'string', format: 'byte' };
    case 'any': return { ...described, type: 'object' };
    case 'time': return ref(d, timeName, described);
    case 'microTime': return ref(d, microTimeName, described);
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

function definitions(catalog: Catalog, d: Dialect): Json {
  const out: Json = { ...primitiveDefinitions };
  for (const [name, def] of catalog.definitions) {
    const fields = Object.entries(def.schema.fields);
    out[name] = {
      ...(def.description ? { description: def.description } : {}),
      ...(fields.length > 0 ? { properties: Object.fromEntries(fields.map(([f, schema]) => [f, property(schema, catalog, d)])) } : {}),
      ...(def.required ? { required: [...def.required] } : {}),
      type: 'object',
      ...extensions({
        'map-type': def.schema.structType === 'atomic' ? 'atomic' : undefined,
        'group-version-kind': def.gvks.length > 0 ? def.gvks : undefined,
      }),
    };
  }
  return out;
}

// ---- operations ---------------------------------------------------------------------------

type ParamType = 'string' | 'integer' | 'boolean';
interface Param { name: string; in: 'path' | 'query'; type: ParamType; description: string }

const query = (name: string, type: ParamType, description: string): Param => ({ name, in: 'query', type, description });

/** Query parameters with the texts Kubernetes documents them by. */
const p = {
  pretty: query('pretty', 'string', "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget)."),
  allowWatchBookmarks: query('allowWatchBookmarks', 'boolean', 'allowWatchBookmarks requests watch events with type "BOOKMARK". Servers that do not implement bookmarks may ignore this flag and bookmarks are sent at the server\'s discretion. Clients should not assume bookmarks are returned at any specific interval, nor may they assume the server will send any BOOKMARK event during a session. If this is not a watch, this field is ignored.'),
  continue: query('continue', 'string', 'The continue option should be set when retrieving more results from the server. Since this value is server defined, clients may only use the continue value from a previous query result with identical query parameters (except for the value of continue) and the server may reject a continue value it does not recognize. If the specified continue value is no longer valid whether due to expiration (generally five to fifteen minutes) or a configuration change on the server, the server will respond with a 410 ResourceExpired error together with a continue token.\n\nThis field is not supported when watch is true. Clients may start a watch from the last resourceVersion value returned by the server and not miss any modifications.'),
  fieldSelector: query('fieldSelector', 'string', 'A selector to restrict the list of returned objects by their fields. Defaults to everything.'),
  labelSelector: query('labelSelector', 'string', 'A selector to restrict the list of returned objects by their labels. Defaults to everything.'),
  limit: query('limit', 'integer', 'limit is a maximum number of responses to return for a list call. If more items exist, the server will set the `continue` field on the list metadata to a value that can be used with the same initial query to retrieve the next set of results. This field is not supported if watch is true.'),
  resourceVersion: query('resourceVersion', 'string', 'resourceVersion sets a constraint on what resource versions a request may be served from. See https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions for details.\n\nDefaults to unset'),
  resourceVersionMatch: query('resourceVersionMatch', 'string', 'resourceVersionMatch determines how resourceVersion is applied to list calls. It is highly recommended that resourceVersionMatch be set for list calls where resourceVersion is set See https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions for details.\n\nDefaults to unset'),
  sendInitialEvents: query('sendInitialEvents', 'boolean', '`sendInitialEvents=true` may be set together with `watch=true`. In that case, the watch stream will begin with synthetic events to produce the current state of objects in the collection. Once all such events have been sent, a synthetic "Bookmark" event will be sent, marked with the `"orch.io/initial-events-end": "true"` annotation. When `sendInitialEvents` option is set, `resourceVersionMatch` must be NotOlderThan.'),
  timeoutSeconds: query('timeoutSeconds', 'integer', 'Timeout for the list/watch call. This limits the duration of the call, regardless of any activity or inactivity.'),
  watch: query('watch', 'boolean', 'Watch for changes to the described resources and return them as a stream of add, update, and remove notifications. Specify resourceVersion.'),
  dryRun: query('dryRun', 'string', 'When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun directive will result in an error response and no further processing of the request. Valid values are: - All: all dry run stages will be processed'),
  fieldManager: query('fieldManager', 'string', 'fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint.'),
  patchFieldManager: query('fieldManager', 'string', 'fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint. This field is required for apply requests (application/apply-patch) but optional for non-apply patch types (JsonPatch, MergePatch, StrategicMergePatch).'),
  fieldValidation: query('fieldValidation', 'string', 'fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore: This will ignore any unknown fields that are silently dropped from the object, and will ignore all but the last duplicate field that the decoder encounters. - Warn: This will send a warning via the standard warning response header for each unknown field that is dropped from the object, and for each duplicate field that is encountered. The request will still succeed if there are no other errors, and will only persist the last of any duplicate fields. This is the default. - Strict: This will fail the request with a BadRequest error if any unknown fields would be dropped from the object, or if any duplicate fields are present. The error returned from the server will contain all unknown and duplicate fields encountered.'),
  force: query('force', 'boolean', 'Force is going to "force" Apply requests. It means user will re-acquire conflicting fields owned by other people. Force flag must be unset for non-apply patch requests.'),
  gracePeriodSeconds: query('gracePeriodSeconds', 'integer', 'The duration in seconds before the object should be deleted. Value must be non-negative integer. The value zero indicates delete immediately. If this value is nil, the default grace period for the specified type will be used. Defaults to a per object value if not specified. zero means delete immediately.'),
  orphanDependents: query('orphanDependents', 'boolean', 'Deprecated: please use the PropagationPolicy, this field will be deprecated in 1.7. Should the dependent objects be orphaned. If true/false, the "orphan" finalizer will be added to/removed from the object\'s finalizers list. Either this field or PropagationPolicy may be set, but not both.'),
  propagationPolicy: query('propagationPolicy', 'string', "Whether and how garbage collection will be performed. Either this field or OrphanDependents may be set, but not both. The default policy is decided by the existing finalizer set in the metadata.finalizers and the resource-specific default policy. Acceptable values are: 'Orphan' - orphan the dependents; 'Background' - allow the garbage collector to delete the dependents in the background; 'Foreground' - a cascading policy that deletes all dependents in the foreground."),
};

const listParams = [p.allowWatchBookmarks, p.continue, p.fieldSelector, p.labelSelector, p.limit, p.resourceVersion, p.resourceVersionMatch, p.sendInitialEvents, p.timeoutSeconds, p.watch];
const deleteParams = [p.dryRun, p.gracePeriodSeconds, p.orphanDependents, p.propagationPolicy];

type Method = 'get' | 'put' | 'post' | 'patch' | 'delete';
type Returns = 'object' | 'list' | 'deleted' | 'status' | 'watchEvent';
type ActionName = Verb | 'watchlist';

/** What the apiserver installer registers for each action (installer.go's routes). */
interface Action {
  method: Method;
  /** the verb an operation id starts with */
  word: string;
  /** x-kubernetes-action */
  action: string;
  /** words the operation id places before and after the kind */
  infix?: string;
  suffix?: string;
  describe(k: KindDeclaration, subresource: string): string;
  params: readonly Param[];
  body?: 'object' | 'patch' | 'deleteOptions';
  returns: Returns;
  codes: readonly Code[];
}

type Code = '200' | '201' | '202';
const codeText: Readonly<Record<Code, string>> = { 200: 'OK', 201: 'Created', 202: 'Accepted' };

/** "a"/"an" as Kubernetes' GetArticleForNoun chooses it; plural nouns get none. */
function article(noun: string): string {
  if (noun.endsWith('s') && !noun.endsWith('ss')) return ' ';
  return /^[aeiou]/i.test(noun) ? ' an ' : ' a ';
}

/** "status of " for a subresource, nothing for the object itself */
const of = (sub: string): string => (sub ? `${sub} of ` : '');

const actions: Readonly<Record<ActionName, Action>> = {
  get: {
    method: 'get', word: 'read', action: 'get', params: [], returns: 'object', codes: ['200'],
    describe: (k, sub) => `read ${of(sub)}the specified ${k.kind}`,
  },
  list: {
    method: 'get', word: 'list', action: 'list', params: listParams, returns: 'list', codes: ['200'],
    describe: (k) => `list ${k.verbs.includes('watch') ? 'or watch ' : ''}objects of kind ${k.kind}`,
  },
  create: {
    method: 'post', word: 'create', action: 'post', params: [p.dryRun, p.fieldManager, p.fieldValidation],
    body: 'object', returns: 'object', codes: ['200', '201', '202'],
    describe: (k, sub) => `create${sub ? ` ${sub} of` : ''}${article(k.kind)}${k.kind}`,
  },
  update: {
    method: 'put', word: 'replace', action: 'put', params: [p.dryRun, p.fieldManager, p.fieldValidation],
    body: 'object', returns: 'object', codes: ['200', '201'],
    describe: (k, sub) => `replace ${of(sub)}the specified ${k.kind}`,
  },
  patch: {
    method: 'patch', word: 'patch', action: 'patch', params: [p.dryRun, p.patchFieldManager, p.fieldValidation, p.force],
    body: 'patch', returns: 'object', codes: ['200', '201'],
    describe: (k, sub) => `partially update ${of(sub)}the specified ${k.kind}`,
  },
  delete: {
    method: 'delete', word: 'delete', action: 'delete', params: deleteParams, body: 'deleteOptions', returns: 'deleted', codes: ['200', '202'],
    describe: (k, sub) => `delete${sub ? ` ${sub} of` : ''}${article(k.kind)}${k.kind}`,
  },
  deletecollection: {
    // the installer names it "deletecollection…"; the id generator splits off "delete"
    method: 'delete', word: 'delete', infix: 'Collection', action: 'deletecollection',
    params: [...deleteParams, ...listParams.filter((q) => q !== p.watch && q !== p.allowWatchBookmarks)],
    body: 'deleteOptions', returns: 'status', codes: ['200'],
    describe: (k) => `delete collection of ${k.kind}`,
  },
  watch: {
    method: 'get', word: 'watch', action: 'watch', params: listParams, returns: 'watchEvent', codes: ['200'],
    describe: (k) => `watch changes to an object of kind ${k.kind}. deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter.`,
  },
  watchlist: {
    method: 'get', word: 'watch', suffix: 'List', action: 'watchlist', params: listParams, returns: 'watchEvent', codes: ['200'],
    describe: (k) => `watch individual changes to a list of ${k.kind}. deprecated: use the 'watch' parameter with a list operation instead.`,
  },
};

/** The operations subresource storage serves, by the verbs discovery lists for it. */
const subresourceActions: Readonly<Record<string, ActionName>> = { get: 'get', update: 'update', patch: 'patch', create: 'create' };

function subresourceAction(verb: string): ActionName {
  const action = subresourceActions[verb];
  if (!action) throw new Error(`no OpenAPI operation for subresource verb ${JSON.stringify(verb)}`);
  return action;
}

interface Operation {
  method: Method;
  id: string;
  description: string;
  tag: string;
  /** with the group-version-kind; absent on discovery operations */
  action?: { name: string; gvk: GroupVersionKind };
  params: readonly Param[];
  body?: { ref: string; patch: boolean; required: boolean };
  responses: ReadonlyArray<{ code: Code; ref: string }>;
  streams: boolean;
}

interface PathEntry {
  /** the /openapi/v3/<key> document the path belongs to */
  doc: string;
  path: string;
  ops: Operation[];
}

/** Kubernetes' ToValidOperationID: letters, digits and '_' kept, a capital after anything else. */
function operationIdPart(text: string, capitalizeFirst: boolean): string {
  let out = '';
  let capitalize = capitalizeFirst;
  for (const [i, c] of [...text].entries()) {
    if (/\p{L}|_/u.test(c) || (i > 0 && /\p{Nd}/u.test(c))) {
      out += capitalize ? c.toUpperCase() : c;
      capitalize = false;
    } else {
      capitalize = true;
    }
  }
  return out;
}

/** The group as operation ids and tags spell it: `core` for '', our domain suffix dropped (as `.k8s.io`). */
function groupWord(group: string): string {
  return group ? group.replace(/\.orch\.io$/, '') : 'core';
}

/** The group (and version) as operation ids ("CoreV1", "EventsV1") and tags ("core_v1") spell it. */
function idWords(group: string, version?: string): { id: string; tag: string } {
  const words = version ? [groupWord(group), version] : [groupWord(group)];
  return { id: words.map((w) => operationIdPart(w, true)).join(''), tag: words.map((w) => operationIdPart(w, false)).join('_') };
}

function docKey(group: string, version?: string): string {
  const base = group ? `apis/${group}` : 'api';
  return version ? `${base}/${version}` : base;
}

function pathParams(path: string, kind: string): Param[] {
  const out: Param[] = [];
  if (path.includes('{name}')) out.push({ name: 'name', in: 'path', type: 'string', description: `name of the ${kind}` });
  if (path.includes('{namespace}')) out.push({ name: 'namespace', in: 'path', type: 'string', description: 'object name and auth scope, such as for teams and projects' });
  return out;
}

function kindPaths(k: KindDeclaration, catalog: Catalog, subresourceVerbs: ReadonlyMap<string, readonly string[]>): PathEntry[] {
  const prefix = `/${docKey(k.group, k.version)}`;
  const { id: gv, tag } = idWords(k.group, k.version);
  const kindRef = catalog.nameOf(k.schema);
  const refs: Readonly<Record<Returns, string>> = {
    object: kindRef,
    // a kind that is never stored has no list operations, and no list type
    list: k.virtualCreate ? kindRef : catalog.nameOf(listSchemaOf(k.schema)),
    deleted: k.returnDeletedObject ? kindRef : catalog.nameOf(statusSchema),
    status: catalog.nameOf(statusSchema),
    watchEvent: catalog.nameOf(watchEventSchema),
  };
  const bodies = { object: kindRef, patch: catalog.nameOf(patchSchema), deleteOptions: catalog.nameOf(deleteOptionsSchema) };

  const operation = (path: string, name: ActionName, subresource = '', allNamespaces = false): Operation => {
    const a = actions[name];
    const scope = k.namespaced && !allNamespaces ? 'Namespaced' : '';
    const sub = subresource ? subresource[0].toUpperCase() + subresource.slice(1) : '';
    // a create on a subresource takes and answers its own kind (a ServiceAccount's TokenRequest)
    const created = subresource ? k.subresourceCreate?.[subresource]?.kinds[0] : undefined;
    const objectRef = created ? catalog.nameOf(created.schema) : undefined;
    const gvk = created ?? k;
    return {
      method: a.method,
      id: `${a.word}${gv}${a.infix ?? ''}${scope}${k.kind}${sub}${a.suffix ?? ''}${allNamespaces ? 'ForAllNamespaces' : ''}`,
      description: a.describe(k, subresource),
      tag,
      action: { name: a.action, gvk: { group: gvk.group, kind: gvk.kind, version: gvk.version } },
      // every route takes its path parameters and `pretty`; pathItem hoists what all share
      params: [...pathParams(path, k.kind), p.pretty, ...a.params],
      body: a.body && { ref: a.body === 'object' && objectRef ? objectRef : bodies[a.body], patch: a.body === 'patch', required: a.body !== 'deleteOptions' },
      responses: a.codes.map((code) => ({ code, ref: a.returns === 'object' && objectRef ? objectRef : refs[a.returns] })),
      streams: a.returns === 'list' || a.returns === 'watchEvent',
    };
  };
  const has = (verb: Verb): boolean => k.verbs.includes(verb);
  const scope = k.namespaced ? '/namespaces/{namespace}' : '';
  const collection = `${prefix}${scope}/${k.resource}`;
  const object = `${collection}/{name}`;
  const watchCollection = `${prefix}/watch${scope}/${k.resource}`;
  const entries: Array<[string, Array<[ActionName, string?, boolean?]>]> = [
    [collection, (['list', 'create', 'deletecollection'] as const).filter(has).map((v) => [v])],
    [object, (['get', 'update', 'patch', 'delete'] as const).filter(has).map((v) => [v])],
    [watchCollection, has('watch') ? [['watchlist']] : []],
    [`${watchCollection}/{name}`, has('watch') ? [['watch']] : []],
    ...[...subresourceVerbs].map(([sub, verbs]): [string, Array<[ActionName, string]>] =>
      [`${object}/${sub}`, verbs.map((verb) => [subresourceAction(verb), sub])]),
  ];
  if (k.namespaced) {
    entries.push([`${prefix}/${k.resource}`, has('list') ? [['list', '', true]] : []]);
    entries.push([`${prefix}/watch/${k.resource}`, has('watch') ? [['watchlist', '', true]] : []]);
  }
  return entries.filter(([, ops]) => ops.length > 0).map(([path, ops]) => ({
    doc: docKey(k.group, k.version),
    path,
    ops: ops.map(([name, sub, all]) => operation(path, name, sub, all)),
  }));
}

/** The discovery documents' own paths (GET /api/, /apis/, /apis/<group>/, /api/v1/, ...). */
function discoveryPath(doc: string, path: string, id: string, description: string, tag: string, returns: string): PathEntry {
  return {
    doc, path,
    ops: [{
      method: 'get', id, description, tag, params: [], streams: false,
      responses: [{ code: '200', ref: `${metaPackage}.${returns}` }],
    }],
  };
}

function pathsOf(registry: KindRegistry, catalog: Catalog): PathEntry[] {
  const entries = [
    discoveryPath('api', '/api/', 'getCoreAPIVersions', 'get available API versions', 'core', 'APIVersions'),
    discoveryPath('apis', '/apis/', 'getAPIVersions', 'get available API versions', 'apis', 'APIGroupList'),
  ];
  for (const [group, versions] of registry.groups()) {
    if (group) {
      const { id, tag } = idWords(group);
      entries.push(discoveryPath(docKey(group), `/${docKey(group)}/`, `get${id}APIGroup`, 'get information of a group', tag, 'APIGroup'));
    }
    for (const version of versions) {
      const { id, tag } = idWords(group, version);
      entries.push(discoveryPath(docKey(group, version), `/${docKey(group, version)}/`, `get${id}APIResources`, 'get available resources', tag, 'APIResourceList'));
      // subresource verbs as discovery lists them ("namespaces/status": get, patch, update)
      const resources = apiResourceList(registry, group, version)?.resources ?? [];
      for (const k of registry.inGroupVersion(group, version)) {
        const subresources = new Map(resources.filter((r) => r.name.startsWith(`${k.resource}/`))
          .map((r) => [r.name.slice(k.resource.length + 1), r.verbs] as const));
        entries.push(...kindPaths(k, catalog, subresources));
      }
    }
  }
  return entries;
}

// ---- rendering ----------------------------------------------------------------------------

/**
 * Response media types as Kubernetes documents them (protobuf under our name, the alpha CBOR left
 * out); lists and watches also stream JSON and protobuf.
 */
const objectMediaTypes = ['application/json', 'application/yaml', 'application/vnd.orch.protobuf'];
const streamMediaTypes = ['application/json;stream=watch', 'application/vnd.orch.protobuf;stream=watch'];
const patchMediaTypes = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml'];

/** kube-apiserver titles its documents so and versions them by its git version (/version's gitVersion). */
const info = { title: 'Kubernetes', version: 'v1.32.0' };
const bearerToken = { description: 'Bearer Token authentication', in: 'header', name: 'authorization', type: 'apiKey' };

const paramKey = (param: Param): string => JSON.stringify(param);

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
function pathItem(entry: PathEntry, d: Dialect): Json {
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
    consumes: op.body?.patch ? patchMediaTypes : ['*/*'],
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
      requestBody: { content: content(op.body.patch ? patchMediaTypes : ['*/*'], op.body.ref), ...(op.body.required ? { required: true } : {}) },
    } : {}),
    responses: {
      ...Object.fromEntries(op.responses.map((r) => [r.code, { content: content(produces, r.ref), description: codeText[r.code] }])),
      401: { description: 'Unauthorized' },
    },
    tags: [op.tag],
    ...operationExtensions(op),
  };
}

interface Model { catalog: Catalog; paths: PathEntry[] }

function modelOf(registry: KindRegistry): Model {
  const catalog = catalogOf(registry);
  return { catalog, paths: pathsOf(registry, catalog) };
}

/** GET /openapi/v2: every path and definition in one Swagger 2.0 document. */
export function openApiV2(registry: KindRegistry): object {
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
  const entries = model.paths.filter((entry) => entry.doc === key);
  if (entries.length === 0) return undefined;
  const paths = Object.fromEntries(entries.map((entry) => [entry.path, pathItem(entry, v3)]));
  const all = definitions(model.catalog, v3);
  const schemas = Object.fromEntries([...referenced(paths, all, v3.refBase)].map((name) => [name, all[name]]));
  return sortKeys({ openapi: '3.0.0', info, paths, components: { schemas, securitySchemes: { BearerToken: bearerToken } } });
}

/**
 * GET /openapi/v3/<key>, for every key the index lists (`api`, `api/v1`, `apis`,
 * `apis/<group>`, `apis/<group>/<version>`); undefined for any other key.
 */
export function openApiV3Document(registry: KindRegistry, key: string): object | undefined {
  return v3Document(modelOf(registry), key);
}

/** GET /openapi/v3/api/v1 or /openapi/v3/apis/<group>/<version>; undefined if not served. */
export function openApiV3GroupVersion(registry: KindRegistry, group: string, version: string): object | undefined {
  return openApiV3Document(registry, docKey(group, version));
}

/**
 * GET /openapi/v3: each document's URL with its hash, which changes exactly when the document does
 * (clients cache a URL for good). The hash goes in the query unquoted, as kube-openapi writes it.
 */
export function openApiV3Index(registry: KindRegistry): object {
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

/** Object keys in byte order at every level, as Kubernetes' published documents have them. */
function sortKeys(value: unknown): Json {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (!v || typeof v !== 'object') return v;
    return Object.fromEntries(sortBy(Object.entries(v), ([k]) => k).map(([k, item]) => [k, sort(item)]));
  };
  return sort(value) as Json;
}

function sortBy<T>(items: readonly T[], key: (item: T) => string): T[] {
  return [...items].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}
