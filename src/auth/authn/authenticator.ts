/**
 * Who is asking: one interface every authentication method implements, and the ordered union the
 * pipeline's authentication filter calls (k8s.io/apiserver's union authenticator, the group adder
 * and the fail-on-error union in front of the anonymous authenticator).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { errors } from '../../status/status-error.js';
import { authenticatedGroup, unauthenticatedGroup, type UserInfo } from '../user.js';

export interface AuthenticationRequest {
  /** the TLS connection (its verified client certificate); undefined for in-process requests */
  socket: TLSSocket | undefined;
  headers: IncomingHttpHeaders;
  /** the headers as received, name and value alternating, repeated headers kept apart */
  rawHeaders?: readonly string[];
  path: string;
}

/**
 * A credential a method recognised and refuses. The reason is logged and shown in TokenReview
 * status: it names claims, objects and certificates, never a token, a key or a claim's value.
 */
export class AuthenticationFailure {
  constructor(readonly reason: string) {}
}

/** Failures of several methods in one, as Kubernetes aggregates errors: `[a, b]`. */
export function aggregate(failures: readonly AuthenticationFailure[]): AuthenticationFailure | undefined {
  if (failures.length === 0) return undefined;
  if (failures.length === 1) return failures[0];
  return new AuthenticationFailure(`[${failures.map((f) => f.reason).join(', ')}]`);
}

/**
 * `undefined`: this method does not recognise the credential (the next one is asked);
 * an AuthenticationFailure: the credential is this method's and is invalid.
 */
export type AuthenticationResult = { user: UserInfo } | AuthenticationFailure | undefined;

export interface Authenticator {
  /** the method's name, for logs and metrics */
  readonly name: string;
  authenticate(request: AuthenticationRequest): AuthenticationResult | Promise<AuthenticationResult>;
}

export interface UnionOptions {
  /** asked last, when no method recognised the request and none refused it */
  anonymous?: Authenticator;
  /** told why a request was refused (for the log) */
  onFailure?(failure: AuthenticationFailure, request: AuthenticationRequest): void;
}

/**
 * The methods in order: the first that recognises the credential decides, a refusal by one does
 * not stop the others (a client certificate may be good where a proxy's headers are not). When
 * none accepts, any refusal is final: a bad credential is never anonymous. Every recognised user
 * gains system:authenticated.
 */
export class UnionAuthenticator {
  /**
   * Each recognised user with system:authenticated added, made once per user object: methods
   * answer the same object for a connection's certificate or a cached token, and so does this,
   * which lets later stages remember per-user work (priority and fairness' subject matching).
   */
  private readonly authenticated = new WeakMap<UserInfo, UserInfo>();

  constructor(private readonly methods: readonly Authenticator[], private readonly options: UnionOptions = {}) {}

  /** The user, synchronously while the methods asked answer synchronously (a certificate, a cached token). */
  authenticate(request: AuthenticationRequest): UserInfo | Promise<UserInfo> {
    return this.askFrom(0, request, []);
  }

  private askFrom(first: number, request: AuthenticationRequest, failures: AuthenticationFailure[]): UserInfo | Promise<UserInfo> {
    for (let i = first; i < this.methods.length; i++) {
      const result = this.methods[i].authenticate(request);
      if (result instanceof Promise) return result.then((r) => this.recognised(r, failures) ?? this.askFrom(i + 1, request, failures));
      const user = this.recognised(result, failures);
      if (user) return user;
    }
    return this.unrecognised(request, failures);
  }

  /** The user a method's answer names, with system:authenticated; undefined when it names none (a refusal is noted). */
  private recognised(result: AuthenticationResult, failures: AuthenticationFailure[]): UserInfo | undefined {
    if (result === undefined) return undefined;
    if (result instanceof AuthenticationFailure) { failures.push(result); return undefined; }
    let user = this.authenticated.get(result.user);
    if (!user) this.authenticated.set(result.user, (user = withAuthenticatedGroup(result.user)));
    return user;
  }

  /** No method recognised the request: anonymous unless one refused it, else 401. */
  private async unrecognised(request: AuthenticationRequest, failures: AuthenticationFailure[]): Promise<UserInfo> {
    const failure = aggregate(failures);
    if (!failure) {
      const anonymous = await this.options.anonymous?.authenticate(request);
      if (anonymous && !(anonymous instanceof AuthenticationFailure)) return anonymous.user;
    }
    if (failure) this.options.onFailure?.(failure, request);
    throw errors.unauthorized();
  }
}

function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (user.groups.includes(authenticatedGroup) || user.groups.includes(unauthenticatedGroup)) return user;
  return { ...user, groups: [...user.groups, authenticatedGroup] };
}
