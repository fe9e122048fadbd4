/** Authentication and authorization as the configuration asks for them. */
import type { Logger } from 'pino';
import { BearerTokenAuthenticator } from '../auth/authn/bearer-token.js';
import { UnionAuthenticator } from '../auth/authn/authenticator.js';
import { X509Authenticator } from '../auth/authn/x509.js';
import { privilegedGroupAuthorizer, UnionAuthorizer } from '../auth/authz/authorizer.js';
import { authorizersFor } from '../auth/authz/modes.js';
import type { ServerConfig } from '../config/flags.js';

export function authentication(config: ServerConfig, log: Logger): UnionAuthenticator {
  // kube-apiserver switches anonymous requests off when AlwaysAllow would let them do anything
  const anonymous = config.anonymousAuth && !config.authorizationModes.includes('AlwaysAllow');
  if (config.anonymousAuth && !anonymous) {
    log.warn('AnonymousAuth is not allowed with the AlwaysAllow authorizer. Resetting AnonymousAuth to false. You should use a different authorizer');
  }
  return new UnionAuthenticator([new X509Authenticator(), new BearerTokenAuthenticator([])], { anonymous });
}

export function authorization(config: ServerConfig): UnionAuthorizer {
  return new UnionAuthorizer([privilegedGroupAuthorizer, ...authorizersFor(config.authorizationModes)]);
}
