/**
 * Who is asking. Client certificates verified by the TLS layer against the client CA name the
 * user (CommonName) and groups (Organizations). A credential that cannot be verified is 401 even
 * when anonymous requests are allowed, as kube-apiserver's fail-on-error union does; a request
 * with no credential is anonymous if allowed, else 401.
 */
import type { TLSSocket } from 'node:tls';
import { errors, type StatusError } from '../status/status-error.js';
import { anonymousUser, authenticatedGroup, type UserInfo } from './user.js';

export interface AuthenticatorOptions { anonymous: boolean }

export interface RequestCredentials {
  socket: TLSSocket | undefined;
  authorization: string | undefined;
}

function asArray(v: string | string[] | undefined): string[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}

export class Authenticator {
  /** a connection's certificate is checked once, not per request */
  private readonly byConnection = new WeakMap<TLSSocket, UserInfo | StatusError | null>();

  constructor(private readonly options: AuthenticatorOptions) {}

  authenticate(c: RequestCredentials): UserInfo | StatusError {
    const fromCert = c.socket ? this.certificateUser(c.socket) : null;
    if (fromCert) return fromCert;
    if (c.authorization !== undefined && /^bearer\s/i.test(c.authorization)) {
      // no token authenticator accepts it: an invalid credential, never anonymous
      return errors.unauthorized();
    }
    return this.options.anonymous ? anonymousUser : errors.unauthorized();
  }

  private certificateUser(socket: TLSSocket): UserInfo | StatusError | null {
    const cached = this.byConnection.get(socket);
    if (cached !== undefined) return cached;
    let result: UserInfo | StatusError | null = null;
    const cert = socket.getPeerCertificate?.();
    if (cert && Object.keys(cert).length > 0) {
      if (!socket.authorized) {
        result = errors.unauthorized();
      } else {
        const cn = asArray(cert.subject?.CN)[0];
        result = cn
          ? { name: cn, groups: [...asArray(cert.subject?.O), authenticatedGroup] }
          : errors.unauthorized();
      }
    }
    this.byConnection.set(socket, result);
    return result;
  }
}
