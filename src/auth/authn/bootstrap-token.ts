/**
 * Bootstrap tokens (`--enable-bootstrap-token-auth`): `<id>.<secret>` tokens backed by Secrets
 * `bootstrap-token-<id>` of type `bootstrap.orch.io/token` in `orch-system`, read from the read
 * model (k8s.io/kubernetes plugin/pkg/auth/authenticator/token/bootstrap). As in Kubernetes, a
 * token that fails any check is simply not recognised: the Secret's state is never revealed.
 */
import { timingSafeEqual } from 'node:crypto';
import type { UserInfo } from '../user.js';
import type { ObjectLookup } from './service-account/lookup.js';
import type { BearerToken, TokenAuthenticator, TokenResult } from './token.js';

export const bootstrapTokenNamespace = 'orch-system';
export const bootstrapTokenSecretType = 'bootstrap.orch.io/token';
export const bootstrapTokenSecretPrefix = 'bootstrap-token-';
const userPrefix = 'system:bootstrap:';
const defaultGroup = 'system:bootstrappers';
const tokenPattern = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
const groupPattern = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The token's groups: system:bootstrappers and the Secret's valid extra groups, sorted; undefined if any is invalid. */
function groupsOf(extra: string): string[] | undefined {
  const groups = new Set([defaultGroup]);
  if (extra !== '') {
    for (const group of extra.split(',')) {
      if (!groupPattern.test(group)) return undefined;
      groups.add(group);
    }
  }
  return [...groups].sort();
}

export class BootstrapTokenAuthenticator implements TokenAuthenticator {
  readonly name = 'bootstrap-token';

  constructor(private readonly lookup: Pick<ObjectLookup, 'secret'>, private readonly now: () => number = Date.now) {}

  authenticateToken(token: BearerToken): TokenResult {
    const parsed = tokenPattern.exec(token.value);
    if (!parsed) return undefined;
    const [, id, secretPart] = parsed;
    const secret = this.lookup.secret(bootstrapTokenNamespace, `${bootstrapTokenSecretPrefix}${id}`) as
      { type?: string; data?: Record<string, string>; metadata: { deletionTimestamp?: string } } | undefined;
    if (!secret || secret.metadata.deletionTimestamp || secret.type !== bootstrapTokenSecretType || !secret.data) return undefined;
    const data = (key: string): string => Buffer.from(secret.data?.[key] ?? '', 'base64').toString('utf8');
    if (!same(data('token-secret'), secretPart) || data('token-id') !== id) return undefined;
    const expiration = data('expiration');
    if (expiration !== '') {
      const at = Date.parse(expiration);
      // an unreadable expiration counts as expired
      if (Number.isNaN(at) || this.now() > at) return undefined;
    }
    if (data('usage-bootstrap-authentication') !== 'true') return undefined;
    const groups = groupsOf(data('auth-extra-groups'));
    if (!groups) return undefined;
    const user: UserInfo = { name: `${userPrefix}${id}`, groups };
    return { user };
  }
}
