/**
 * The serializer registry: one entry per wire encoding with everything the layers ask of it —
 * the content type a response names, how a document is written, whether and how a watch stream is
 * framed. Responses (src/http/exchange.ts), negotiation (stream=watch), watch streams (their
 * content type, ERROR events, the list blueprint) read this table instead of switching per
 * encoding. The media types themselves are in media-types.ts.
 */
import type { StructSchema } from '../api/schema.js';
import { encodeCbor } from './cbor.js';
import type { Encoding } from './media-types.js';
import { encodeEnvelope, encodeWatchFrame } from './proto/encode.js';
import { toYaml } from './yaml.js';

export interface TypeMeta { apiVersion: string; kind: string }

export interface Serializer {
  /** what a response in this encoding names, given the offered media type that matched */
  contentType(mediaType: string): string;
  /** a document that carries its own kind and apiVersion; `schema` is required by binary encodings */
  encode(doc: Record<string, unknown>, schema: StructSchema | undefined, typeMeta: TypeMeta, pretty: boolean): string | Buffer;
  /** a watch stream in this encoding, if it has a framing (YAML has none) */
  stream?: {
    contentType(mediaType: string): string;
    /** one whole event of an object already in its served form */
    frame(type: string, object: Record<string, unknown>, schema: StructSchema | undefined, typeMeta: TypeMeta): string | Buffer;
  };
}

/** JSON as kube-apiserver's serializer writes it: compact with a newline, or indented by two spaces without one. */
export function jsonText(doc: unknown, pretty: boolean): string {
  return pretty ? JSON.stringify(doc, null, 2) : `${JSON.stringify(doc)}\n`;
}

const watchEventSchemas = new WeakMap<StructSchema, StructSchema>();

/**
 * WatchEvent {type, object} around a message, so CBOR knows the object's byte fields. Written in
 * the internal form, as it wraps the object's internal schema (a custom resource's included).
 */
function watchEventSchemaOf(object: StructSchema): StructSchema {
  let schema = watchEventSchemas.get(object);
  if (!schema) {
    schema = { type: 'struct', goName: 'WatchEvent', fields: { type: { type: 'string' }, object } };
    watchEventSchemas.set(object, schema);
  }
  return schema;
}

function needSchema(schema: StructSchema | undefined): StructSchema {
  if (!schema) throw new Error('protobuf needs the message schema');
  return schema;
}

export const serializers: Readonly<Record<Encoding, Serializer>> = {
  json: {
    contentType: () => 'application/json',
    encode: (doc, _schema, _typeMeta, pretty) => jsonText(doc, pretty),
    stream: {
      contentType: () => 'application/json',
      frame: (type, object) => `{"type":"${type}","object":${JSON.stringify(object)}}\n`,
    },
  },
  yaml: {
    contentType: (mediaType) => mediaType,
    encode: (doc) => toYaml(doc),
  },
  protobuf: {
    contentType: (mediaType) => mediaType,
    encode: (doc, schema, typeMeta) => encodeEnvelope(doc, needSchema(schema), typeMeta),
    stream: {
      contentType: (mediaType) => `${mediaType};stream=watch`,
      frame: (type, object, schema, typeMeta) => encodeWatchFrame(type, encodeEnvelope(object, needSchema(schema), typeMeta)),
    },
  },
  cbor: {
    contentType: () => 'application/cbor',
    encode: (doc, schema) => encodeCbor(doc, schema),
    stream: {
      contentType: () => 'application/cbor-seq',
      frame: (type, object, schema) => encodeCbor({ type, object }, schema && watchEventSchemaOf(schema)),
    },
  },
};
