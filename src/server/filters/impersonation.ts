/**
 * Impersonation (`Impersonate-User`, `-Group`, `-Uid`, `-Extra-<key>`): each requested attribute
 * is authorized as the `impersonate` verb on users / serviceaccounts / groups / uids /
 * userextras through the authorization chain, then the request continues as the impersonated
 * user (k8s.io/apiserver's WithImpersonation).
 */
import type { Attributes, Authorizer } from '../../auth/authz/authorizer.js';
import { forbidden } from '../../auth/authz/forbidden.js';
import { anonymousUserName, authenticatedGroup, unauthenticatedGroup, type UserInfo } from '../../auth/user.js';
import { errors } from '../../status/status-error.js';
import type { Filter } from '../filter.js';

const extraPrefix = 'impersonate-extra-';
const authenticationGroup = 'authentication.k8s.io';
const serviceAccountUser = /^system:serviceaccount:([^:]+):([^:]+)$/;

function headerValues(v: string | string[] | undefined): string[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? v : v.split(',').map((x) => x.trim()).filter((x) => x !== '');
}

interface Impersonation { user?: string; uid?: string; groups: string[]; extra: Record<string, string[]> }

/** The impersonation the headers ask for; undefined when they ask for none. */
function requested(headers: Record<string, string | string[] | undefined>): Impersonation | undefined {
  const user = headers['impersonate-user'];
  const uid = headers['impersonate-uid'];
  const asked: Impersonation = {
    user: typeof user === 'string' ? user : user?.[0],
    uid: typeof uid === 'string' ? uid : uid?.[0],
    // several Impersonate-Group headers arrive as an array (Node keeps repeated unknown headers joined by ', ')
    groups: headerValues(headers['impersonate-group']),
    extra: Object.create(null) as Record<string, string[]>,
  };
  for (const [name, value] of Object.entries(headers)) {
    if (!name.startsWith(extraPrefix)) continue;
    let key: string;
    try { key = decodeURIComponent(name.slice(extraPrefix.length)).toLowerCase(); } catch {
      throw errors.badRequest(`malformed extra key for impersonation request: ${JSON.stringify(name.slice(extraPrefix.length))}`);
    }
    asked.extra[key] = [...(asked.extra[key] ?? []), ...headerValues(value)];
  }
  const any = asked.user !== undefined || asked.uid !== undefined || asked.groups.length > 0 || Object.keys(asked.extra).length > 0;
  if (!any) return undefined;
  if (asked.user === undefined) {
    throw errors.badRequest('requested impersonation of groups, extra or uid without impersonating a user');
  }
  return asked;
}

function attributes(actor: UserInfo, resource: string, name: string, extra?: { namespace?: string; subresource?: string; apiGroup?: string }): Attributes {
  return {
    user: actor, verb: 'impersonate', isResourceRequest: true, path: '', namespace: extra?.namespace ?? '',
    apiGroup: extra?.apiGroup ?? '', apiVersion: '', resource, subresource: extra?.subresource ?? '', name,
  };
}

export function impersonationFilter(authorizer: Authorizer): Filter {
  return async (ctx, next) => {
    const asked = requested(ctx.req.headers);
    if (!asked) { await next(); return; }
    const actor = ctx.user as UserInfo;
    const checks: Attributes[] = [];
    let groups = [...asked.groups];
    const name = asked.user as string;
    const sa = serviceAccountUser.exec(name);
    if (sa) {
      checks.push(attributes(actor, 'serviceaccounts', sa[2], { namespace: sa[1] }));
      if (groups.length === 0) groups = ['system:serviceaccounts', `system:serviceaccounts:${sa[1]}`];
    } else {
      checks.push(attributes(actor, 'users', name));
    }
    for (const group of asked.groups) checks.push(attributes(actor, 'groups', group));
    for (const [key, values] of Object.entries(asked.extra)) {
      for (const value of values) checks.push(attributes(actor, 'userextras', value, { subresource: key, apiGroup: authenticationGroup }));
    }
    if (asked.uid !== undefined) checks.push(attributes(actor, 'uids', asked.uid, { apiGroup: authenticationGroup }));
    for (const check of checks) {
      const d = await authorizer.authorize(check);
      if (d.decision !== 'Allow') throw forbidden(check, d.reason);
    }
    const implicit = name === anonymousUserName ? unauthenticatedGroup : authenticatedGroup;
    if (!groups.includes(authenticatedGroup) && !groups.includes(unauthenticatedGroup)) groups.push(implicit);
    const user: UserInfo = { name, groups };
    if (asked.uid !== undefined) user.uid = asked.uid;
    if (Object.keys(asked.extra).length > 0) user.extra = asked.extra;
    ctx.impersonator = actor;
    ctx.user = user;
    for (const header of Object.keys(ctx.req.headers)) if (header.startsWith('impersonate-')) delete ctx.req.headers[header];
    await next();
  };
}
