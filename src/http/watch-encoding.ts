/**
 * What a watch writes besides its events (whose shapes are in src/watch/shape.ts): the ERROR event
 * that ends a stream, and the initial-events-end bookmark's annotations, with the list blueprint
 * client-go's watch-list decodes.
 */
import { apiVersionOf, type KindDeclaration } from '../api/kind.js';
import { listSchemaOf, partialObjectMetadataListSchema, statusSchema } from '../api/meta.js';
import { partialObjectMetadataListOf } from '../codec/partial-metadata.js';
import { serializers, type Serializer } from '../codec/serializers.js';
import type { StatusObject } from '../status/status-error.js';
import type { Frame, WatchEncoding } from '../watch/frames.js';
import type { WatchRepresentation } from '../watch/shape.js';

/** The ERROR event that ends a stream (a Status is never converted). */
export function errorFrame(encoding: WatchEncoding, status: StatusObject): Frame {
  const stream = serializers[encoding].stream as NonNullable<Serializer['stream']>;
  return stream.frame('ERROR', status as unknown as Record<string, unknown>, statusSchema, { apiVersion: 'v1', kind: 'Status' });
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
  const bytes = serializers[encoding].encode(empty, schema, { apiVersion: String(empty.apiVersion), kind: String(empty.kind) }, false);
  return Buffer.from(bytes).toString('base64');
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
