/**
 * The body of a JSON, merge or strategic merge patch, decoded with the messages patch.go gives
 * for a body that is not JSON.
 */
import type { FieldValidation } from '../codec/body-decoder.js';
import { parseJson } from '../codec/json.js';
import { errors } from '../status/status-error.js';

export function decodePatchBody(type: string, body: Buffer, fieldValidation: FieldValidation): unknown {
  try {
    return parseJson(body.toString('utf8'), body);
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    throw errors.badRequest(undecodable(type, fieldValidation, err.message));
  }
}

function undecodable(type: string, fieldValidation: FieldValidation, syntax: string): string {
  // a strategic merge patch is decoded by sigs.k8s.io/json whatever the validation, its error bare
  if (type === 'application/strategic-merge-patch+json') return syntax;
  // Warn and Strict first decode JSON and merge patches with sigs.k8s.io/json, and say so
  if (fieldValidation !== 'Ignore') return `error decoding patch: ${syntax}`;
  // Ignore leaves them to evanphx/json-patch: DecodePatch's error bare, MergePatch's its own
  return type === 'application/merge-patch+json' ? 'Invalid JSON Patch' : syntax;
}
