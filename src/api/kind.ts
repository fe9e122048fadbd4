/**
 * A kind's behaviour, declared once. Routing, discovery, decoding, validation, storage, field
 * selectors and managed fields all read this; none of them special-cases a kind.
 */
import type { FieldError } from '../status/status-error.js';
import type { GarbageCollectionPolicy, PropagationOptions } from './deletion-policy.js';
import type { KObject } from './meta.js';
import type { StructSchema } from './schema.js';
import type { BuiltinStructural } from './schema/builtin-structural.js';
import type { Structural } from './schema/structural.js';
import { internalStructOf } from './schema/to-internal.js';
import type { TableColumn } from './printing.js';
import type { NameRule } from './validation/names.js';
import type { Services } from './services.js';
import type { UserInfo } from '../auth/user.js';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';
export const allVerbs: readonly Verb[] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export interface StrategyContext {
  /** wall-clock milliseconds of the request, so that one request stamps one time */
  now: number;
}

/**
 * How a view of stored objects (another version, or the same version under an alias group)
 * converts to and from the storage version: the storage version is the hub.
 */
export interface Conversion {
  fromStorage(stored: KObject): KObject;
  toStorage(served: KObject): KObject;
  /**
   * A conversion that calls out (a CRD's conversion webhook) converts batches ahead of use:
   * `fromStorage` / `toStorage` then answer for the objects prepared, from what it converted.
   */
  prepare?(objects: readonly KObject[], direction: 'fromStorage' | 'toStorage'): Promise<void>;
}

/** What a create served without storage (a review, a token request) is answered with. */
export interface VirtualCreateContext extends StrategyContext {
  /** who asks (after impersonation) */
  user: UserInfo | undefined;
  /** the URL's namespace, for namespaced subresources */
  namespace?: string;
  dryRun: boolean;
  /** warnings for the response's Warning headers */
  warnings: string[];
  /** the server's parts a virtual kind answers with, looked up by typed key */
  services: Services;
}

/** A create on a subresource (`serviceaccounts/{name}/token`): the kinds it accepts and what it answers. */
export interface SubresourceCreate {
  /** the body's kind, first the served name, then aliases a client may send */
  kinds: readonly KindDeclaration[];
  create(parent: Readonly<KObject>, body: KObject, ctx: VirtualCreateContext): KObject | Promise<KObject>;
}

/** A subresource served as another kind (see KindDeclaration.subresourceViews). */
export interface SubresourceView {
  /** the kind a body must be, and the response is */
  kind: KindDeclaration;
  view(obj: Readonly<KObject>): KObject;
}

