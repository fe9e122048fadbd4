/**
 * A bounded cache of token verdicts: least recently used entries go first, each entry expires
 * on its own. Keys are SHA-256 hashes of the token under a secret salt born with the process, so
 * neither the cache nor a heap dump holds a usable token, and no table of hashed guesses finds
 * one (a salted hash, not an HMAC: it is a cache key, and costs half as much per request).
 */
import { createHash, randomBytes } from 'node:crypto';

const salt = randomBytes(32);

/** The cache key of a token (and the audiences it was checked for). */
export function tokenKey(token: string, audiences: readonly string[] = []): string {
  const hash = createHash('sha256').update(salt).update(token);
  for (const audience of audiences) hash.update('\0').update(audience);
  return hash.digest('base64');
}

export class ExpiringCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();

  constructor(private readonly capacity: number, private readonly now: () => number = Date.now) {}

  get size(): number { return this.entries.size; }

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.expiresAt <= this.now()) return undefined;
    this.entries.set(key, entry); // most recently used last
    return entry.value;
  }

  set(key: string, value: V, ttlMs: number): void {
    if (ttlMs <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
  }

  clear(): void {
    this.entries.clear();
  }
}
