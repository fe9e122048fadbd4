/**
 * Who is asking: one interface every authentication method implements, and the ordered union the
 * pipeline's authentication filter calls (k8s.io/apiserver's union authenticator).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { errors, StatusError } from '../../status/status-error.js';
import { anonymousUser, authenticatedGroup, unauthenticatedGroup, type UserInfo } from '../user.js';

export interface AuthenticationRequest {
  /** the TLS connection (its verified client certificate); undefined for in-process requests */
  socket: TLSSocket | undefined;
  headers: IncomingHttpHeaders;
  path: string;
}

/**
 * `undefined`: this method does not recognise the credential (the next one is asked);
 * a StatusError: the credential is this method's and is invalid (401, no other method is asked
 * to turn it into another user).
 */
export type AuthenticationResult = { user: UserInfo } | StatusError | undefined;

export interface Authenticator {
  /** the method's name, for logs and metrics */
  readonly name: string;
  authenticate(request: AuthenticationRequest): AuthenticationResult | Promise<AuthenticationResult>;
}

export interface UnionOptions {
  /** requests no method recognised (and none refused) become system:anonymous */
  anonymous: boolean;
}

/**
 * The methods in order: the first that recognises the credential decides. An error from any
 * method is final, as kube-apiserver's fail-on-error union in front of the anonymous
 * authenticator makes it; every recognised user gains system:authenticated.
 */
export class UnionAuthenticator {
  constructor(private readonly methods: readonly Authenticator[], private readonly options: UnionOptions) {}

  async authenticate(request: AuthenticationRequest): Promise<UserInfo> {
    let failure: StatusError | undefined;
    for (const method of this.methods) {
      const result = await method.authenticate(request);
      if (result === undefined) continue;
      if (result instanceof StatusError) { failure ??= result; continue; }
      return withAuthenticatedGroup(result.user);
    }
    if (failure) throw failure;
    if (this.options.anonymous) return anonymousUser;
    throw errors.unauthorized();
  }
}

function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (user.groups.includes(authenticatedGroup) || user.groups.includes(unauthenticatedGroup)) return user;
  return { ...user, groups: [...user.groups, authenticatedGroup] };
}
