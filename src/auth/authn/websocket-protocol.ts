/**
 * A bearer token carried in a WebSocket subprotocol, for clients that cannot set headers on an
 * upgrade (browsers): `base64url.bearer.authorization.orch.io.<token in unpadded base64url>`, or
 * Kubernetes' `...authorization.k8s.io.` that its clients send. The protocol is removed once read,
 * so it is never echoed back.
 */
import { AuthenticationFailure, type AuthenticationRequest, type AuthenticationResult, type Authenticator } from './authenticator.js';
import { BearerToken, type TokenAuthenticator } from './token.js';

const prefixes = ['base64url.bearer.authorization.orch.io.', 'base64url.bearer.authorization.k8s.io.'];
const base64url = /^[A-Za-z0-9_-]+$/;

export class WebSocketProtocolAuthenticator implements Authenticator {
  readonly name = 'websocket-protocol';

  constructor(private readonly tokens: TokenAuthenticator, private readonly apiAudiences: readonly string[]) {}

  async authenticate({ headers }: AuthenticationRequest): Promise<AuthenticationResult> {
    if (headers.upgrade?.toLowerCase() !== 'websocket') return undefined;
    const offered = headers['sec-websocket-protocol'];
    if (!offered) return undefined;
    const protocols = offered.split(',').map((p) => p.trim());
    let encoded: string | undefined;
    const kept = protocols.filter((p) => {
      const prefix = prefixes.find((x) => p.startsWith(x));
      if (!prefix) return true;
      encoded = p.slice(prefix.length);
      return false;
    });
    if (encoded === undefined) return undefined;
    if (!base64url.test(encoded)) return new AuthenticationFailure('invalid base64.bearer.authorization token encoding');
    const token = Buffer.from(encoded, 'base64url').toString('utf8');
    if (token === '') return new AuthenticationFailure('invalid bearer token');
    const result = await this.tokens.authenticateToken(new BearerToken(token), this.apiAudiences);
    if (result === undefined) return new AuthenticationFailure('invalid bearer token');
    if (result instanceof AuthenticationFailure) return result;
    if (kept.length > 0) headers['sec-websocket-protocol'] = kept.join(', ');
    else delete headers['sec-websocket-protocol'];
    return { user: result.user };
  }
}
