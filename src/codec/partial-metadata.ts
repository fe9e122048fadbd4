/**
 * PartialObjectMetadata: any object as its metadata alone, which metadata-only clients
 * (client-go's metadata client, controller-runtime) ask for with
 * `as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1`. As kube-apiserver's asPartialObjectMetadata,
 * the whole ObjectMeta is kept, and every item of a list names its own kind.
 */
import type { KindDeclaration } from '../api/kind.js';
import type { KObject } from '../api/meta.js';
import { StatusError } from '../status/status-error.js';

export interface MetaGroupVersion { group: string; version: string }

export function partialObjectMetadataOf(object: Readonly<KObject>, gv: MetaGroupVersion): KObject {
  return { kind: 'PartialObjectMetadata', apiVersion: `${gv.group}/${gv.version}`, metadata: object.metadata };
}

export function partialObjectMetadataListOf(objects: readonly Readonly<KObject>[], listMeta: Record<string, unknown>, gv: MetaGroupVersion): Record<string, unknown> {
  return {
    kind: 'PartialObjectMetadataList', apiVersion: `${gv.group}/${gv.version}`, metadata: listMeta,
    items: objects.map((o) => partialObjectMetadataOf(o, gv)),
  };
}

/**
 * The Go type kube-apiserver names in its 406 (`%T` of the internal object): the built-in kinds,
 * Events included, live in its internal `core` package; another group's in the package named by
 * its first label.
 */
function internalGoType(kind: KindDeclaration, list: boolean): string {
  const pkg = kind.group === '' || kind.group.startsWith('events.') ? 'core' : kind.group.split('.')[0];
  return `*${pkg}.${list ? kind.listKind : kind.kind}`;
}

/** as=PartialObjectMetadata where the answer is a list (a list, or a deletecollection). */
export function partialObjectMetadataOfList(kind: KindDeclaration): StatusError {
  return notAcceptable(`you requested PartialObjectMetadata, but the requested object is a list (${internalGoType(kind, true)})`);
}

/** as=PartialObjectMetadataList where the answer is one object (a get, a write, a watch event). */
export function partialObjectMetadataListOfObject(kind: KindDeclaration): StatusError {
  return notAcceptable(`you requested PartialObjectMetadataList, but the requested object is not a list (${internalGoType(kind, false)})`);
}

function notAcceptable(message: string): StatusError {
  return new StatusError(406, 'NotAcceptable', message);
}
