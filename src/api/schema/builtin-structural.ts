/**
 * Built-in kinds declare their schemas in the structural schema language custom resources use
 * (OpenAPI v3, ./structural.ts), with the `s.*` builders below. Some facts of a Go type are not
 * OpenAPI's to carry, yet the codecs and patch machinery need them; they ride on the node as the
 * typed fields of BuiltinStructural, which OpenAPI output never writes as they are.
 */
import type { ListType, MapType } from '../schema.js';
import type { Structural } from './structural.js';

export type PatchStrategy = 'merge' | 'replace' | 'retainKeys' | 'merge,retainKeys';

export interface BuiltinStructural extends Structural {
  properties?: Record<string, BuiltinStructural>;
  additionalProperties?: BuiltinStructural | boolean;
  items?: BuiltinStructural;
  /** an object's Go type name: OpenAPI definition names, `$ref`s and decode error messages */
  goName?: string;
  /** an object's protobuf field numbers, as in Kubernetes' generated.proto for its message */
  proto?: Readonly<Record<string, number>>;
  /** an object's optional fields whose empty list or map is kept (StructFacts.keepsEmpty) */
  keepsEmpty?: string[];
  /** an object's struct and time fields Go holds by pointer (StructFacts.pointers) */
  pointers?: string[];
  /** an object's fields whose json tag has no omitempty (StructFacts.withoutOmitEmpty) */
  withoutOmitEmpty?: string[];
  /**
   * a Go pointer (`*string`, `*int32`): the protobuf codec writes it only when set and keeps a set
   * zero value, where a plain field's zero value is omitted as Go's `omitempty` omits it
   */
  pointer?: true;
  /**
   * the Go type behind a string: metav1.Time and MicroTime (both `format: date-time`, as Kubernetes
   * publishes them, but of second and microsecond precision) and []byte (`format: byte`)
   */
  goType?: 'Time' | 'MicroTime' | '[]byte';
  /** strategic-merge-patch markers, Kubernetes' `patchStrategy` / `patchMergeKey` tags */
  patchStrategy?: PatchStrategy;
  patchMergeKey?: string;
}

/** What a struct's Go declaration says beyond its fields. */
export interface StructFacts {
  proto?: Readonly<Record<string, number>>;
  /** fields Kubernetes' OpenAPI lists as required (those its Go type serializes without omitempty) */
  required?: readonly string[];
  /** `+structType=atomic`: the struct is replaced whole by apply */
  atomic?: true;
  /** optional fields whose empty list or map is kept (see StructSchema.keepsEmpty) */
  keepsEmpty?: readonly string[];
  /**
   * struct fields Go holds by pointer (`Series *EventSeries`, `AcquireTime *metav1.MicroTime`):
   * absent until set, where a struct or a time held by value is always there, even empty or null
   * (see StructSchema.heldByValue, StructSchema.writesZero)
   */
  pointers?: readonly string[];
  /**
   * optional fields whose json tag has no omitempty (`ReportingController string
   * json:"reportingComponent"`): Go writes their zero value (`""`, `0`, `null`) when unset, and
   * keeps an empty list or map a client sent. Required fields are written so too.
   */
  withoutOmitEmpty?: readonly string[];
}

interface ListPatch { strategy: PatchStrategy; mergeKey?: string }

function described<T extends BuiltinStructural>(node: T, description: string | undefined): T {
  return description === undefined ? node : { ...node, description };
}

function list(items: BuiltinStructural, listType: ListType, description: string | undefined, patch: ListPatch | undefined, keys?: readonly string[]): BuiltinStructural {
  const node: BuiltinStructural = { type: 'array', items, listType };
  if (keys) node.listMapKeys = [...keys];
  if (patch) node.patchStrategy = patch.strategy;
  if (patch?.mergeKey !== undefined) node.patchMergeKey = patch.mergeKey;
  return described(node, description);
}

/** Builders that keep declarations short and readable; each returns a new node. */
export const s = {
  string: (description?: string): BuiltinStructural => described({ type: 'string' }, description),
  boolean: (description?: string): BuiltinStructural => described({ type: 'boolean' }, description),
  int32: (description?: string): BuiltinStructural => described({ type: 'integer', format: 'int32' }, description),
  int64: (description?: string): BuiltinStructural => described({ type: 'integer', format: 'int64' }, description),
  time: (description?: string): BuiltinStructural => described({ type: 'string', format: 'date-time', goType: 'Time' }, description),
  microTime: (description?: string): BuiltinStructural => described({ type: 'string', format: 'date-time', goType: 'MicroTime' }, description),
  bytes: (description?: string): BuiltinStructural => described({ type: 'string', format: 'byte', goType: '[]byte' }, description),
  /** any JSON value (FieldsV1, RawExtension's content): an object without declared fields */
  any: (description?: string): BuiltinStructural => described({ type: 'object' }, description),
  /** Go pointers to a string or an int32 (see BuiltinStructural.pointer) */
  stringPointer: (description?: string): BuiltinStructural => described({ type: 'string', pointer: true }, description),
  int32Pointer: (description?: string): BuiltinStructural => described({ type: 'integer', format: 'int32', pointer: true }, description),
  map: (values: BuiltinStructural, description?: string, mapType: MapType = 'granular'): BuiltinStructural =>
    described({ type: 'object', additionalProperties: values, ...(mapType === 'atomic' ? { mapType } : {}) }, description),
  struct: (goName: string, fields: Record<string, BuiltinStructural>, description?: string, facts: StructFacts = {}): BuiltinStructural => {
    const node: BuiltinStructural = { type: 'object', goName, properties: fields };
    if (facts.required) node.required = [...facts.required];
    if (facts.keepsEmpty) node.keepsEmpty = [...facts.keepsEmpty];
    if (facts.pointers) node.pointers = [...facts.pointers];
    if (facts.withoutOmitEmpty) node.withoutOmitEmpty = [...facts.withoutOmitEmpty];
    if (facts.atomic) node.mapType = 'atomic';
    if (facts.proto) node.proto = facts.proto;
    return described(node, description);
  },
  atomicList: (items: BuiltinStructural, description?: string, patch?: ListPatch): BuiltinStructural => list(items, 'atomic', description, patch),
  setList: (items: BuiltinStructural, description?: string, patch?: ListPatch): BuiltinStructural => list(items, 'set', description, patch),
  mapList: (items: BuiltinStructural, keys: readonly string[], description?: string, patch?: ListPatch): BuiltinStructural =>
    list(items, 'map', description, patch, keys),
};