export interface KindDeclaration {
  group: string;             // '' for the core group
  /**
   * The group of the internal type Kubernetes validates, when it is another group's: the first
   * kind the scheme knows the type by names it in Invalid (422) errors. Events of events.k8s.io
   * are core Events inside, so kube-apiserver says `Event "x" is invalid`, without a group.
   */
  internalGroup?: string;
  version: string;
  /**
   * The stored resource this declaration serves, when it is a view of another declaration's
   * objects (an alias group, another version); the objects convert through `conversion`.
   */
  storage?: { group: string; resource: string };
  conversion?: Conversion;
  kind: string;
  listKind: string;
  resource: string;          // plural, as in URLs
  singular: string;
  shortNames: readonly string[];
  categories?: readonly string[];
  namespaced: boolean;
  verbs: readonly Verb[];
  /**
   * The kind's schema in the structural schema language (OpenAPI v3 as CRDs write it): built-ins
   * declare it with the `s.*` builders (./schema/builtin-structural.ts), custom resources read it
   * from their CRD.
   */
  structural: Structural;
  /** the internal form every generic layer reads, derived from `structural` once */
  schema: StructSchema;
  nameRule: NameRule;
  /** DELETE answers with the deleted object (true) or a Success Status (false), per kind in Kubernetes */
  returnDeletedObject: boolean;
  /** PUT of a missing object creates it (answering 201) */
  allowCreateOnUpdate: boolean;
  /** false: a PUT must carry the resourceVersion it replaces (Kubernetes' AllowUnconditionalUpdate; default true) */
  allowUnconditionalUpdate?: boolean;
  /** metadata.generation is 1 at create and grows with each change of `spec` (Kubernetes' strategies of kinds with a status) */
  tracksGeneration?: boolean;
  /** storage lifetime after each write (a lease in etcd terms), e.g. Events' --event-ttl */
  ttlMs?: (config: { eventTtlMs: number }) => number;
  /** Fields a field selector may name besides metadata.name / metadata.namespace */
  fieldLabels: Readonly<Record<string, (obj: KObject) => string | undefined>>;
  /** the error text for a field selector naming an unsupported field, as the kind's conversion func words it */
  unknownFieldLabelMessage(field: string): string;
  /**
   * Kubernetes' SetDefaults_* and decode-time conversions, applied to every object a write
   * submits before its field ownership is recorded: the writer owns what defaulting sets
   */
  setDefaults?(obj: KObject): void;
  /**
   * The strategy's PrepareForCreate, after ownership is recorded: what it sets (a namespace's
   * finalizer, a reset status) is the server's, owned by no writer (server-owned metadata is
   * set by the registry)
   */
  prepareForCreate?(obj: KObject, ctx: StrategyContext): void;
  /** The strategy's PrepareForUpdate, likewise; `old` is the stored object */
  prepareForUpdate?(obj: KObject, old: KObject, ctx: StrategyContext): void;
  /**
   * Subresources served below the object (`status`, `finalize`): each turns the submitted object
   * and the stored one into what is written, so that a subresource changes only its own part.
   */
  subresources?: Readonly<Record<string, (submitted: KObject, stored: KObject) => KObject>>;
  /**
   * Subresources read and written in another kind's representation (a custom resource's `scale`
   * as autoscaling/v1 Scale): `view` renders the object; writes go through `subresources[name]`.
   */
  subresourceViews?: Readonly<Record<string, SubresourceView>>;
  /** Creates served without storage (TokenReview, SelfSubjectReview): the answer to a POST */
  virtualCreate?(body: KObject, ctx: VirtualCreateContext): KObject | Promise<KObject>;
  /** Creates on subresources of a stored object (a ServiceAccount's `token`) */
  subresourceCreate?: Readonly<Record<string, SubresourceCreate>>;
  /** Lifecycle beyond metadata.finalizers, such as a namespace's spec.finalizers */
  deletion?: {
    /** called when deletion is first requested (e.g. phase Terminating) */
    markTerminating(obj: KObject): void;
    /** true while the object must stay although metadata.finalizers is empty */
    blocksRemoval(obj: KObject): boolean;
    /** the garbage collector's finalizers after the first DELETE, where the kind has its own rule (namespaces) */
    finalizersOnFirstDelete?(finalizers: readonly string[], options: PropagationOptions): readonly string[];
  };
  /** what a DELETE naming no propagation does with dependents (DefaultGarbageCollectionPolicy); `DeleteDependents` when absent */
  garbageCollectionPolicy?: GarbageCollectionPolicy;
  /** server-side printing columns (kubectl get); the default Name / Created At when absent */
  table?: readonly TableColumn[];
  validate(obj: KObject): FieldError[];
  validateUpdate(obj: KObject, old: KObject): FieldError[];
  /**
   * Custom resources: `structural` is published in OpenAPI as written (one definition, named by
   * the reversed group), not as Go types named by their packages.
   */
  openApiAsWritten?: true;
  /** Custom resources: bodies decode unstructured (pruning and defaulting) instead of through the typed decoder */
  decodeUnstructured?(raw: Record<string, unknown>): { object: KObject; unknownFields: string[] };
  /** false: Protobuf is neither served nor accepted (custom resources, as in Kubernetes) */
  protobuf?: boolean;
  /** set on a deprecated version: the Warning every request to it carries */
  deprecationWarning?: string;
}

/** A built-in kind's declaration: its internal schema derived from the structural one it declares. */
export function builtinKind(declaration: Omit<KindDeclaration, 'structural' | 'schema'> & { structural: BuiltinStructural }): KindDeclaration {
  return { ...declaration, schema: internalStructOf(declaration.structural) };
}

export function apiVersionOf(k: Pick<KindDeclaration, 'group' | 'version'>): string {
  return k.group ? `${k.group}/${k.version}` : k.version;
}

/**
 * The storage table (and key prefix) of a kind's objects: the resource, qualified by its group
 * for named groups (`serviceaccounts`, `events.events.orch.io`), as Kubernetes prints a
 * GroupResource. Two groups may serve resources of one name; resource names never hold a dot.
 */
export function storageResourceOf(k: Pick<KindDeclaration, 'group' | 'resource' | 'storage'>): string {
  const { group, resource } = k.storage ?? k;
  return group ? `${resource}.${group}` : resource;
}

/** The message DefaultMetaV1FieldSelectorConversion returns for kinds without their own field labels. */
export function defaultUnknownFieldLabelMessage(field: string): string {
  return `${JSON.stringify(field)} is not a known field selector: only "metadata.name", "metadata.namespace"`;
}

export function fieldLabelNotSupported(field: string): string {
  return `field label not supported: ${field}`;
}
