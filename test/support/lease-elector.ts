/**
 * Leader election over a coordination Lease with @kubernetes/client-node (which has none of its
 * own), as client-go's leaderelection package does it with a LeaseLock: read the lease; create it
 * when missing; take it over only once the holder has not renewed it for leaseDurationSeconds of
 * the candidate's own clock; renew it while leading. Every write is a compare-and-swap on the
 * resourceVersion read, so two candidates never both win.
 */
import { ApiException, type CoordinationV1Api, type V1Lease, V1MicroTime } from '@kubernetes/client-node';

export interface ElectorConfig {
  api: CoordinationV1Api;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationSeconds: number;
  /** how long a leader keeps trying to renew before it gives up leading */
  renewDeadlineMs: number;
  retryPeriodMs: number;
  onStartedLeading(): void;
  onStoppedLeading(): void;
}

interface ElectionRecord { holderIdentity: string; leaseDurationSeconds: number; acquireTime?: Date; renewTime?: Date; leaseTransitions: number }

/** client-node declares MicroTime fields as Dates but hands them over as the text it received. */
const timeOf = (value: Date | string | undefined): Date | undefined => (value === undefined ? undefined : new Date(value));

function recordOf(lease: V1Lease): ElectionRecord {
  const spec = lease.spec ?? {};
  return {
    holderIdentity: spec.holderIdentity ?? '', leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
    acquireTime: timeOf(spec.acquireTime), renewTime: timeOf(spec.renewTime), leaseTransitions: spec.leaseTransitions ?? 0,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class LeaseElector {
  private lease?: V1Lease;
  /** the record last seen, its raw form, and when (by this candidate's clock) it last changed */
  private observed?: ElectionRecord;
  private observedRaw = '';
  private observedTime = 0;
  private stopped = false;
  leading = false;
  /** settles when the run loop has ended */
  readonly done: Promise<void>;

  constructor(private readonly config: ElectorConfig) {
    this.done = this.run();
  }

  /** Stops acquiring and renewing without releasing the lease, as a crashed or partitioned holder would. */
  stop(): Promise<void> {
    this.stopped = true;
    return this.done;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      if (!(await this.tryAcquireOrRenew())) {
        await sleep(this.config.retryPeriodMs);
        continue;
      }
      this.leading = true;
      this.config.onStartedLeading();
      await this.renewWhileLeading();
      this.leading = false;
      this.config.onStoppedLeading();
    }
  }

  /** Renews every retry period; leadership ends when no renewal succeeds within the renew deadline. */
  private async renewWhileLeading(): Promise<void> {
    let lastRenewal = Date.now();
    while (!this.stopped) {
      await sleep(this.config.retryPeriodMs);
      if (this.stopped) return;
      if (await this.tryAcquireOrRenew()) lastRenewal = Date.now();
      else if (Date.now() - lastRenewal > this.config.renewDeadlineMs) return;
    }
  }

  private isLeader(): boolean {
    return this.observed?.holderIdentity === this.config.identity;
  }

  private observe(record: ElectionRecord, raw: string): void {
    this.observed = record;
    this.observedRaw = raw;
    this.observedTime = Date.now();
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const { api, namespace, name, identity, leaseDurationSeconds } = this.config;
    const now = new V1MicroTime(Date.now());
    const record: ElectionRecord = { holderIdentity: identity, leaseDurationSeconds, acquireTime: now, renewTime: now, leaseTransitions: 0 };
    let current: V1Lease;
    try {
      current = await api.readNamespacedLease({ name, namespace });
    } catch (err) {
      if (!(err instanceof ApiException) || err.code !== 404) return false;
      try {
        this.lease = await api.createNamespacedLease({ namespace, body: { metadata: { name, namespace }, spec: this.specOf(record) } });
      } catch {
        return false;
      }
      this.observe(record, JSON.stringify(this.lease.spec));
      return true;
    }
    this.lease = current;
    const old = recordOf(current);
    const raw = JSON.stringify(current.spec);
    if (raw !== this.observedRaw) this.observe(old, raw);
    const valid = this.observedTime + (this.observed?.leaseDurationSeconds ?? 0) * 1000 > Date.now();
    if (old.holderIdentity && valid && !this.isLeader()) return false;
    if (this.isLeader()) {
      record.acquireTime = old.acquireTime;
      record.leaseTransitions = old.leaseTransitions;
    } else {
      record.leaseTransitions = old.leaseTransitions + 1;
    }
    try {
      // the lease as read, with its resourceVersion: a write that lost a race is 409
      this.lease = await api.replaceNamespacedLease({ name, namespace, body: { ...current, spec: this.specOf(record) } });
    } catch {
      return false;
    }
    this.observe(record, JSON.stringify(this.lease.spec));
    return true;
  }

  private specOf(record: ElectionRecord): V1Lease['spec'] {
    return {
      holderIdentity: record.holderIdentity, leaseDurationSeconds: record.leaseDurationSeconds,
      acquireTime: record.acquireTime && new V1MicroTime(record.acquireTime.getTime()),
      renewTime: record.renewTime && new V1MicroTime(record.renewTime.getTime()),
      leaseTransitions: record.leaseTransitions,
    };
  }
}
