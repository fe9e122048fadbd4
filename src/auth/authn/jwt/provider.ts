/**
 * One OpenID provider as a JWT authenticator sees it: its discovery document (fetched over HTTPS
 * from `{issuer}/.well-known/openid-configuration` or the configured discoveryURL), whose
 * `issuer` must be ours, and its key set (jose's remote JWKS, refetched when a token names a key
 * it has not seen). Discovery is retried until it succeeds; meanwhile this issuer's tokens fail and
 * every other method keeps working. Fetched keys are kept while the provider is unreachable.
 */
import type { JWTVerifyGetKey } from 'jose';
import { loadJose } from '../jose-loader.js';
import { fetchWithCa, httpsGet } from './https-client.js';

const retryMinMs = 500;
const retryMaxMs = 10_000;
/** a token naming an unknown key refetches the set at most this often */
const refetchCooldownMs = 1_000;

export interface ProviderOptions {
  issuer: string;
  discoveryUrl?: string;
  ca?: string;
  onError(message: string): void;
}

export class OidcProvider {
  private keys: JWTVerifyGetKey | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private attempt = 0;
  private onReady: (() => void) | undefined;

  constructor(private readonly options: ProviderOptions) {}

  /** the provider's key set once discovery has succeeded */
  get keySet(): JWTVerifyGetKey | undefined { return this.keys; }

  start(onReady?: () => void): void {
    this.onReady = onReady;
    void this.discover();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private async discover(): Promise<void> {
    if (this.stopped) return;
    const { issuer, ca } = this.options;
    const url = this.options.discoveryUrl ?? `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    try {
      const res = await httpsGet(url, ca);
      if (res.status !== 200) throw new Error(`${res.status}: ${res.body.slice(0, 200)}`);
      const doc = JSON.parse(res.body) as { issuer?: unknown; jwks_uri?: unknown };
      if (doc.issuer !== issuer) {
        throw new Error(`oidc: issuer did not match the issuer returned by provider, expected ${JSON.stringify(issuer)} got ${JSON.stringify(doc.issuer)}`);
      }
      if (typeof doc.jwks_uri !== 'string' || !URL.canParse(doc.jwks_uri)) throw new Error('oidc: discovery document has no valid jwks_uri');
      const { createRemoteJWKSet, customFetch } = await loadJose();
      this.keys = createRemoteJWKSet(new URL(doc.jwks_uri), {
        [customFetch]: fetchWithCa(ca),
        cacheMaxAge: Number.POSITIVE_INFINITY,
        cooldownDuration: refetchCooldownMs,
      });
      this.onReady?.();
    } catch (err) {
      this.options.onError(`oidc authenticator: initializing plugin for ${issuer}: ${(err as Error).message}`);
      const delay = Math.min(retryMaxMs, retryMinMs * 2 ** this.attempt++);
      if (!this.stopped) this.timer = setTimeout(() => { void this.discover(); }, delay);
      this.timer?.unref();
    }
  }
}
