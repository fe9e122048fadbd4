/**
 * TokenReview's answer (k8s.io/kubernetes pkg/registry/authentication/tokenreview): the token
 * checked by the server's token methods for the audiences asked (the API's by default); a user
 * gains system:authenticated as any authenticated request does.
 */
import type { TokenReviewer, TokenReviewResult } from '../../api/authentication/token-review.js';
import { errors } from '../../status/status-error.js';
import { authenticatedGroup } from '../user.js';
import { intersect } from './audiences.js';
import { AuthenticationFailure } from './authenticator.js';
import { BearerToken, type TokenAuthenticator } from './token.js';

export class TokenReviewService implements TokenReviewer {
  /** `tokens` undefined: no token method is configured, and reviews come back unauthenticated */
  constructor(private readonly tokens: TokenAuthenticator | undefined, private readonly apiAudiences: readonly string[]) {}

  async review(token: string, audiences: readonly string[]): Promise<TokenReviewResult> {
    if (!this.tokens) return {};
    const asked = audiences.length > 0 ? audiences : this.apiAudiences;
    const result = await this.tokens.authenticateToken(new BearerToken(token), asked);
    if (result === undefined) return { error: 'invalid bearer token' };
    if (result instanceof AuthenticationFailure) return { error: result.reason };
    if (asked.length > 0 && intersect(asked, result.audiences ?? []).length === 0) throw errors.internal(new Error('error validating audiences'));
    const groups = result.user.groups.includes(authenticatedGroup) ? result.user.groups : [...result.user.groups, authenticatedGroup];
    return { user: { ...result.user, groups }, audiences: result.audiences ? [...result.audiences] : undefined };
  }
}
