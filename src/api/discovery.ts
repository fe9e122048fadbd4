/**
 * Discovery documents built from the kind registry, as kube-apiserver 1.32 serves them: the legacy
 * ones (/api, /apis, /apis/<group>, /api/v1, /apis/<group>/<version>) and the aggregated
 * apidiscovery v2 list. Keys are created in the Go structs' field order and empty optional fields
 * are left out where Go's `omitempty` leaves them out, so the JSON matches byte for byte.
 */
import { createHash } from 'node:crypto';

import { apiVersionOf, type KindDeclaration } from './kind.js';
import type { ApiRegistry } from './registry/api-registry.js';

export const aggregatedDiscoveryMediaType = 'application/json;g=apidiscovery.orch.io;v=v2;as=APIGroupDiscoveryList';

export interface ServerAddressByClientCIDR { clientCIDR: string; serverAddress: string }
export interface APIVersions { kind: 'APIVersions'; versions: string[]; serverAddressByClientCIDRs: ServerAddressByClientCIDR[] }
export interface GroupVersionForDiscovery { groupVersion: string; version: string }
export interface APIGroup {
  kind?: 'APIGroup';
  apiVersion?: 'v1';
  name: string;
  versions: GroupVersionForDiscovery[];
  preferredVersion: GroupVersionForDiscovery;
}
export interface APIGroupList { kind: 'APIGroupList'; apiVersion: 'v1'; groups: APIGroup[] }
export interface APIResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  group?: string;
  version?: string;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  storageVersionHash?: string;
}
export interface APIResourceList { kind: 'APIResourceList'; apiVersion?: 'v1'; groupVersion: string; resources: APIResource[] }

export interface GroupVersionKind { group: string; version: string; kind: string }
export interface APISubresourceDiscovery { subresource: string; responseKind: GroupVersionKind; verbs: string[] }
export interface APIResourceDiscovery {
  resource: string;
  responseKind: GroupVersionKind;
  scope: 'Cluster' | 'Namespaced';
  singularResource: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  subresources?: APISubresourceDiscovery[];
}
export interface APIVersionDiscovery { version: string; resources: APIResourceDiscovery[]; freshness: 'Current' }
export interface APIGroupDiscovery { metadata: { name?: string; creationTimestamp: null }; versions: APIVersionDiscovery[] }
export interface APIGroupDiscoveryList {
  kind: 'APIGroupDiscoveryList';
  apiVersion: 'apidiscovery.orch.io/v2';
  metadata: Record<string, never>;
  items: APIGroupDiscovery[];
}

/**
 * The verbs each subresource's storage supports: status storage gets and updates (so also patches),
 * the namespace finalize storage only updates.
 */
const subresourceVerbs: Readonly<Record<string, readonly string[]>> = {
  status: ['get', 'patch', 'update'],
  scale: ['get', 'patch', 'update'],
  finalize: ['update'],
};

/** GET /api: the legacy root, always ["v1"]; Kubernetes strips apiVersion from it. */
export function apiVersions(serverAddress: string): APIVersions {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

/** GET /apis: the named groups (the core group lives at /api). */
export function apiGroupList(registry: ApiRegistry): APIGroupList {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: namedGroups(registry).map(([name, versions]) => groupEntry(name, versions)) };
}

/** GET /apis/<group>; undefined if the group is not served. */
export function apiGroup(registry: ApiRegistry, group: string): APIGroup | undefined {
  const versions = group ? registry.groups().get(group) : undefined;
  return versions && { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(group, versions) };
}

/** GET /api/v1 and /apis/<group>/<version>; undefined if not served. */
export function apiResourceList(registry: ApiRegistry, group: string, version: string): APIResourceList | undefined {
  const kinds = registry.inGroupVersion(group, version);
  if (kinds.length === 0) return undefined;
  return {
    kind: 'APIResourceList',
    // Kubernetes keeps the core group's list unversioned (keepUnversioned in discovery/util.go)
    ...(group ? { apiVersion: 'v1' as const } : {}),
    groupVersion: apiVersionOf({ group, version }),
    resources: apiResources(kinds),
  };
}

/** The aggregated document served at /api (the core group alone) or /apis (every named group). */
export function aggregatedDiscovery(registry: ApiRegistry, root: 'api' | 'apis'): APIGroupDiscoveryList {
  const groups = root === 'apis' ? namedGroups(registry) : [...registry.groups()].filter(([name]) => name === '');
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: 'apidiscovery.orch.io/v2',
    metadata: {},
    items: groups.map(([name, versions]) => ({
      // ObjectMeta: an empty name is omitted, a zero creationTimestamp is always written as null
      metadata: name ? { name, creationTimestamp: null } : { creationTimestamp: null },
      versions: versions.map((version) => ({
        version,
        resources: sortBy(registry.inGroupVersion(name, version), (k) => k.resource).map(resourceDiscovery),
        freshness: 'Current' as const,
      })),
    })),
  };
}

/**
 * The strong ETag Kubernetes sets on aggregated discovery: SHA-512 of the list's JSON in upper-case
 * hex, quoted. Kubernetes hashes the list before the encoder stamps kind and apiVersion, so they are
 * left out here too and an equal document gets the same tag from both servers.
 */
