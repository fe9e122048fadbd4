/**
 * The opaque `metadata.continue` of a chunked list, in Kubernetes' form: base64url (no padding) of
 * {"v":"meta.orch.io/v1","rv":N,"start":"<next key>"}. The key is relative to the list's prefix and
 * validated on the way in, so a token can never reach outside the collection it was issued for.
 */
import { errors, type StatusError } from '../status/status-error.js';

const tokenVersion = 'meta.orch.io/v1';

export interface ContinueToken { revision: number; start: string }

export function encodeContinue(revision: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: tokenVersion, rv: revision, start })).toString('base64url');
}

function invalid(why: string): StatusError {
  return errors.badRequest(`invalid continue token: ${why}`);
}

export function decodeContinue(token: string): ContinueToken {
  if (!/^[A-Za-z0-9_-]+={0,2}$/.test(token)) throw invalid('continue key is not valid: illegal base64 data');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw invalid('continue key is not valid: unable to decode JSON');
  }
  const t = parsed as { v?: unknown; rv?: unknown; start?: unknown };
  if (!t || typeof t !== 'object' || t.v !== tokenVersion) throw invalid('continue key is not valid: incorrect encoded start resourceVersion (version meta.orch.io/v1)');
  if (typeof t.rv !== 'number' || !Number.isSafeInteger(t.rv) || t.rv <= 0) throw invalid('continue key is not valid: incorrect encoded start resourceVersion (version meta.orch.io/v1)');
  if (typeof t.start !== 'string' || t.start.length === 0) throw invalid('continue key is not valid: encoded start key empty');
  // a key is `namespace/name` or `name`: never absolute, never climbing out with '..'
  const segments = t.start.split('/');
  if (t.start.startsWith('/') || segments.length > 2 || segments.some((s) => s === '' || s === '.' || s === '..')) {
    throw invalid('continue key is not valid: the key contains invalid path segments');
  }
  return { revision: t.rv, start: t.start };
}

export function expiredContinue(): StatusError {
  return errors.expired('The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.');
}
