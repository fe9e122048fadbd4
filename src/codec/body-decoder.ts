/**
 * Turns a request body into an object of the kind the URL names: parse (JSON or YAML), check
 * apiVersion/kind, decode against the kind's schema, and handle unknown fields per
 * `fieldValidation` (Strict: 400; Warn: warnings; Ignore: dropped), with kube-apiserver's messages.
 */
import { fromYaml } from './yaml.js';
import { goQuote } from '../api/go-quote.js';
import { apiVersionOf, type KindDeclaration } from '../api/kind.js';
import type { KObject } from '../api/meta.js';
import { DecodeError, decodeValue, type DecodeOutcome, type StructSchema } from '../api/schema.js';
import { errors } from '../status/status-error.js';
import type { Encoding } from './media-types.js';
import { duplicateFields } from './duplicate-fields.js';
import { decodeEnvelope } from './proto/decode.js';
import { ProtobufError } from './proto/errors.js';
import { CborError, decodeCbor } from './cbor.js';
import { parseJson } from './json.js';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export interface DecodedBody { object: KObject; warnings: string[] }

/** kube-apiserver's summarizeData(body, 30): an object's first bytes as text, anything else in hex. */
function summarize(body: Buffer): string {
  const maxLength = 30;
  if (body.length === 0) return '<empty>';
  const head = body.subarray(0, maxLength);
  const shown = body[0] === 0x7b ? head.toString('utf8') : head.toString('hex');
  return body.length > maxLength ? `${shown} ...` : shown;
}

function parse(body: Buffer, encoding: Encoding, target: KindDeclaration): unknown {
  if (encoding === 'protobuf') {
    try {
      // decodeEnvelope sets apiVersion and kind only when the envelope carries them; absent, the URL's apply
      return decodeEnvelope(body, target.schema).object;
    } catch (err) {
      if (err instanceof ProtobufError) throw errors.badRequest(`the object provided is unrecognized (must be of type ${target.kind}): ${err.message}`);
      throw err;
    }
  }
  if (encoding === 'cbor') {
    try {
      return decodeCbor(body);
    } catch (err) {
      if (err instanceof CborError) throw errors.badRequest(`the object provided is unrecognized (must be of type ${target.kind}): ${err.message}`);
      throw err;
    }
  }
  const text = body.toString('utf8');
  const unrecognized = (why: string) => errors.badRequest(`the object provided is unrecognized (must be of type ${target.kind}): ${why} (${summarize(body)})`);
  if (encoding === 'yaml') {
    try {
      return fromYaml(text);
    } catch (err) {
      throw unrecognized(`couldn't get version/kind; yaml parse error: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  try {
    return parseJson(text, body);
  } catch (err) {
    throw unrecognized(`couldn't get version/kind; json parse error: ${(err as Error).message}`);
  }
}

/**
 * Decodes an options body (DeleteOptions) into its JSON shape; `schema` gives the protobuf field
 * numbers client-go's Protobuf bodies need. apiVersion and kind are left for the caller to check.
 */
export function parseBody(body: Buffer, encoding: Encoding, schema: StructSchema): Record<string, unknown> {
  const what = schema.goName;
  if (encoding === 'protobuf') {
    try {
      return decodeEnvelope(body, schema).object;
    } catch (err) {
      if (err instanceof ProtobufError) throw errors.badRequest(`error decoding ${what}: ${err.message}`);
      throw err;
    }
  }
  const text = body.toString('utf8');
  let value: unknown;
  try {
    value = encoding === 'cbor' ? decodeCbor(body) : encoding === 'yaml' ? fromYaml(text) : parseJson(text, body);
  } catch (err) {
    throw errors.badRequest(`error decoding ${what}: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw errors.badRequest(`error decoding ${what}: not an object`);
  return value as Record<string, unknown>;
}

export function decodeBody(target: KindDeclaration, body: Buffer, encoding: Encoding, validation: FieldValidation): DecodedBody {
  const raw = parse(body, encoding, target);
  const duplicates = encoding === 'json' && validation !== 'Ignore' ? duplicateFields(body.toString('utf8')) : [];
  return decodeObject(target, raw, validation, duplicates);
}

/**
 * Checks a parsed object (a body, or the result of a patch) against the kind: type information,
 * field types, unknown and duplicate fields per `fieldValidation`.
 */
export function decodeObject(target: KindDeclaration, raw: unknown, validation: FieldValidation, duplicates: readonly string[] = []): DecodedBody {
  const expected = apiVersionOf(target);
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    throw errors.badRequest(`the object provided is unrecognized (must be of type ${target.kind}): couldn't get version/kind; json parse error: json: cannot unmarshal ${Array.isArray(raw) ? 'array' : typeof raw} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`);
  }
  const input = raw as Record<string, unknown>;
  const bodyKind = typeof input.kind === 'string' && input.kind ? input.kind : target.kind;
  const bodyVersion = typeof input.apiVersion === 'string' && input.apiVersion ? input.apiVersion : expected;
  const shortVersion = bodyVersion.includes('/') ? bodyVersion.split('/')[1] : bodyVersion;
  const cannotHandle = (why: string) => errors.badRequest(`${bodyKind} in version ${JSON.stringify(shortVersion)} cannot be handled as a ${target.kind}: ${why}`);
  if (bodyKind !== target.kind) {
    throw cannotHandle(`converting (${shortVersion}.${bodyKind}) to (${target.kind}): unknown conversion`);
  }
  if (bodyVersion !== expected) {
    // another version of the same group is unknown to the scheme; a kind of another group decodes,
    // then fails the group-version check
    const groupOf = (v: string) => (v.includes('/') ? v.split('/')[0] : '');
    if (groupOf(bodyVersion) === groupOf(expected)) {
      throw cannotHandle(`no kind ${JSON.stringify(bodyKind)} is registered for version ${JSON.stringify(bodyVersion)} in scheme "pkg/api/legacyscheme/scheme.go:30"`);
    }
    throw errors.badRequest(`the API version in the data (${bodyVersion}) does not match the expected API version (${expected})`);
  }
  const outcome: DecodeOutcome = { unknownFields: [] };
  let object: KObject;
  try {
    if (target.decodeUnstructured) {
      const decoded = target.decodeUnstructured(input);
      object = decoded.object;
      outcome.unknownFields.push(...decoded.unknownFields);
    } else {
      object = decodeValue(target.schema, input, '', target.schema.goName, outcome) as KObject;
    }
  } catch (err) {
    if (err instanceof DecodeError) throw cannotHandle(err.message);
    throw err;
  }
  object.metadata ??= {};
  if (validation === 'Ignore') return { object, warnings: [] };
  const problems = outcome.unknownFields.map((f) => `unknown field ${goQuote(f)}`);
  for (const f of duplicates) problems.push(`duplicate field ${goQuote(f)}`);
  if (problems.length > 0 && validation === 'Strict') throw cannotHandle(`strict decoding error: ${problems.join(', ')}`);
  return { object, warnings: problems };
}
