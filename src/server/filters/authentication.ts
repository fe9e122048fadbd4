/**
 * Who is asking: the ordered union of authenticators names the user (or answers 401). The
 * Authorization header is removed afterwards, as kube-apiserver does, so that no later step
 * (logs, audit, proxies) sees the credential.
 */
import type { UnionAuthenticator } from '../../auth/authn/authenticator.js';
import type { Filter } from '../filter.js';

export function authenticationFilter(authenticator: UnionAuthenticator): Filter {
  return async (ctx, next) => {
    ctx.user = await authenticator.authenticate({ socket: ctx.socket, headers: ctx.req.headers, rawHeaders: ctx.req.rawHeaders, path: ctx.path });
    delete ctx.req.headers.authorization;
    await next(ctx);
  };
}
