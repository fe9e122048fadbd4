/**
 * JSON patch (RFC 6902, `application/json-patch+json`) as kube-apiserver 1.32 applies it, plus what
 * every patch type shares: the patch media types, the JSON value helpers and the errors.
 *
 * kube-apiserver applies JSON patches with gopkg.in/evanphx/json-patch.v4, whose semantics differ
 * from RFC 6902 in ways clients see, so pointers are resolved here the way v4 resolves them and
 * the operation is performed on own properties only (a `__proto__` or `constructor` member is a
 * valid Secret or label key, and stays plain data):
 * - `replace` of a missing object member adds it; `add` and `remove` at the root fail;
 * - negative array indices count from the end; indices parse like Go's strconv.Atoi;
 * - a missing `value` is null; `copy` from a missing object member copies null;
 * - `test` of a missing or null member passes only for `value: null`, and an object matches
 *   when each of its members matches the value's (extra members in the value are ignored).
 * Sources: staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go (applyJSPatch),
 * evanphx/json-patch v4.12 patch.go, and the installer's list of supported patch types.
 */
import { copyJson } from '../api/json-copy.js';
import { setOwn } from '../api/own-member.js';
import type { FieldValidation } from '../codec/body-decoder.js';
import { errors, fieldErrorBody, fieldErrors, formatFieldError, StatusError } from '../status/status-error.js';

// ---- media types -------------------------------------------------------------------------------

/** Every patch media type this server knows, in the order kube-apiserver lists them. */
export const patchTypes = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
  'application/apply-patch+cbor',
] as const;

export type PatchType = (typeof patchTypes)[number];

/**
 * The patch types a resource accepts, as the API installer builds its list: CBOR apply only with
 * the CBORServingAndStorage gate, strategic merge only for kinds with Go-declared merge markers
 * (not for custom resources).
 */
export function acceptedPatchTypes(options: { cbor: boolean; strategicMerge: boolean }): PatchType[] {
  return patchTypes.filter((t) => (t !== 'application/apply-patch+cbor' || options.cbor)
    && (t !== 'application/strategic-merge-patch+json' || options.strategicMerge));
}

/**
 * The patch type a Content-Type header names, read as PatchResource reads it: parameters after the
 * first ';' dropped, then an exact, case-sensitive match. Anything else is Kubernetes' 415.
 */
export function patchTypeOf(contentType: string | undefined, accepted: readonly PatchType[]): PatchType {
  const header = contentType ?? '';
  const semicolon = header.indexOf(';');
  const mediaType = semicolon > 0 ? header.slice(0, semicolon) : header;
  const found = accepted.find((t) => t === mediaType);
  if (!found) throw errors.unsupportedMediaType(accepted);
  return found;
}

// ---- JSON values shared by the patch modules ---------------------------------------------------

export type Json = null | boolean | number | string | Json[] | JsonMap;
export interface JsonMap { [key: string]: Json }

export function isMap(v: unknown): v is JsonMap {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}


export function member(target: JsonMap, key: string): Json | undefined {
  return Object.hasOwn(target, key) ? target[key] : undefined;
}

/** The JSON kind as Go's decoder names it in `json: cannot unmarshal <kind> into ...`. */
export function goJsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null || typeof v === 'object') return 'object';
  return typeof v === 'boolean' ? 'bool' : typeof v;
}

// ---- errors shared by the patch modules --------------------------------------------------------

/**
 * What kube-apiserver answers when applying a patch fails: errors.NewGenericServerResponse(422, ...)
 * keeps none of the underlying error's text.
 */
export function unprocessablePatch(): StatusError {
  return new StatusError(422, 'Invalid', 'the server rejected our request due to an error in our request', {});
}

/**
 * A patch that turned the object into a JSON array: decoding the result fails on reading its
 * apiVersion/kind, which the patch handler reports as an Invalid `patch` field of no kind.
 */
export function invalidPatchedObject(patched: Json): StatusError {
  const detail = `couldn't get version/kind; json parse error: json: cannot unmarshal ${goJsonKind(patched)} into Go value of type `
    + 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';
  const error = fieldErrors.invalid('patch', JSON.stringify(patched), detail);
  return new StatusError(422, 'Invalid', ` "" is invalid: ${formatFieldError(error)}`,
    { causes: [{ reason: error.type, message: fieldErrorBody(error), field: error.field }] });
}

// ---- RFC 6902 ----------------------------------------------------------------------------------

