/**
 * The `Authorization: Bearer <token>` header, handed to the token methods in order (static token
 * file, service-account tokens, OIDC, webhook as they are configured). A bearer token none of
 * them accepts is invalid (401), never anonymous.
 */
import { errors } from '../../status/status-error.js';
import type { UserInfo } from '../user.js';
import type { AuthenticationRequest, AuthenticationResult, Authenticator } from './authenticator.js';

/** One way of turning a token into a user: undefined when the token is not of its kind. */
export interface TokenAuthenticator {
  readonly name: string;
  authenticateToken(token: string): UserInfo | undefined | Promise<UserInfo | undefined>;
}

const bearer = /^bearer\s+(\S+)\s*$/i;

export class BearerTokenAuthenticator implements Authenticator {
  readonly name = 'bearer-token';

  constructor(private readonly tokens: readonly TokenAuthenticator[]) {}

  async authenticate({ headers }: AuthenticationRequest): Promise<AuthenticationResult> {
    const header = headers.authorization;
    if (header === undefined || !/^bearer\s/i.test(header)) return undefined;
    const token = bearer.exec(header)?.[1];
    if (token) {
      for (const method of this.tokens) {
        const user = await method.authenticateToken(token);
        if (user) return { user };
      }
    }
    return errors.unauthorized();
  }
}
