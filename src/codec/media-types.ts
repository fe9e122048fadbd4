/** The wire encodings this server speaks, and their media types. */
export type Encoding = 'json' | 'yaml' | 'protobuf';

/**
 * Encodings offered for responses and accepted for bodies, in preference order when the client
 * does not care. Protobuf is spoken under our name and under Kubernetes' (which real client-go and
 * kubectl send): the bytes, envelope and magic prefix are the same; a response names the type the
 * client asked for.
 */
export const encodings: ReadonlyArray<{ mediaType: string; encoding: Encoding }> = [
  { mediaType: 'application/json', encoding: 'json' },
  { mediaType: 'application/yaml', encoding: 'yaml' },
  { mediaType: 'application/vnd.orch.protobuf', encoding: 'protobuf' },
  { mediaType: 'application/vnd.kubernetes.protobuf', encoding: 'protobuf' },
];

export const bodyEncodings = encodings;

/** The media types an error message lists (Kubernetes' own name for protobuf is an alias). */
export const advertisedMediaTypes = ['application/json', 'application/yaml', 'application/vnd.orch.protobuf'];
