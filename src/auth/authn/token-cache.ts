/**
 * A bounded cache of token verdicts: least recently used entries go first, each entry expires
 * on its own. Keys are HMACs of the token under a key born with the process, so neither the
 * cache nor a heap dump holds a usable token, and a token cannot be found from its key.
 */
import { createHmac, randomBytes } from 'node:crypto';

const hmacKey = randomBytes(32);

/** The cache key of a token (and the audiences it was checked for). */
export function tokenKey(token: string, audiences: readonly string[] = []): string {
  const mac = createHmac('sha256', hmacKey).update(token);
  for (const audience of audiences) mac.update('\0').update(audience);
  return mac.digest('base64');
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
