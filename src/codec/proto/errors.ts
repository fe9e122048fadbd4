/** A protobuf body or value that cannot be read or written; answered as a Kubernetes Status by the callers. */
export class ProtobufError extends Error {}
