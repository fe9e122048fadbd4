/**
 * A JWT issuer (an `--oidc-*` issuer or a `jwt` entry of the authentication configuration): a
 * token whose (unverified) `iss` is this issuer's is verified by jose against the provider's key
 * set — the algorithms allowed, the issuer, an audience, `exp` without leeway and `nbf` with five
 * minutes, as go-oidc checks them — then mapped to a user. Successes are cached by an HMAC of the
 * token for up to ten seconds, as kube-apiserver's token cache keeps them.
 */
import type { JWTPayload, JWTVerifyGetKey, JWTVerifyResult } from 'jose';
import { loadJose } from '../jose-loader.js';
import { AuthenticationFailure } from '../authenticator.js';
import type { BearerToken, TokenAuthenticator, TokenResult, TokenSuccess } from '../token.js';
import { ExpiringCache } from '../../expiring-cache.js';
import type { CompiledJwtAuthenticator } from '../config/validation.js';
import { ClaimMappingError, mapClaims } from './claim-mapping.js';
import { OidcProvider } from './provider.js';

const nbfLeewaySeconds = 5 * 60;
const successTtlMs = 10_000;
const cacheCapacity = 10_000;

export interface JwtAuthenticatorOptions {
  /** the algorithms tokens may be signed with */
  algorithms: readonly string[];
  onError(message: string): void;
  now?: () => number;
}

function failure(message: string): AuthenticationFailure {
  return new AuthenticationFailure(message);
}

/** What went wrong in verification, as go-oidc words it, without the token's values. */
function verificationFailure(jose: Awaited<ReturnType<typeof loadJose>>['errors'], err: unknown, algorithms: readonly string[]): AuthenticationFailure {
  const prefix = 'oidc: verify token: ';
  if (err instanceof jose.JWTExpired) return failure(`${prefix}oidc: token is expired`);
  if (err instanceof jose.JWTClaimValidationFailed) {
    if (err.claim === 'nbf') return failure(`${prefix}oidc: current time before the nbf (not before) time`);
    if (err.claim === 'aud') return failure(`${prefix}oidc: expected audience not in the token's audiences`);
    if (err.claim === 'exp') return failure(`${prefix}oidc: token has no expiry`);
    return failure(`${prefix}oidc: invalid ${err.claim} claim`);
  }
  if (err instanceof jose.JOSEAlgNotAllowed || err instanceof jose.JOSENotSupported) {
    return failure(`${prefix}oidc: id token signed with unsupported algorithm, expected ${JSON.stringify(algorithms)}`);
  }
  if (err instanceof jose.JWSInvalid || err instanceof jose.JWTInvalid) return failure(`${prefix}oidc: malformed jwt`);
  if (err instanceof jose.JWKSNoMatchingKey || err instanceof jose.JWSSignatureVerificationFailed || err instanceof jose.JWKSMultipleMatchingKeys) {
    return failure(`${prefix}failed to verify signature: failed to verify id token signature`);
  }
  return failure(`${prefix}failed to verify signature: fetching keys ${(err as Error).message}`);
}

export class JwtAuthenticator implements TokenAuthenticator {
  readonly name: string;
  private readonly issuer: string;
  private readonly provider: OidcProvider;
  private readonly cache: ExpiringCache<TokenSuccess>;
  private readonly now: () => number;

  constructor(private readonly authenticator: CompiledJwtAuthenticator, private readonly options: JwtAuthenticatorOptions) {
    const issuer = authenticator.config.issuer;
    this.issuer = issuer.url as string;
    this.name = `jwt ${this.issuer}`;
    this.now = options.now ?? Date.now;
    this.cache = new ExpiringCache(cacheCapacity, this.now);
    this.provider = new OidcProvider({
      issuer: this.issuer, discoveryUrl: issuer.discoveryURL, ca: issuer.certificateAuthority, onError: options.onError,
    });
  }

  /** Starts discovery; `onReady` is told once the provider's keys can be fetched. */
  start(onReady?: () => void): this {
    this.provider.start(onReady);
    return this;
  }

  stop(): void {
    this.provider.stop();
  }

  async authenticateToken(token: BearerToken): Promise<TokenResult> {
    const cached = this.cache.get(token.key);
    if (cached) return cached;
    // a token of another issuer is another method's
    const unverified = await token.unverifiedClaims();
    if (unverified?.iss !== this.issuer) return undefined;
    const { errors: jose } = await loadJose();

    const keys = this.provider.keySet;
    if (!keys) return failure('oidc: authenticator not initialized');

    let claims: JWTPayload;
    try {
      claims = (await this.verify(token.value, keys)).payload;
    } catch (err) {
      return verificationFailure(jose, err, this.options.algorithms);
    }
    // go-oidc allows no leeway on expiry
    if (typeof claims.exp !== 'number' || claims.exp < Math.floor(this.now() / 1000)) return failure('oidc: verify token: oidc: token is expired');

    let result: TokenSuccess;
    try {
      result = { user: mapClaims(this.authenticator, claims) };
    } catch (err) {
      if (err instanceof ClaimMappingError) return failure(err.message);
      throw err;
    }
    this.cache.set(token.key, result, Math.min(successTtlMs, claims.exp * 1000 - this.now()));
    return result;
  }

  private async verify(token: string, keys: JWTVerifyGetKey): Promise<JWTVerifyResult> {
    const { errors: jose, jwtVerify } = await loadJose();
    const options = {
      issuer: this.issuer,
      audience: this.authenticator.config.issuer.audiences ?? [],
      algorithms: [...this.options.algorithms],
      clockTolerance: nbfLeewaySeconds,
      requiredClaims: ['exp'],
      currentDate: new Date(this.now()),
    };
    try {
      return await jwtVerify(token, keys, options);
    } catch (err) {
      // a token without `kid` that several keys could verify: go-oidc tries each
      if (!(err instanceof jose.JWKSMultipleMatchingKeys)) throw err;
      for await (const candidate of err) {
        try {
          return await jwtVerify(token, candidate, options);
        } catch (inner) {
          if (!(inner instanceof jose.JWSSignatureVerificationFailed)) throw inner;
        }
      }
      throw new jose.JWSSignatureVerificationFailed();
    }
  }
}
