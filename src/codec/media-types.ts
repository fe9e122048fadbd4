/** The wire encodings this server speaks, and their media types. */
export type Encoding = 'json' | 'yaml' | 'protobuf';

/** Response encodings offered in content negotiation, in preference order when the client does not care. */
export const encodings: ReadonlyArray<{ mediaType: string; encoding: Encoding }> = [
  { mediaType: 'application/json', encoding: 'json' },
  { mediaType: 'application/yaml', encoding: 'yaml' },
];

/**
 * Request body types. Protobuf is accepted under our name and under Kubernetes' (which real
 * client-go and kubectl send): the bytes, envelope and magic prefix are the same.
 */
export const bodyEncodings: ReadonlyArray<{ mediaType: string; encoding: Encoding }> = [
  ...encodings,
  { mediaType: 'application/vnd.orch.protobuf', encoding: 'protobuf' },
  { mediaType: 'application/vnd.kubernetes.protobuf', encoding: 'protobuf' },
];
