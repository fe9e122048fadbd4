/**
 * Keys for caches of token verdicts: SHA-256 hashes of the token under a secret salt born with
 * the process, so neither a cache nor a heap dump holds a usable token, and no table of hashed
 * guesses finds one (a salted hash, not an HMAC: it is a cache key, and costs half as much).
 */
import { createHash, randomBytes } from 'node:crypto';

const salt = randomBytes(32);

/** The cache key of a token (and the audiences it was checked for). */
export function tokenKey(token: string, audiences: readonly string[] = []): string {
  const hash = createHash('sha256').update(salt).update(token);
  for (const audience of audiences) hash.update('\0').update(audience);
  return hash.digest('base64');
}
