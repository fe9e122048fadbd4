/**
 * EventRateLimit (Kubernetes' plugin/pkg/admission/eventratelimit): token buckets that bound how
 * fast Events are created and updated — one for the whole server, per namespace, per user, or per
 * source and involved object — each keyed bucket kept in an LRU cache of `cacheSize` keys. An
 * Event beyond its budget is refused with 429. Dry runs are not counted. Its configuration is
 * eventratelimit.admission.orch.io/v1alpha1 (or .k8s.io) `Configuration`, validated as Kubernetes does.
 */
import { fieldErrors, formatFieldError, StatusError, type FieldError } from '../../status/status-error.js';
import type { AdmissionAttributes, AdmissionPlugin } from '../admission.js';

const configVersions = ['eventratelimit.admission.orch.io/v1alpha1', 'eventratelimit.admission.k8s.io/v1alpha1'];
const limitTypes = ['Namespace', 'Server', 'SourceAndObject', 'User'];
const defaultCacheSize = 4096;
const eventGroups = new Set(['', 'events.orch.io', 'events.k8s.io']);

export interface EventRateLimitSpec { type: string; qps: number; burst: number; cacheSize: number }

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Parses, defaults (cacheSize 4096) and validates the plugin's configuration; throws on errors. */
export function parseEventRateLimitConfig(doc: unknown): EventRateLimitSpec[] {
  if (!isRecord(doc) || doc.kind !== 'Configuration' || !configVersions.includes(String(doc.apiVersion))) {
    throw new Error(`EventRateLimit: the configuration must be a Configuration of ${configVersions.join(' or ')}`);
  }
  const raw = Array.isArray(doc.limits) ? doc.limits : [];
  const limits = raw.map((l): EventRateLimitSpec => {
    const r = isRecord(l) ? l : {};
    return { type: String(r.type ?? ''), qps: Number(r.qps ?? 0), burst: Number(r.burst ?? 0), cacheSize: Number(r.cacheSize ?? 0) || defaultCacheSize };
  });
  const errs: FieldError[] = [];
  if (limits.length === 0) errs.push(fieldErrors.invalid('limits', null, 'must not be empty'));
  limits.forEach((l, i) => {
    if (!limitTypes.includes(l.type)) errs.push(fieldErrors.notSupported(`limits[${i}].type`, l.type, limitTypes));
    if (!(l.burst > 0)) errs.push(fieldErrors.invalid(`limits[${i}].burst`, l.burst, 'must be positive'));
    if (!(l.qps > 0)) errs.push(fieldErrors.invalid(`limits[${i}].qps`, l.qps, 'must be positive'));
    if (l.type !== 'Server' && l.cacheSize < 0) errs.push(fieldErrors.invalid(`limits[${i}].cacheSize`, l.cacheSize, 'must not be negative'));
  });
  if (errs.length) throw new Error(`EventRateLimit: invalid configuration: ${errs.map(formatFieldError).join(', ')}`);
  return limits;
}

/** A token bucket (client-go's tokenBucketRateLimiter.TryAccept), refilled at qps up to burst. */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(private readonly qps: number, private readonly burst: number, private readonly now: () => number) {
    this.tokens = burst;
    this.last = now();
  }

  tryAccept(): boolean {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + (t - this.last) / 1000 * this.qps);
    this.last = t;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

interface EventShape {
  source?: { component?: string; host?: string };
  involvedObject?: { kind?: string; namespace?: string; name?: string; uid?: string; apiVersion?: string };
  deprecatedSource?: { component?: string; host?: string };
  regarding?: { kind?: string; namespace?: string; name?: string; uid?: string; apiVersion?: string };
}

/** The key of a limit type for a request; Kubernetes joins the source and object fields with nothing between them. */
function keyOf(type: string, a: AdmissionAttributes): string {
  switch (type) {
    case 'Namespace': return a.namespace ?? '';
    case 'User': return a.user?.name ?? '';
    case 'SourceAndObject': {
      const e = (a.object ?? {}) as EventShape;
      const source = e.source ?? e.deprecatedSource ?? {};
      const o = e.involvedObject ?? e.regarding ?? {};
      return [source.component, source.host, o.kind, o.namespace, o.name, o.uid, o.apiVersion].map((s) => s ?? '').join('');
    }
    default: return '';
  }
}

/** One limit: a bucket per key, the least recently used key forgotten beyond cacheSize. */
class LimitEnforcer {
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(private readonly spec: EventRateLimitSpec, private readonly now: () => number) {}

  accept(a: AdmissionAttributes): string | undefined {
    const key = keyOf(this.spec.type, a);
    let bucket = this.buckets.get(key);
    if (bucket) {
      // a Map iterates in insertion order: moving the key to the end keeps the oldest first
      this.buckets.delete(key);
    } else {
      bucket = new TokenBucket(this.spec.qps, this.spec.burst, this.now);
      const size = this.spec.type === 'Server' ? 1 : this.spec.cacheSize;
      if (this.buckets.size >= size) this.buckets.delete(this.buckets.keys().next().value as string);
    }
    this.buckets.set(key, bucket);
    return bucket.tryAccept() ? undefined : `limit reached on type ${this.spec.type} for key ${key}`;
  }
}

export class EventRateLimit implements AdmissionPlugin {
  readonly name = 'EventRateLimit';
  private readonly enforcers: LimitEnforcer[];

  constructor(limits: readonly EventRateLimitSpec[], now: () => number = Date.now) {
    this.enforcers = limits.map((l) => new LimitEnforcer(l, now));
  }

  validate(a: AdmissionAttributes): void {
    if (a.kind.kind !== 'Event' || !eventGroups.has(a.kind.group)) return;
    if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return;
    // a dry run writes nothing, so it spends no budget
    if (a.dryRun) return;
    const refusals: string[] = [];
    for (const e of this.enforcers) {
      const refused = e.accept(a);
      if (refused) refusals.push(refused);
    }
    if (refusals.length === 0) return;
    // utilerrors.NewAggregate: one message as it is, several in brackets
    const message = refusals.length === 1 ? refusals[0] : `[${refusals.join(', ')}]`;
    throw new StatusError(429, 'TooManyRequests', `Too many requests: ${message}`);
  }
}