export interface PatchOptions {
  /** The request's fieldValidation; kube-apiserver defaults it to Warn. */
  fieldValidation?: FieldValidation;
}

const maxOperations = 10000;

/**
 * Applies a decoded JSON patch body to a copy of `original`. A body that does not decode as a
 * patch is 400, more than 10000 operations 413, any inapplicable operation 422 (with nothing
 * applied), a result that is no longer an object 422 Invalid.
 */
export function applyJsonPatch(original: object, patchBody: unknown, options: PatchOptions = {}): object {
  // Warn and Strict first decode into the handler's typed operations, whose errors come first
  if ((options.fieldValidation ?? 'Warn') !== 'Ignore') checkOperationTypes(patchBody);
  const ops = decodePatch(patchBody);
  if (ops.length > maxOperations) {
    throw new StatusError(413, 'RequestEntityTooLarge',
      `Request entity too large: The allowed maximum operations in a JSON patch is ${maxOperations}, got ${ops.length}`);
  }
  let doc = copyJson(original) as Json;
  for (const op of ops) doc = applyOperation(doc, op);
  if (!isMap(doc)) throw invalidPatchedObject(doc);
  return doc;
}

/** kjson.UnmarshalStrict into []jsonPatchOp: op, path and from must be strings (or null). */
function checkOperationTypes(body: unknown): void {
  const fail = (what: string) => errors.badRequest(`error decoding patch: json: cannot unmarshal ${what}`);
  if (body === null) return;
  if (!Array.isArray(body)) throw fail(`${goJsonKind(body)} into Go value of type []handlers.jsonPatchOp`);
  for (const op of body) {
    if (op === null) continue;
    if (!isMap(op)) throw fail(`${goJsonKind(op)} into Go value of type handlers.jsonPatchOp`);
    for (const [field, value] of Object.entries(op)) {
      if ((field === 'op' || field === 'path' || field === 'from') && value !== null && typeof value !== 'string') {
        throw fail(`${goJsonKind(value)} into Go struct field jsonPatchOp.${field} of type string`);
      }
    }
  }
}

/** jsonpatch.DecodePatch: an array (or null) of objects (or nulls). */
function decodePatch(body: unknown): Array<JsonMap | null> {
  if (body === null) return [];
  if (!Array.isArray(body)) throw errors.badRequest(`json: cannot unmarshal ${goJsonKind(body)} into Go value of type jsonpatch.Patch`);
  for (const op of body) {
    if (op !== null && !isMap(op)) throw errors.badRequest(`json: cannot unmarshal ${goJsonKind(op)} into Go value of type jsonpatch.Operation`);
  }
  return body as Array<JsonMap | null>;
}

function applyOperation(doc: Json, op: JsonMap | null): Json {
  // v4 reads a null operation, or one whose op is not a string, as of an unknown kind
  if (!op || typeof op.op !== 'string') throw unprocessablePatch();
  switch (op.op) {
    case 'add': return add(doc, pointerOf(op, 'path'), valueOf(op));
    case 'remove': return remove(doc, pointerOf(op, 'path'));
    case 'replace': return replace(doc, pointerOf(op, 'path'), valueOf(op));
    case 'move': {
      const from = pointerOf(op, 'from');
      const value = read(doc, from);
      const rest = remove(doc, from);
      return add(rest, pointerOf(op, 'path'), value ?? null);
    }
    case 'copy': {
      const value = read(doc, pointerOf(op, 'from'));
      return add(doc, pointerOf(op, 'path'), copyJson(value ?? null));
    }
    case 'test':
      test(doc, op);
      return doc;
    default:
      throw unprocessablePatch();
  }
}

function pointerOf(op: JsonMap, field: 'path' | 'from'): string {
  const value = op[field];
  if (typeof value !== 'string') throw unprocessablePatch();
  return value;
}

function valueOf(op: JsonMap): Json {
  return Object.hasOwn(op, 'value') ? copyJson(op.value) : null;
}

/** Where a pointer's last token lives: its container and the token. */
interface Slot { parent: JsonMap | Json[]; token: string }

/**
 * v4's findObject: everything before the first '/' is ignored, the containers on the way must
 * exist (arrays indexed as v4 reads indices), the last token is left to the operation.
 */
