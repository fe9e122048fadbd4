/**
 * The token webhook (`--authentication-token-webhook-config-file`): a TokenReview POSTed to the
 * service the kubeconfig names, over HTTPS with its CA and client certificate, in the version
 * `--authentication-token-webhook-version` asks for (Kubernetes' `authentication.k8s.io` group,
 * which webhooks written for Kubernetes decode). Verdicts, refusals included, are cached for
 * `--authentication-token-webhook-cache-ttl` by an HMAC of the token and the audiences; transient
 * failures are retried with Kubernetes' backoff and never cached.
 */
import { AuthenticationFailure } from '../authenticator.js';
import { intersect } from '../audiences.js';
import type { BearerToken, TokenAuthenticator, TokenResult } from '../token.js';
import { ExpiringCache } from '../../expiring-cache.js';
import { tokenKey } from '../token-cache.js';
import type { UserInfo } from '../../user.js';
import type { WebhookConnection } from '../../webhook/kubeconfig.js';
import { WebhookClient } from '../../webhook/webhook-client.js';

const requestTimeoutMs = 30_000;
const cacheCapacity = 10_000;

export interface WebhookOptions {
  connection: WebhookConnection;
  version: 'v1' | 'v1beta1';
  cacheTtlMs: number;
  /** the API's audiences: what a reviewed token is good for when the webhook names none */
  implicitAudiences: readonly string[];
  /** waits between retries; tests shorten it */
  sleep?: (ms: number) => Promise<void>;
}

interface ReviewStatus {
  authenticated?: boolean;
  user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  audiences?: string[];
  error?: string;
}

export class WebhookTokenAuthenticator implements TokenAuthenticator {
  readonly name = 'webhook';
  private readonly cache: ExpiringCache<{ result: TokenResult }>;
  private readonly client: WebhookClient;

  constructor(private readonly options: WebhookOptions) {
    this.cache = new ExpiringCache(cacheCapacity);
    this.client = new WebhookClient({ connection: options.connection, timeoutMs: requestTimeoutMs, kind: 'TokenReview', sleep: options.sleep });
  }

  async authenticateToken(token: BearerToken, audiences: readonly string[]): Promise<TokenResult> {
    const key = audiences.length === 0 ? token.key : tokenKey(token.value, audiences);
    const cached = this.cache.get(key);
    if (cached) return cached.result;
    let status: ReviewStatus;
    try {
      status = await this.review(token.value, audiences);
    } catch (err) {
      return new AuthenticationFailure(`webhook: ${(err as Error).message}`);
    }
    const result = this.verdict(status, audiences);
    this.cache.set(key, { result }, this.options.cacheTtlMs);
    return result;
  }

  private verdict(status: ReviewStatus, audiences: readonly string[]): TokenResult {
    if (status.authenticated !== true) return status.error ? new AuthenticationFailure(status.error) : undefined;
    let granted: string[] | undefined;
    if (audiences.length > 0) {
      granted = intersect(audiences, status.audiences?.length ? status.audiences : this.options.implicitAudiences);
      if (granted.length === 0) return undefined;
    }
    const u = status.user ?? {};
    const user: UserInfo = { name: u.username ?? '', groups: Array.isArray(u.groups) ? u.groups : [] };
    if (u.uid) user.uid = u.uid;
    if (u.extra && Object.keys(u.extra).length > 0) user.extra = u.extra;
    return granted ? { user, audiences: granted } : { user };
  }

  private review(token: string, audiences: readonly string[]): Promise<ReviewStatus> {
    return this.client.review<ReviewStatus>({
      apiVersion: `authentication.k8s.io/${this.options.version}`,
      kind: 'TokenReview',
      metadata: { creationTimestamp: null },
      spec: { token, ...(audiences.length > 0 ? { audiences } : {}) },
      status: { user: {} },
    });
  }
}
