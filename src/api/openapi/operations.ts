/**
 * The paths half of the OpenAPI documents: the operations the apiserver installer registers for
 * each kind and verb (ids, tags, parameters and responses as Kubernetes documents them), and the
 * discovery documents' own paths.
 */
import { apiResourceList, type GroupVersionKind } from '../discovery.js';
import { deleteOptionsSchema, listSchemaOf, statusSchema } from '../meta.js';
import type { KindDeclaration, Verb } from '../kind.js';
import type { ApiRegistry } from '../registry/api-registry.js';
import { Catalog, metaPackage, patchSchema, watchEventSchema } from './definitions.js';

type ParamType = 'string' | 'integer' | 'boolean';
export interface Param { name: string; in: 'path' | 'query'; type: ParamType; description: string }

export const query = (name: string, type: ParamType, description: string): Param => ({ name, in: 'query', type, description });

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
export const codeText: Readonly<Record<Code, string>> = { 200: 'OK', 201: 'Created', 202: 'Accepted' };

/** "a"/"an" as Kubernetes' GetArticleForNoun chooses it; plural nouns get none. */
function article(noun: string): string {
  if (noun.endsWith('s') && !noun.endsWith('ss')) return ' ';
  return /^[aeiou]/i.test(noun) ? ' an ' : ' a ';
}

/** "status of " for a subresource, nothing for the object itself */
export const of = (sub: string): string => (sub ? `${sub} of ` : '');

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

export interface Operation {
  method: Method;
  id: string;
  description: string;
  tag: string;
  /** with the group-version-kind; absent on discovery operations */
  action?: { name: string; gvk: GroupVersionKind };
  params: readonly Param[];
  /**
   * `patch`: the patch types the body may be, as the API installer lists them: strategic merge only
   * for kinds with Go-declared merge markers, not for custom resources (kubectl reads this list to
   * choose between a strategic and a JSON merge patch)
   */
  body?: { ref: string; patch?: 'strategic' | 'generic'; required: boolean };
  responses: ReadonlyArray<{ code: Code; ref: string }>;
  streams: boolean;
}

export interface PathEntry {
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

export function docKey(group: string, version?: string): string {
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
      body: a.body && {
        ref: a.body === 'object' && objectRef ? objectRef : bodies[a.body],
        ...(a.body === 'patch' ? { patch: k.decodeUnstructured ? 'generic' as const : 'strategic' as const } : {}),
        required: a.body !== 'deleteOptions',
      },
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

export function pathsOf(registry: ApiRegistry, catalog: Catalog): PathEntry[] {
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
