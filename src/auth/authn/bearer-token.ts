/**
 * The `Authorization: Bearer <token>` header (k8s.io/apiserver's bearertoken authenticator),
 * handed to the token methods for the API's audiences. A bearer token none of them accepts is
 * invalid (401), never anonymous.
 */
import { AuthenticationFailure, type AuthenticationRequest, type AuthenticationResult, type Authenticator } from './authenticator.js';
import { BearerToken, type TokenAuthenticator } from './token.js';

const invalidToken = new AuthenticationFailure('invalid bearer token');

/**
 * The token of an Authorization header, split as Kubernetes splits it: at most three
 * space-separated parts, the scheme case-insensitive, the second part the token; an empty token
 * (two spaces) is no token at all.
 */
export function bearerToken(header: string | undefined): string | undefined {
  const auth = header?.trim();
  if (!auth) return undefined;
  const parts = auth.split(' ', 3);
  if (parts.length < 2 || parts[0].toLowerCase() !== 'bearer') return undefined;
  return parts[1] === '' ? undefined : parts[1];
}

export class BearerTokenAuthenticator implements Authenticator {
  readonly name = 'bearer-token';

  constructor(private readonly tokens: TokenAuthenticator, private readonly apiAudiences: readonly string[]) {}

  authenticate({ headers }: AuthenticationRequest): AuthenticationResult | Promise<AuthenticationResult> {
    const token = bearerToken(headers.authorization);
    // no token: not this method's request, answered without a promise (the union goes on at once)
    if (token === undefined) return undefined;
    const result = this.tokens.authenticateToken(new BearerToken(token), this.apiAudiences);
    return result instanceof Promise ? result.then((r) => r ?? invalidToken) : (result ?? invalidToken);
  }
}
