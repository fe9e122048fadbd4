/**
 * Audiences (k8s.io/apiserver authenticator.Audiences): a token is good for the audiences it
 * names that the caller asked for. Methods whose tokens name no audience (the token file,
 * bootstrap tokens, the OIDC issuers, which check their own) are good for the API's audiences.
 */
import { AuthenticationFailure } from './authenticator.js';
import type { TokenAuthenticator, TokenResult } from './token.js';

export function intersect(a: readonly string[], b: readonly string[]): string[] {
  const other = new Set(b);
  return a.filter((x, i) => other.has(x) && a.indexOf(x) === i);
}

/**
 * A method that knows nothing of audiences, answering only for the API's own: asked for others
 * (a TokenReview for another audience), it does not recognise the token.
 */
export function audienceAgnostic(apiAudiences: readonly string[], method: TokenAuthenticator): TokenAuthenticator {
  return {
    name: method.name,
    async authenticateToken(token, audiences): Promise<TokenResult> {
      // no audiences asked (a server without API audiences): nothing to check
      if (audiences.length === 0) return method.authenticateToken(token, audiences);
      const granted = intersect(apiAudiences, audiences);
      if (granted.length === 0) return undefined;
      const result = await method.authenticateToken(token, audiences);
      if (result === undefined || result instanceof AuthenticationFailure) return result;
      return { ...result, audiences: granted };
    },
  };
}
