/**
 * The token webhook (`--authentication-token-webhook-config-file`): a TokenReview POSTed to the
 * service the kubeconfig names, over HTTPS with its CA and client certificate, in the version
 * `--authentication-token-webhook-version` asks for (Kubernetes' `authentication.k8s.io` group,
 * which webhooks written for Kubernetes decode). Verdicts, refusals included, are cached for
 * `--authentication-token-webhook-cache-ttl` by an HMAC of the token and the audiences; transient
 * failures are retried with Kubernetes' backoff and never cached.
 */
import { request } from 'node:https';
import { AuthenticationFailure } from '../authenticator.js';
import { intersect } from '../audiences.js';
import type { BearerToken, TokenAuthenticator, TokenResult } from '../token.js';
import { ExpiringCache, tokenKey } from '../token-cache.js';
import type { UserInfo } from '../../user.js';
import type { WebhookConnection } from './kubeconfig.js';

const requestTimeoutMs = 30_000;
const maxResponseBytes = 1 << 20;
const cacheCapacity = 10_000;
/** Kubernetes' DefaultAuthWebhookRetryBackoff: 500ms, ×1.5, 20% jitter, 5 attempts */
const backoff = { initialMs: 500, factor: 1.5, jitter: 0.2, attempts: 5 };

export interface WebhookOptions {
  connection: WebhookConnection;
  version: 'v1' | 'v1beta1';
  cacheTtlMs: number;
  /** the API's audiences: what a reviewed token is good for when the webhook names none */
  implicitAudiences: readonly string[];
  /** waits between retries; tests shorten it */
  sleep?: (ms: number) => Promise<void>;
}

class TransientError extends Error {}
const transientCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

interface ReviewStatus {
  authenticated?: boolean;
  user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  audiences?: string[];
  error?: string;
}

export class WebhookTokenAuthenticator implements TokenAuthenticator {
  readonly name = 'webhook';
  private readonly cache: ExpiringCache<{ result: TokenResult }>;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly options: WebhookOptions) {
    this.cache = new ExpiringCache(cacheCapacity);
    this.sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
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

  private async review(token: string, audiences: readonly string[]): Promise<ReviewStatus> {
    const body = JSON.stringify({
      apiVersion: `authentication.k8s.io/${this.options.version}`,
      kind: 'TokenReview',
      metadata: { creationTimestamp: null },
      spec: { token, ...(audiences.length > 0 ? { audiences } : {}) },
      status: { user: {} },
    });
    let delay = backoff.initialMs;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.post(body);
      } catch (err) {
        if (!(err instanceof TransientError) || attempt >= backoff.attempts) throw err;
        await this.sleep(delay * (1 + Math.random() * backoff.jitter));
        delay *= backoff.factor;
      }
    }
  }

  private post(body: string): Promise<ReviewStatus> {
    const c = this.options.connection;
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', 'content-length': String(Buffer.byteLength(body)) };
      if (c.token) headers.authorization = `Bearer ${c.token}`;
      const req = request(c.server, {
        method: 'POST', headers, ca: c.ca, cert: c.cert, key: c.key, servername: c.tlsServerName,
        rejectUnauthorized: !c.insecureSkipTlsVerify, timeout: requestTimeoutMs, agent: false,
      }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxResponseBytes) req.destroy(new Error('response too large'));
          else chunks.push(chunk);
        });
        res.on('end', () => {
          const code = res.statusCode ?? 0;
          if (code === 429 || code >= 500) { reject(new TransientError(`the server responded with ${code}`)); return; }
          if (code < 200 || code > 299) { reject(new Error(`the server responded with ${code}`)); return; }
          try {
            const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { kind?: string; status?: ReviewStatus };
            if (review.kind !== undefined && review.kind !== 'TokenReview') throw new Error(`expected a TokenReview, got ${review.kind}`);
            resolve(review.status ?? {});
          } catch (err) {
            reject(new Error(`cannot decode the response: ${(err as Error).message}`));
          }
        });
      });
      req.on('timeout', () => req.destroy(new TransientError(`timed out after ${requestTimeoutMs} ms`)));
      // connection failures are worth another attempt (certificate failures are not); messages name the server, not the token
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (err instanceof TransientError) reject(err);
        else if (transientCodes.has(err.code ?? '')) reject(new TransientError(`${c.server}: ${err.message}`));
        else reject(new Error(`${c.server}: ${err.message}`));
      });
      req.end(body);
    });
  }
}
