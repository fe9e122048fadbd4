/**
 * Client certificates verified by the TLS layer against the client CA: CommonName is the user,
 * Organizations are the groups. A presented certificate that does not verify is refused (401),
 * never turned into an anonymous request. Decided once per connection, not per request.
 */
import type { TLSSocket } from 'node:tls';
import { errors, type StatusError } from '../../status/status-error.js';
import type { AuthenticationRequest, AuthenticationResult, Authenticator } from './authenticator.js';

function asArray(v: string | string[] | undefined): string[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}

export class X509Authenticator implements Authenticator {
  readonly name = 'x509';
  private readonly byConnection = new WeakMap<TLSSocket, { user: { name: string; groups: string[] } } | StatusError | null>();

  authenticate({ socket }: AuthenticationRequest): AuthenticationResult {
    if (!socket) return undefined;
    let result = this.byConnection.get(socket);
    if (result === undefined) {
      result = this.verify(socket);
      this.byConnection.set(socket, result);
    }
    return result ?? undefined;
  }

  private verify(socket: TLSSocket): { user: { name: string; groups: string[] } } | StatusError | null {
    const cert = socket.getPeerCertificate?.();
    if (!cert || Object.keys(cert).length === 0) return null;
    if (!socket.authorized) return errors.unauthorized();
    const cn = asArray(cert.subject?.CN)[0];
    return cn ? { user: { name: cn, groups: asArray(cert.subject?.O) } } : errors.unauthorized();
  }
}
