/**
 * Leases for keys that expire (Events' --event-ttl), shared across writes as Kubernetes' lease
 * manager (storage/etcd3/lease_manager.go) shares them: a lease is granted a little longer than
 * asked and reused for writes in the next few percent of its TTL (at most a minute, at most
 * 1,000 keys), so 1,000 Events cost one lease, not 1,000. A key then lives between its TTL and
 * its TTL plus that reuse window.
 */

const reuseFraction = 0.05;
const maxReuseMs = 60_000;
const maxKeysPerLease = 1000;

interface Lease { id: string; grantedAt: number; expiresAt: number; keys: number }

export class LeaseManager {
  private readonly current = new Map<number, Lease>();
  private readonly granting = new Map<number, Promise<Lease>>();

  /** `grant` asks etcd for a lease of `ttlSeconds` and returns its id and the TTL etcd chose */
  constructor(private readonly grant: (ttlSeconds: number) => Promise<{ id: string; ttlSeconds: number }>) {}

  /** A lease that keeps a key written now for at least `ttlMs`. */
  async leaseFor(ttlMs: number, now: number): Promise<string> {
    const reuseMs = Math.min(ttlMs * reuseFraction, maxReuseMs);
    const lease = this.current.get(ttlMs);
    if (lease && now < lease.grantedAt + reuseMs && now + ttlMs <= lease.expiresAt && lease.keys < maxKeysPerLease) {
      lease.keys++;
      return lease.id;
    }
    // writes that arrive together share one grant
    let pending = this.granting.get(ttlMs);
    if (!pending) {
      pending = this.grant(Math.ceil((ttlMs + reuseMs) / 1000)).then(({ id, ttlSeconds }) => {
        const granted = { id, grantedAt: now, expiresAt: now + ttlSeconds * 1000, keys: 0 };
        this.current.set(ttlMs, granted);
        return granted;
      }).finally(() => this.granting.delete(ttlMs));
      this.granting.set(ttlMs, pending);
    }
    const granted = await pending;
    granted.keys++;
    return granted.id;
  }

  /** Stops handing out a lease etcd no longer has (it expired or was revoked). */
  forget(id: string): void {
    for (const [ttl, lease] of this.current) if (lease.id === id) this.current.delete(ttl);
  }
}
