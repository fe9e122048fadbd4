/**
 * Bearer tokens: the interface every token method implements, and their ordered union (the
 * static token file, service-account tokens, bootstrap tokens, JWT issuers, the webhook).
 * The first method that accepts a token decides; a token no method accepts is invalid.
 */
import type { JWTPayload } from 'jose';
import type { UserInfo } from '../user.js';
import { aggregate, AuthenticationFailure } from './authenticator.js';
import { loadJose } from './jose-loader.js';
import { tokenKey } from './token-cache.js';

/**
 * One presented token, with what several methods derive from it computed once per request: its
 * cache key, and its payload read (unverified) when it is a JWT.
 */
export class BearerToken {
  private cacheKey: string | undefined;
  private payload: Promise<JWTPayload | undefined> | undefined;

  constructor(readonly value: string) {}

  /** the salted hash the token caches are keyed by */
  get key(): string {
    return (this.cacheKey ??= tokenKey(this.value));
  }

  /** the JWT's claims as written, not verified; undefined when the token is no JWT */
  unverifiedClaims(): Promise<JWTPayload | undefined> {
    this.payload ??= loadJose().then(({ decodeJwt }) => {
      try { return decodeJwt(this.value); } catch { return undefined; }
    });
    return this.payload;
  }
}

export interface TokenSuccess {
  user: UserInfo;
  /** the audiences the token is good for, of those asked */
  audiences?: readonly string[];
}

/** undefined: not this method's token (the next one is asked); a failure: this method's, and invalid. */
export type TokenResult = TokenSuccess | AuthenticationFailure | undefined;

export interface TokenAuthenticator {
  readonly name: string;
  /**
   * `audiences`: what the token must be good for (the API's own audiences for a request, a
   * TokenReview's own list); empty when the server has none and audiences are not checked.
   */
  authenticateToken(token: BearerToken, audiences: readonly string[]): TokenResult | Promise<TokenResult>;
}

export class TokenUnion implements TokenAuthenticator {
  readonly name = 'token-union';

  constructor(private readonly methods: readonly TokenAuthenticator[]) {}

  get size(): number { return this.methods.length; }

  async authenticateToken(token: BearerToken, audiences: readonly string[]): Promise<TokenResult> {
    const failures: AuthenticationFailure[] = [];
    for (const method of this.methods) {
      const result = await method.authenticateToken(token, audiences);
      if (result === undefined) continue;
      if (result instanceof AuthenticationFailure) { failures.push(result); continue; }
      return result;
    }
    return aggregate(failures);
  }
}
