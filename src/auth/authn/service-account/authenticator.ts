/**
 * Service-account tokens (k8s.io/kubernetes pkg/serviceaccount jwt.go): a JWT whose issuer is
 * one of ours, signed by one of the verification keys (jose verifies), good for the audiences
 * asked, and standing on objects that still exist (the validators). Verified claims are cached by
 * an HMAC of the token until the token expires; the objects are looked up on every request, in
 * the read model, so a deleted ServiceAccount's token stops working at once.
 */
import type { JWTPayload } from 'jose';
import { loadJose } from '../jose-loader.js';
import { AuthenticationFailure } from '../authenticator.js';
import { intersect } from '../audiences.js';
import type { UserInfo } from '../../user.js';
import type { BearerToken, TokenAuthenticator, TokenResult } from '../token.js';
import { ExpiringCache } from '../../expiring-cache.js';
import { serviceAccountUser, type ServiceAccountInfo } from './claims.js';
import type { VerificationKey } from './keys.js';

/** go-jose's default leeway for exp, nbf and iat */
const leewaySeconds = 60;
/** how long verified claims of a token without expiry (legacy tokens) stay cached */
const noExpiryCacheMs = 10 * 60_000;
const cacheCapacity = 10_000;

export interface TokenValidator {
  /** the objects the token stands on, checked now; a failure when any is gone or replaced */
  validate(token: string, claims: JWTPayload, nowMs: number): ServiceAccountInfo | AuthenticationFailure;
}

export interface ServiceAccountAuthenticatorOptions {
  name: string;
  issuers: readonly string[];
  keys: readonly VerificationKey[];
  /** the API's audiences: what a token naming none is good for */
  implicitAudiences: readonly string[];
  validator: TokenValidator;
  now?: () => number;
}

/** Go's %q of a string list: `["a" "b"]` */
function quoteList(values: readonly string[]): string {
  return `[${values.map((v) => JSON.stringify(v)).join(' ')}]`;
}

function audiencesOf(claims: JWTPayload): string[] {
  if (typeof claims.aud === 'string') return [claims.aud];
  return Array.isArray(claims.aud) ? claims.aud.filter((a): a is string => typeof a === 'string') : [];
}

export class ServiceAccountTokenAuthenticator implements TokenAuthenticator {
  readonly name: string;
  private readonly issuers: ReadonlySet<string>;
  /** verified claims, and the user they name once a validation has passed (the user follows from the claims alone) */
  private readonly verified: ExpiringCache<{ claims: JWTPayload; user?: UserInfo }>;
  private readonly now: () => number;

  constructor(private readonly options: ServiceAccountAuthenticatorOptions) {
    this.name = options.name;
    this.issuers = new Set(options.issuers);
    this.now = options.now ?? Date.now;
    this.verified = new ExpiringCache(cacheCapacity, this.now);
  }

  async authenticateToken(token: BearerToken, audiences: readonly string[]): Promise<TokenResult> {
    let entry = this.verified.get(token.key);
    if (!entry) {
      // not a JWT of one of our issuers: another method's token
      const unverified = await token.unverifiedClaims();
      if (typeof unverified?.iss !== 'string' || !this.issuers.has(unverified.iss)) return undefined;
      const verified = await this.verify(token.value);
      if (verified === undefined || verified instanceof AuthenticationFailure) return verified;
      entry = { claims: verified };
      const ttl = typeof verified.exp === 'number' ? (verified.exp + leewaySeconds) * 1000 - this.now() : noExpiryCacheMs;
      this.verified.set(token.key, entry, Math.min(ttl, noExpiryCacheMs));
    }
    const claims = entry.claims;

    const nowMs = this.now();
    if (typeof claims.exp === 'number' && nowMs / 1000 - leewaySeconds > claims.exp) return new AuthenticationFailure('service account token has expired');
    let tokenAudiences = audiencesOf(claims);
    const implicit = this.options.implicitAudiences;
    // a token naming no audience (a legacy token) is good for the API's own
    if (tokenAudiences.length === 0) tokenAudiences = [...implicit];
    const requested = audiences.length > 0 ? audiences : implicit;
    const granted = intersect(tokenAudiences, requested);
    if (granted.length === 0 && implicit.length > 0) {
      return new AuthenticationFailure(`token audiences ${quoteList(tokenAudiences)} is invalid for the target audiences ${quoteList(requested)}`);
    }
    // the objects the token stands on are checked on every request
    const info = this.options.validator.validate(token.value, claims, nowMs);
    if (info instanceof AuthenticationFailure) return info;
    entry.user ??= serviceAccountUser(info);
    return { user: entry.user, audiences: granted };
  }

  /** The token's claims once a key verifies its signature and its times hold. */
  private async verify(token: string): Promise<JWTPayload | AuthenticationFailure | undefined> {
    const { decodeProtectedHeader, errors: jose, jwtVerify } = await loadJose();
    let kid: string | undefined;
    try {
      kid = decodeProtectedHeader(token).kid;
    } catch {
      return undefined;
    }
    const keys = this.options.keys;
    const hinted = kid === undefined ? [] : keys.filter((k) => k.kid === kid);
    const failures: string[] = [];
    for (const candidate of hinted.length > 0 ? hinted : keys) {
      try {
        const { payload } = await jwtVerify(token, candidate.key, {
          algorithms: [candidate.alg], clockTolerance: leewaySeconds, currentDate: new Date(this.now()),
        });
        if (typeof payload.iat === 'number' && payload.iat > this.now() / 1000 + leewaySeconds) {
          return new AuthenticationFailure('service account token claims could not be validated due to unexpected validation error');
        }
        return payload;
      } catch (err) {
        if (err instanceof jose.JWTExpired) return new AuthenticationFailure('service account token has expired');
        if (err instanceof jose.JWTClaimValidationFailed) {
          return new AuthenticationFailure(err.claim === 'nbf'
            ? 'service account token is not valid yet'
            : 'service account token claims could not be validated due to unexpected validation error');
        }
        // a token that does not parse, or names an algorithm no key of ours signs with, is not ours
        if (err instanceof jose.JWSInvalid || err instanceof jose.JWTInvalid || err instanceof jose.JOSENotSupported) return undefined;
        failures.push(err instanceof jose.JOSEAlgNotAllowed ? `unexpected signature algorithm for key ${candidate.kid}` : 'crypto: signature verification failed');
      }
    }
    return new AuthenticationFailure(failures.length === 1 ? failures[0] : `[${failures.join(', ')}]`);
  }
}
