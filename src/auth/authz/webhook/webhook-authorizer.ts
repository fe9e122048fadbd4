/**
 * The Webhook authorization mode: a SubjectAccessReview (`authorization.k8s.io`, v1 or v1beta1 —
 * the group webhooks written for Kubernetes decode) POSTed over HTTPS to the service a kubeconfig
 * names. Allowed and denied answers are cached by the review's spec for their own TTLs (the
 * request path's cache: a repeated request is decided without a round trip); failures are never
 * cached and decide by the failure policy, carrying the error (a 500 unless a later mode allows).
 */
import { ExpiringCache } from '../../expiring-cache.js';
import type { WebhookConnection } from '../../webhook/kubeconfig.js';
import { WebhookClient } from '../../webhook/webhook-client.js';
import type { Attributes, Authorizer, Decision } from '../authorizer.js';
import type { MatchConditions } from './match-conditions.js';

/** k8s.io/apiserver's webhook authorizer keeps 8192 answers */
const cacheCapacity = 8192;

export interface WebhookAuthorizerOptions {
  name: string;
  connection: WebhookConnection;
  version: 'v1' | 'v1beta1';
  timeoutMs: number;
  /** 0: allowed answers are not cached */
  authorizedTtlMs: number;
  /** 0: other answers are not cached */
  unauthorizedTtlMs: number;
  failurePolicy: 'NoOpinion' | 'Deny';
  matchConditions?: MatchConditions;
  /** waits between retries; tests shorten it */
  sleep?: (ms: number) => Promise<void>;
}

interface ReviewStatus { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string }

/** The SubjectAccessReview v1 spec Kubernetes builds from request attributes (empty fields omitted). */
export function reviewSpec(a: Attributes): Record<string, unknown> {
  const spec: Record<string, unknown> = {};
  if (a.isResourceRequest) {
    const r: Record<string, unknown> = {};
    for (const [key, value] of [['namespace', a.namespace], ['verb', a.verb], ['group', a.apiGroup], ['version', a.apiVersion],
      ['resource', a.resource], ['subresource', a.subresource], ['name', a.name]] as const) {
      if (value) r[key] = value;
    }
    // only the parsed requirements: webhooks are asked not to parse a raw selector
    if (a.fieldSelector) r.fieldSelector = { requirements: a.fieldSelector };
    if (a.labelSelector) r.labelSelector = { requirements: a.labelSelector };
    spec.resourceAttributes = r;
  } else {
    spec.nonResourceAttributes = { ...(a.path ? { path: a.path } : {}), ...(a.verb ? { verb: a.verb } : {}) };
  }
  if (a.user.name) spec.user = a.user.name;
  if (a.user.groups.length > 0) spec.groups = a.user.groups;
  if (a.user.extra && Object.keys(a.user.extra).length > 0) spec.extra = a.user.extra;
  if (a.user.uid) spec.uid = a.user.uid;
  return spec;
}

export class WebhookAuthorizer implements Authorizer {
  readonly name: string;
  /** the review it sends carries the request's selectors (reviewSpec) */
  readonly readsSelectors = true;
  private readonly client: WebhookClient;
  private readonly cache = new ExpiringCache<ReviewStatus>(cacheCapacity);

  constructor(private readonly options: WebhookAuthorizerOptions) {
    this.name = options.name;
    this.client = new WebhookClient({ connection: options.connection, timeoutMs: options.timeoutMs, kind: 'SubjectAccessReview', sleep: options.sleep });
  }

  async authorize(a: Attributes): Promise<Decision> {
    const spec = reviewSpec(a);
    if (this.options.matchConditions) {
      const outcome = this.options.matchConditions.evaluate(spec);
      if (outcome.error !== undefined) return this.failed(outcome.error);
      if (!outcome.matches) return { decision: 'NoOpinion', reason: '' };
    }
    const key = JSON.stringify(spec);
    let status = this.cache.get(key);
    if (!status) {
      try {
        status = await this.client.review<ReviewStatus>(this.review(spec));
      } catch (err) {
        return this.failed(`Post "${this.options.connection.server}": ${(err as Error).message}`);
      }
      this.cache.set(key, status, status.allowed === true ? this.options.authorizedTtlMs : this.options.unauthorizedTtlMs);
    }
    const reason = status.reason ?? '';
    if (status.allowed === true && status.denied === true) {
      return { decision: 'Deny', reason, error: 'webhook subject access review returned both allow and deny response' };
    }
    if (status.denied === true) return { decision: 'Deny', reason };
    if (status.allowed === true) return { decision: 'Allow', reason };
    return { decision: 'NoOpinion', reason };
  }

  private failed(error: string): Decision {
    return { decision: this.options.failurePolicy, reason: '', error };
  }

  /** The review in the webhook's version: v1beta1 names the groups field `group`. */
  private review(spec: Record<string, unknown>): Record<string, unknown> {
    let body = spec;
    if (this.options.version === 'v1beta1' && spec.groups) {
      const { groups, ...rest } = spec;
      body = { ...rest, group: groups };
    }
    return {
      apiVersion: `authorization.k8s.io/${this.options.version}`,
      kind: 'SubjectAccessReview',
      metadata: { creationTimestamp: null },
      spec: body,
      status: { allowed: false },
    };
  }
}