function locate(doc: Json, pointer: string): Slot {
  const tokens = pointer.split('/').slice(1).map((t) => t.replace(/~[01]/g, (m) => (m === '~1' ? '/' : '~')));
  if (tokens.length === 0) throw unprocessablePatch();
  let node = doc;
  for (const token of tokens.slice(0, -1)) {
    if (Array.isArray(node)) {
      node = node[existingIndex(token, node.length)];
    } else if (isMap(node) && Object.hasOwn(node, token)) {
      node = node[token];
    } else {
      throw unprocessablePatch();
    }
  }
  if (node === null || typeof node !== 'object') throw unprocessablePatch();
  return { parent: node, token: tokens[tokens.length - 1] };
}

/** Go's strconv.Atoi: optional sign, decimal digits. */
function atoi(token: string): number {
  if (!/^[+-]?\d+$/.test(token)) throw unprocessablePatch();
  return Number(token);
}

/** An index of an existing element; negative ones count from the end. */
function existingIndex(token: string, length: number): number {
  let index = atoi(token);
  if (index < 0) {
    if (index < -length) throw unprocessablePatch();
    index += length;
  }
  if (index >= length) throw unprocessablePatch();
  return index;
}

/** An insertion index: `-` appends, negative ones count from the end of the grown array. */
function insertionIndex(token: string, length: number): number {
  if (token === '-') return length;
  let index = atoi(token);
  if (index > length) throw unprocessablePatch();
  if (index < 0) {
    if (index < -(length + 1)) throw unprocessablePatch();
    index += length + 1;
  }
  return index;
}

/** The resolved operation on the slot's container; `token` is an index already checked for arrays. */
function perform(doc: Json, slot: Slot, token: string, op: 'add' | 'remove' | 'replace', value: Json = null): Json {
  const { parent } = slot;
  if (Array.isArray(parent)) {
    const index = Number(token);
    if (op === 'add') parent.splice(index, 0, value);
    else if (op === 'remove') parent.splice(index, 1);
    else parent[index] = value;
  } else if (op === 'remove') {
    delete parent[token];
  } else {
    setOwn(parent, token, value);
  }
  return doc;
}

function add(doc: Json, pointer: string, value: Json): Json {
  const slot = locate(doc, pointer);
  const token = Array.isArray(slot.parent) ? String(insertionIndex(slot.token, slot.parent.length)) : slot.token;
  return perform(doc, slot, token, 'add', value);
}

function remove(doc: Json, pointer: string): Json {
  const slot = locate(doc, pointer);
  if (Array.isArray(slot.parent)) return perform(doc, slot, String(existingIndex(slot.token, slot.parent.length)), 'remove');
  if (!Object.hasOwn(slot.parent, slot.token)) throw unprocessablePatch();
  return perform(doc, slot, slot.token, 'remove');
}

function replace(doc: Json, pointer: string, value: Json): Json {
  if (pointer === '') {
    // v4 replaces the whole document only with an object or an array
    if (value === null || typeof value !== 'object') throw unprocessablePatch();
    return value;
  }
  const slot = locate(doc, pointer);
  if (Array.isArray(slot.parent)) return perform(doc, slot, String(existingIndex(slot.token, slot.parent.length)), 'replace', value);
  return perform(doc, slot, slot.token, Object.hasOwn(slot.parent, slot.token) ? 'replace' : 'add', value);
}

/** The value at a pointer; undefined for a missing object member (v4 reads it as nil, not as an error). */
function read(doc: Json, pointer: string): Json | undefined {
  const slot = locate(doc, pointer);
  if (Array.isArray(slot.parent)) return slot.parent[existingIndex(slot.token, slot.parent.length)];
  return member(slot.parent, slot.token);
}

function test(doc: Json, op: JsonMap): void {
  const pointer = pointerOf(op, 'path');
  const hasValue = Object.hasOwn(op, 'value');
  const actual = pointer === '' ? doc : read(doc, pointer);
  const passes = actual === undefined || actual === null
    ? hasValue && op.value === null
    : hasValue && v4Equal(actual, op.value);
  if (!passes) throw unprocessablePatch();
}

/** lazyNode.equal: scalars by their JSON text, arrays element-wise, objects by the document's members. */
function v4Equal(actual: Json, expected: Json): boolean {
  if (Array.isArray(actual)) {
    return Array.isArray(expected) && actual.length === expected.length
      && actual.every((v, i) => (v === null ? expected[i] === null : expected[i] !== null && v4Equal(v, expected[i])));
  }
  if (isMap(actual)) {
    return isMap(expected) && Object.entries(actual).every(([k, v]) => {
      const other = member(expected, k);
      if (other === undefined) return false;
      return v === null ? other === null : other !== null && v4Equal(v, other);
    });
  }
  return JSON.stringify(actual) === JSON.stringify(expected);
}