export function discoveryEtag(doc: object): string {
  const body: Record<string, unknown> = { ...doc };
  delete body.kind;
  delete body.apiVersion;
  return `"${createHash('sha512').update(JSON.stringify(body)).digest('hex').toUpperCase()}"`;
}

/**
 * Kubernetes' StorageVersionHash: base64 of the first 8 bytes of SHA-256 of "<group>/<version>/<kind>"
 * of the version a resource is stored in. Here that is the served version. (Kubernetes stores
 * events.k8s.io Events as core v1 Events, so it reports the hash of "/v1/Event" for them.)
 */
function storageVersionHash(k: KindDeclaration): string {
  return createHash('sha256').update(`${k.group}/${k.version}/${k.kind}`).digest().subarray(0, 8).toString('base64');
}

/** Resources and subresources as one list sorted by path, the order in which Kubernetes installs them. */
function apiResources(kinds: readonly KindDeclaration[]): APIResource[] {
  const resources = kinds.flatMap((k): APIResource[] => [
    {
      name: k.resource,
      singularName: k.singular,
      namespaced: k.namespaced,
      kind: k.kind,
      verbs: sortedVerbs(k.verbs),
      ...namesAndCategories(k),
      // kinds that are never stored have no storage version
      ...(k.virtualCreate ? {} : { storageVersionHash: storageVersionHash(k) }),
    },
    // subresource storage names no singular, short names, categories or storage version
    ...subresourcesOf(k).map((sub) => ({
      name: `${k.resource}/${sub.name}`, singularName: '', namespaced: k.namespaced,
      ...(sub.kind ? { group: sub.kind.group, version: sub.kind.version } : {}),
      kind: sub.kind?.kind ?? k.kind, verbs: sub.verbs,
    })),
  ]);
  return sortBy(resources, (r) => r.name);
}

function resourceDiscovery(k: KindDeclaration): APIResourceDiscovery {
  const subresources = subresourcesOf(k);
  return {
    resource: k.resource,
    responseKind: responseKind(k),
    scope: k.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: k.singular,
    verbs: sortedVerbs(k.verbs),
    ...namesAndCategories(k),
    ...(subresources.length > 0
      ? {
        subresources: subresources.map((sub) => ({
          subresource: sub.name,
          responseKind: sub.kind ? { group: sub.kind.group, version: sub.kind.version, kind: sub.kind.kind } : responseKind(k),
          verbs: sub.verbs,
        })),
      }
      : {}),
  };
}

/**
 * Kubernetes copies group and version from the APIResource, which are empty unless the storage
 * declares another group-version-kind (as scale subresources do), so only kind is filled in.
 */
function responseKind(k: KindDeclaration): GroupVersionKind {
  return { group: '', version: '', kind: k.kind };
}

function namesAndCategories(k: KindDeclaration): Pick<APIResource, 'shortNames' | 'categories'> {
  return {
    ...(k.shortNames.length > 0 ? { shortNames: [...k.shortNames] } : {}),
    ...(k.categories && k.categories.length > 0 ? { categories: [...k.categories] } : {}),
  };
}

interface Subresource {
  name: string;
  verbs: string[];
  /** the kind a subresource of another group-version-kind takes and answers (a ServiceAccount's TokenRequest) */
  kind?: KindDeclaration;
}

/** Subresources by name: those that read and write the object, and those that only create. */
export function subresourcesOf(k: KindDeclaration): Subresource[] {
  return [
    ...Object.keys(k.subresources ?? {}).map((name) => ({ name, verbs: verbsOf(name), kind: k.subresourceViews?.[name]?.kind })),
    ...Object.entries(k.subresourceCreate ?? {}).map(([name, sub]) => ({ name, verbs: ['create'], kind: sub.kinds[0] })),
  ].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function verbsOf(subresource: string): string[] {
  const verbs = subresourceVerbs[subresource];
  if (!verbs) throw new Error(`no discovery verbs declared for subresource ${JSON.stringify(subresource)}`);
  return [...verbs];
}

/** Kubernetes lists verbs sorted (sort.Strings), whatever order the storage supports them in. */
function sortedVerbs(verbs: readonly string[]): string[] {
  return [...verbs].sort();
}

/** Groups other than the core group, by name; versions as declared, the first preferred. */
function namedGroups(registry: ApiRegistry): [string, string[]][] {
  return sortByName([...registry.groups()].filter(([name]) => name !== ''));
}

function groupEntry(name: string, versions: readonly string[]): APIGroup {
  const entries = versions.map((version) => ({ groupVersion: `${name}/${version}`, version }));
  return { name, versions: entries, preferredVersion: entries[0] };
}

/**
 * Kubernetes orders groups by APIService priority and breaks ties by name; the registry declares no
 * priorities, so name alone decides.
 */
function sortByName<T extends [string, unknown]>(groups: T[]): T[] {
  return sortBy(groups, ([name]) => name);
}

/** Sorts by a string key as Go's sort.Strings does (byte order, which UTF-16 order equals for ASCII names). */
function sortBy<T>(items: readonly T[], key: (item: T) => string): T[] {
  return [...items].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}
