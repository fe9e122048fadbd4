/**
 * The shape of a watch's events: encoding (JSON lines, protobuf frames, CBOR items) and view (the
 * kind's objects, another version's or alias group's, Tables, PartialObjectMetadata). A shape is
 * data (`WatchShape`) so the encoder pool can rebuild its encoders in a worker, and its `key`
 * names the frames every watcher of that shape shares. Both the front thread (bookmarks, catch-up)
 * and the pool workers (live events) encode through `watchEncoders`: the same code, the same bytes.
 */
import { apiVersionOf, type KindDeclaration } from '../api/kind.js';
import { partialObjectMetadataSchema, type KObject } from '../api/meta.js';
import { partialObjectMetadataOf, type MetaGroupVersion } from '../codec/partial-metadata.js';
import { encodeEnvelope } from '../codec/proto/encode.js';
import { serializers, type Serializer } from '../codec/serializers.js';
import { tableOf, type TableRequest } from '../codec/table.js';
import type { WatchEncoding, WatchView } from './frames.js';
import type { WatchSpec } from './watcher.js';

const cborStream = serializers.cbor.stream as NonNullable<Serializer['stream']>;

export type WatchEncoders = Pick<WatchSpec, 'typeMeta' | 'encoding' | 'envelope' | 'view' | 'cbor'>;

/** What a kind must declare for its watch events to be encoded (a runtime kind's, sent to the pool as data). */
export type EncodedKind = Pick<KindDeclaration, 'group' | 'version' | 'kind' | 'schema'> & Partial<Pick<KindDeclaration, 'table' | 'conversion' | 'resource'>>;

/**
 * A watch's shape as data: the pool rebuilds its encoders from the served declaration (found by
 * apiVersion and resource in the worker's catalog of built-in kinds) or, for a runtime kind
 * watched without a view, from the storage kind's schema sent with the task.
 */
export interface WatchShape {
  key: string;
  encoding: WatchEncoding;
  representation?: WatchRepresentation;
  /** the served declaration converts stored objects (an alias group, another version) */
  converted: boolean;
  served: { apiVersion: string; resource: string };
}

/** A representation other than the kind's objects that a watch asked for. */
export type WatchRepresentation =
  | { as: 'Table'; table: TableRequest }
  | { as: 'PartialObjectMetadata'; gv: MetaGroupVersion };

/** A stored object as a declaration that is not the storage version serves it (an alias group, another version). */
export interface VersionView { object(stored: Readonly<KObject>): Readonly<KObject> }

/** The key of a view: watchers whose views have equal keys share its frames. */
function viewKeyOf(kind: EncodedKind, representation: WatchRepresentation | undefined, converted: boolean): string | undefined {
  const versionKey = converted ? `|${apiVersionOf(kind)}` : '';
  if (!representation) return converted ? `version:${apiVersionOf(kind)}` : undefined;
  if (representation.as === 'Table') {
    const { table } = representation;
    return `table:${table.group}/${table.version}:${table.includeObject}${versionKey}`;
  }
  return `partial:${representation.gv.group}/${representation.gv.version}${versionKey}`;
}

/** A watch's shape, as data for the encoder pool. */
export function shapeOf(kind: KindDeclaration, encoding: WatchEncoding, representation: WatchRepresentation | undefined, converted: boolean): WatchShape {
  return {
    key: `${encoding}|${viewKeyOf(kind, representation, converted) ?? ''}`,
    encoding, representation, converted,
    served: { apiVersion: apiVersionOf(kind), resource: kind.resource },
  };
}

/** The view of a watch: the declaration's version of each stored object, then the representation asked for. */
function viewOf(kind: EncodedKind, representation: WatchRepresentation | undefined, version: VersionView | undefined): WatchView | undefined {
  const served = version ? (o: Readonly<KObject>) => version.object(o) : (o: Readonly<KObject>) => o;
  const key = viewKeyOf(kind, representation, version !== undefined) as string;
  if (!representation) {
    return version && { key, perObject: true, convert: (o) => served(o) as Record<string, unknown> };
  }
  if (representation.as === 'Table') {
    const { table } = representation;
    return {
      key,
      perObject: false,
      // each event's object a Table of one row, as `kubectl get -w` asks
      convert: (o) => tableOf(kind, [served(o)], o.metadata.resourceVersion ? { resourceVersion: o.metadata.resourceVersion } : {}, table, Date.now()) as Record<string, unknown>,
    };
  }
  const { gv } = representation;
  return { key, perObject: true, convert: (o) => partialObjectMetadataOf(served(o), gv) };
}

/** The encoders of a watch's event objects (bookmarks included), its view applied. */
export function watchEncoders(kind: EncodedKind, encoding: WatchEncoding, representation?: WatchRepresentation, version?: VersionView): WatchEncoders {
  const typeMeta = { kind: kind.kind, apiVersion: apiVersionOf(kind) };
  const view = viewOf(kind, representation, version);
  const partial = representation?.as === 'PartialObjectMetadata' ? representation.gv : undefined;
  const schema = partial ? partialObjectMetadataSchema : kind.schema;
  const convert = (o: Readonly<KObject>): Record<string, unknown> => (view ? view.convert(o) : o as Record<string, unknown>);
  const envelopeTypeMeta = partial ? { apiVersion: `${partial.group}/${partial.version}`, kind: 'PartialObjectMetadata' } : typeMeta;
  return {
    typeMeta, encoding, view,
    envelope: encoding === 'protobuf' ? (o) => encodeEnvelope(convert(o), schema, envelopeTypeMeta) : undefined,
    cbor: encoding === 'cbor' ? (type, o) => cborStream.frame(type, convert(o), schema, envelopeTypeMeta) as Buffer : undefined,
  };
}

