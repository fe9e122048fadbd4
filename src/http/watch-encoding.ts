/**
 * How a watch's events are written for its client: in the negotiated encoding (JSON lines,
 * protobuf frames, a CBOR sequence) and representation (the kind's objects, Tables,
 * PartialObjectMetadata); the ERROR event that ends a stream; and the initial-events-end
 * bookmark's annotations, with the list blueprint client-go's watch-list decodes.
 */
import { apiVersionOf, type KindDeclaration } from '../api/kind.js';
import { listSchemaOf, partialObjectMetadataListSchema, partialObjectMetadataSchema, statusSchema, type KObject } from '../api/meta.js';
import { s, type StructSchema } from '../api/schema.js';
import { encodeCbor } from '../codec/cbor.js';
import { partialObjectMetadataListOf, partialObjectMetadataOf, type MetaGroupVersion } from '../codec/partial-metadata.js';
import { encodeEnvelope, encodeWatchFrame } from '../codec/proto/encode.js';
import { tableOf, type TableRequest } from '../codec/table.js';
import type { StatusObject } from '../status/status-error.js';
import { jsonFrame, type Frame, type WatchEncoding, type WatchView } from '../watch/frames.js';
import type { WatchSpec } from '../watch/watch-hub.js';

/** A representation other than the kind's objects that a watch asked for. */
export type WatchRepresentation =
  | { as: 'Table'; table: TableRequest }
  | { as: 'PartialObjectMetadata'; gv: MetaGroupVersion };

const watchEventSchemas = new WeakMap<StructSchema, StructSchema>();

/** WatchEvent {type, object} around a message, so CBOR knows the object's byte fields. */
function watchEventSchemaOf(object: StructSchema): StructSchema {
  let schema = watchEventSchemas.get(object);
  if (!schema) watchEventSchemas.set(object, (schema = s.struct('WatchEvent', { type: s.string(), object })));
  return schema;
}

/** A stored object as a declaration that is not the storage version serves it (an alias group, another version). */
export interface VersionView { object(stored: Readonly<KObject>): Readonly<KObject> }

/** The view of a watch: the declaration's version of each stored object, then the representation asked for. */
function viewOf(kind: KindDeclaration, representation: WatchRepresentation | undefined, version: VersionView | undefined): WatchView | undefined {
  const served = version ? (o: Readonly<KObject>) => version.object(o) : (o: Readonly<KObject>) => o;
  const versionKey = version ? `|${apiVersionOf(kind)}` : '';
  if (!representation) {
    return version && { key: `version:${apiVersionOf(kind)}`, perObject: true, convert: (o) => served(o) as Record<string, unknown> };
  }
  if (representation.as === 'Table') {
    const { table } = representation;
    return {
      key: `table:${table.group}/${table.version}:${table.includeObject}${versionKey}`,
      perObject: false,
      // each event's object a Table of one row, as `kubectl get -w` asks
      convert: (o) => tableOf(kind, [served(o)], o.metadata.resourceVersion ? { resourceVersion: o.metadata.resourceVersion } : {}, table, Date.now()) as Record<string, unknown>,
    };
  }
  const { gv } = representation;
  return { key: `partial:${gv.group}/${gv.version}${versionKey}`, perObject: true, convert: (o) => partialObjectMetadataOf(served(o), gv) };
}

/** The encoders of a watch's event objects (bookmarks included), its view applied. */
export function watchEncoders(kind: KindDeclaration, encoding: WatchEncoding, representation?: WatchRepresentation, version?: VersionView): Pick<WatchSpec, 'typeMeta' | 'encoding' | 'envelope' | 'view' | 'cbor'> {
  const typeMeta = { kind: kind.kind, apiVersion: apiVersionOf(kind) };
  const view = viewOf(kind, representation, version);
  const partial = representation?.as === 'PartialObjectMetadata' ? representation.gv : undefined;
  const schema = partial ? partialObjectMetadataSchema : kind.schema;
  const convert = (o: Readonly<KObject>): Record<string, unknown> => (view ? view.convert(o) : o as Record<string, unknown>);
  const envelopeTypeMeta = partial ? { apiVersion: `${partial.group}/${partial.version}`, kind: 'PartialObjectMetadata' } : typeMeta;
  return {
    typeMeta, encoding, view,
    envelope: encoding === 'protobuf' ? (o) => encodeEnvelope(convert(o), schema, envelopeTypeMeta) : undefined,
    cbor: encoding === 'cbor' ? (type, o) => encodeCbor({ type, object: convert(o) }, watchEventSchemaOf(schema)) : undefined,
  };
}

/** The ERROR event that ends a stream (a Status is never converted). */
export function errorFrame(encoding: WatchEncoding, status: StatusObject): Frame {
  if (encoding === 'protobuf') {
    return encodeWatchFrame('ERROR', encodeEnvelope(status as unknown as Record<string, unknown>, statusSchema, { apiVersion: 'v1', kind: 'Status' }));
  }
  if (encoding === 'cbor') return encodeCbor({ type: 'ERROR', object: status });
  return jsonFrame('ERROR', JSON.stringify(status));
}

/**
 * The empty list of the watch's kind (a PartialObjectMetadataList for such a watch; a Table watch
 * gets its kind's list, Table having no list form) encoded as a list response of the watch's
 * encoding, then base64: Kubernetes 1.32's `kubernetes.io/initial-events-list-blueprint`. Its
 * items are null, as Go encodes the empty list kube-apiserver converts.
 */
function listBlueprint(kind: KindDeclaration, encoding: WatchEncoding, representation: WatchRepresentation | undefined): string {
  const partial = representation?.as === 'PartialObjectMetadata' ? representation.gv : undefined;
  const empty: Record<string, unknown> = partial
    ? { ...partialObjectMetadataListOf([], {}, partial), items: null }
    : { kind: kind.listKind, apiVersion: apiVersionOf(kind), metadata: {}, items: null };
  const schema = partial ? partialObjectMetadataListSchema : listSchemaOf(kind.schema);
  const bytes = encoding === 'protobuf' ? encodeEnvelope(empty, schema, { apiVersion: String(empty.apiVersion), kind: String(empty.kind) })
    : encoding === 'cbor' ? encodeCbor(empty, schema)
      : Buffer.from(`${JSON.stringify(empty)}\n`);
  return bytes.toString('base64');
}

/**
 * The annotations of the bookmark that ends a watch-list's initial events: ours, the name client-go
 * hard-codes, and the list blueprint client-go's typed List over watch-list requires (key order as
 * Go writes a map).
 */
export function initialEventsEndAnnotations(kind: KindDeclaration, encoding: WatchEncoding, representation?: WatchRepresentation): Record<string, string> {
  return {
    'k8s.io/initial-events-end': 'true',
    'kubernetes.io/initial-events-list-blueprint': listBlueprint(kind, encoding, representation),
    'orch.io/initial-events-end': 'true',
  };
}
