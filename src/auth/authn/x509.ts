/**
 * Client certificates verified by the TLS layer against the client CA: CommonName is the user,
 * Organizations are the groups. A presented certificate that does not verify is refused (401),
 * never turned into an anonymous request. Decided once per connection, not per request.
 */
import type { TLSSocket } from 'node:tls';
import type { UserInfo } from '../user.js';
import { AuthenticationFailure, type AuthenticationRequest, type AuthenticationResult, type Authenticator } from './authenticator.js';

function asArray(v: string | string[] | undefined): string[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}

type Verdict = { user: UserInfo } | AuthenticationFailure | null;

export class X509Authenticator implements Authenticator {
  readonly name = 'x509';
  private readonly byConnection = new WeakMap<TLSSocket, Verdict>();

  authenticate({ socket }: AuthenticationRequest): AuthenticationResult {
    if (!socket) return undefined;
    let result = this.byConnection.get(socket);
    if (result === undefined) {
      result = this.verify(socket);
      this.byConnection.set(socket, result);
    }
    return result ?? undefined;
  }

  private verify(socket: TLSSocket): Verdict {
    const cert = socket.getPeerCertificate?.();
    if (!cert || Object.keys(cert).length === 0) return null;
    if (!socket.authorized) {
      return new AuthenticationFailure(`verifying certificate SN=${BigInt(`0x${cert.serialNumber}`)} failed: ${String(socket.authorizationError)}`);
    }
    // a certificate without a CommonName names nobody: not this method's
    const cn = asArray(cert.subject?.CN)[0];
    return cn ? { user: { name: cn, groups: asArray(cert.subject?.O) } } : null;
  }
}
