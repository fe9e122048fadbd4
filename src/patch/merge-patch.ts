/**
 * JSON merge patch (RFC 7386, `application/merge-patch+json`) as kube-apiserver 1.32 applies it:
 * evanphx/json-patch v4 MergePatch behind patch.go's applyJSPatch. Beyond the RFC, v4 drops
 * nulls from a value it adds where nothing (or null, or a non-object) was, including null array
 * elements; an array replacing an object member is kept verbatim.
 */
import { copyJson } from '../api/json-copy.js';
import { setOwn } from '../api/own-member.js';
import { errors } from '../status/status-error.js';
import { goJsonKind, invalidPatchedObject, isMap, member, type Json, type JsonMap, type PatchOptions } from './json-patch.js';

/**
 * Applies a decoded merge patch to a copy of `original`. A body that is not an object is 400
 * (as Kubernetes words it for the request's fieldValidation), except an array under Ignore,
 * which becomes the object and so fails to decode (422).
 */
export function applyMergePatch(original: object, patch: unknown, options: PatchOptions = {}): object {
  if (isMap(patch)) return mergeDocs(copyJson(original) as JsonMap, copyJson(patch));
  // Warn and Strict first decode the body into a map[string]interface{}
  if ((options.fieldValidation ?? 'Warn') !== 'Ignore' && patch !== null) {
    throw errors.badRequest(`error decoding patch: json: cannot unmarshal ${goJsonKind(patch)} into Go value of type map[string]interface {}`);
  }
  if (Array.isArray(patch)) throw invalidPatchedObject(pruneNulls(copyJson(patch) as Json[]));
  throw errors.badRequest('Invalid JSON Patch');
}

function mergeDocs(doc: JsonMap, patch: JsonMap): JsonMap {
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      delete doc[key];
      continue;
    }
    const current = member(doc, key) ?? null;
    setOwn(doc, key, current === null ? pruneNulls(value) : merge(current, value));
  }
  return doc;
}

function merge(current: Json, patch: Json): Json {
  if (!isMap(current)) return pruneNulls(patch);
  if (!isMap(patch)) return patch;
  return mergeDocs(current, patch);
}

function pruneNulls(value: Json): Json {
  if (Array.isArray(value)) return value.filter((v) => v !== null).map(pruneNulls);
  if (isMap(value)) {
    for (const [key, v] of Object.entries(value)) {
      if (v === null) delete value[key];
      else setOwn(value, key, pruneNulls(v));
    }
  }
  return value;
}
