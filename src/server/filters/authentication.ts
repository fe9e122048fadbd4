/**
 * Who is asking: the ordered union of authenticators names the user (or answers 401). The
 * Authorization header is removed afterwards, as kube-apiserver does, so that no later step
 * (logs, audit, proxies) sees the credential.
 */
import type { UserInfo } from '../../auth/user.js';
import type { UnionAuthenticator } from '../../auth/authn/authenticator.js';
import type { Filter, Handler } from '../filter.js';
import type { RequestContext } from '../request-context.js';

function proceed(user: UserInfo, ctx: RequestContext, next: Handler): Promise<void> {
  ctx.user = user;
  delete ctx.req.headers.authorization;
  return next(ctx);
}

export function authenticationFilter(authenticator: UnionAuthenticator): Filter {
  return (ctx, next) => {
    const user = authenticator.authenticate({ socket: ctx.socket, headers: ctx.req.headers, rawHeaders: ctx.req.rawHeaders, path: ctx.path });
    // a certificate or a header-less request is known at once: no promise between the filters
    return user instanceof Promise ? user.then((u) => proceed(u, ctx, next)) : proceed(user, ctx, next);
  };
}
