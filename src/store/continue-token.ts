/**
 * The opaque `metadata.continue` of a chunked list, in Kubernetes' form: base64url (no padding) of
 * {"v":"meta.orch.io/v1","rv":N,"start":"<next key>"}, plus "exp" (when it stops being honoured,
 * --continue-ttl after the list's first page) and, for unfiltered lists, "rem" (the items from
 * "start" on, counted once on the first page so later pages need not count again). The key is relative to the list's prefix and validated on the way
 * in, so a token can never reach outside the collection it was issued for. rv -1 continues at the
 * latest revision (the token an expired one's 410 carries), as in Kubernetes.
 */
import { parseJsonAsGo } from '../api/validation/go-json-syntax.js';
import { errors, type StatusError } from '../status/status-error.js';

const tokenVersion = 'meta.orch.io/v1';

export interface ContinueToken { revision: number; start: string; expiresAt?: number; remaining?: number }

/** The revision of a token that continues at the latest state rather than a snapshot. */
export const latestRevision = -1;

export function encodeContinue(t: ContinueToken): string {
  const token: Record<string, unknown> = { v: tokenVersion, rv: t.revision, start: t.start };
  if (t.expiresAt !== undefined) token.exp = t.expiresAt;
  if (t.remaining !== undefined) token.rem = t.remaining;
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

function invalid(why: string): StatusError {
  return errors.badRequest(`invalid continue token: ${why}`);
}

export function decodeContinue(token: string): ContinueToken {
  if (!/^[A-Za-z0-9_-]+={0,2}$/.test(token)) throw invalid('continue key is not valid: illegal base64 data');
  const bytes = Buffer.from(token, 'base64url');
  let parsed: unknown;
  try {
    parsed = parseJsonAsGo(bytes.toString('utf8'), bytes);
  } catch (err) {
    throw invalid(`continue key is not valid: ${(err as Error).message}`);
  }
  const t = parsed as { v?: unknown; rv?: unknown; start?: unknown; exp?: unknown; rem?: unknown };
  if (!t || typeof t !== 'object' || t.v !== tokenVersion) throw invalid('continue key is not valid: incorrect encoded start resourceVersion (version meta.orch.io/v1)');
  if (typeof t.rv !== 'number' || !Number.isSafeInteger(t.rv) || (t.rv <= 0 && t.rv !== latestRevision)) throw invalid('continue key is not valid: incorrect encoded start resourceVersion (version meta.orch.io/v1)');
  if (typeof t.start !== 'string' || t.start.length === 0) throw invalid('continue key is not valid: encoded start key empty');
  // a key is `namespace/name` or `name`: never absolute, never climbing out with '..'
  const segments = t.start.split('/');
  if (t.start.startsWith('/') || segments.length > 2 || segments.some((s) => s === '' || s === '.' || s === '..')) {
    throw invalid('continue key is not valid: the key contains invalid path segments');
  }
  if (t.exp !== undefined && (typeof t.exp !== 'number' || !Number.isSafeInteger(t.exp))) throw invalid('continue key is not valid: incorrect expiry');
  if (t.rem !== undefined && (typeof t.rem !== 'number' || !Number.isSafeInteger(t.rem) || t.rem < 0)) throw invalid('continue key is not valid: incorrect remaining count');
  return { revision: t.rv, start: t.start, expiresAt: t.exp as number | undefined, remaining: t.rem as number | undefined };
}

/**
 * The 410 for a token past its lifetime. Like kube-apiserver, it carries a token that continues
 * from the same key at the latest revision, for clients that accept an inconsistent list.
 */
export function expiredContinue(start: string): StatusError {
  return errors.expired('The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
    { continue: encodeContinue({ revision: latestRevision, start }) });
}
