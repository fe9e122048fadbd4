/**
 * The wire encodings this server speaks, and their media types, in preference order when the
 * client does not care. Protobuf is spoken under our name and under Kubernetes' (which real
 * client-go and kubectl send): the bytes, envelope and magic prefix are the same; a response
 * names the type the client asked for. CBOR is alpha and offered only behind its feature gate.
 */
export type Encoding = 'json' | 'yaml' | 'protobuf' | 'cbor';

export interface MediaTypeOffer { mediaType: string; encoding: Encoding }

const allEncodings: ReadonlyArray<MediaTypeOffer & { gate?: string }> = [
  { mediaType: 'application/json', encoding: 'json' },
  { mediaType: 'application/yaml', encoding: 'yaml' },
  { mediaType: 'application/vnd.orch.protobuf', encoding: 'protobuf' },
  { mediaType: 'application/vnd.kubernetes.protobuf', encoding: 'protobuf' },
  { mediaType: 'application/cbor', encoding: 'cbor', gate: 'CBORServingAndStorage' },
  // a watch in CBOR is a sequence of CBOR items; clients may ask for it by this name
  { mediaType: 'application/cbor-seq', encoding: 'cbor', gate: 'CBORServingAndStorage' },
];

/** The encodings offered under the given feature gates. */
export function offeredEncodings(gateEnabled: (gate: string) => boolean): MediaTypeOffer[] {
  return allEncodings.filter((e) => !e.gate || gateEnabled(e.gate)).map(({ mediaType, encoding }) => ({ mediaType, encoding }));
}

/** The encodings every server offers, whatever its gates. */
export const encodings: readonly MediaTypeOffer[] = offeredEncodings(() => false);

/** Names served for an encoding under another name: not listed in error messages. */
const aliases = new Set(['application/vnd.kubernetes.protobuf', 'application/cbor-seq']);

/** The media types an error message lists, as kube-apiserver lists its serializers. */
export function advertisedMediaTypesOf(offered: readonly MediaTypeOffer[]): string[] {
  return offered.map((o) => o.mediaType).filter((t) => !aliases.has(t));
}

/** The media types a watch can be served in, as a 406 for a watch lists them (YAML has no stream framing). */
export function streamMediaTypesOf(offered: readonly MediaTypeOffer[]): string[] {
  return offered.filter((o) => !aliases.has(o.mediaType) && o.encoding !== 'yaml')
    .map((o) => (o.encoding === 'cbor' ? 'application/cbor-seq' : `${o.mediaType};stream=watch`));
}

export const advertisedMediaTypes: readonly string[] = advertisedMediaTypesOf(encodings);
