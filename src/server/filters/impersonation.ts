/**
 * Impersonation (`Impersonate-User`, `-Group`, `-Uid`, `-Extra-<key>`): each requested attribute
 * is authorized as the `impersonate` verb on users / serviceaccounts / groups / uids /
 * userextras through the authorization chain, then the request continues as the impersonated
 * user (k8s.io/apiserver's WithImpersonation, 1.32).
 */
import type { Attributes, Authorizer } from '../../auth/authz/authorizer.js';
import { forbidden } from '../../auth/authz/forbidden.js';
import { anonymousUserName, authenticatedGroup, unauthenticatedGroup, type UserInfo } from '../../auth/user.js';
import { StatusError } from '../../status/status-error.js';
import type { Filter, Handler } from '../filter.js';
import type { RequestContext } from '../request-context.js';

const extraPrefix = 'impersonate-extra-';
const authenticationGroup = 'authentication.k8s.io';
const serviceAccountUser = /^system:serviceaccount:([^:]+):([^:]+)$/;

interface Impersonation { user?: string; uid?: string; groups: string[]; extra: Record<string, string[]> }

/** Every value of every header, in order, repeated headers kept apart (Go's http.Header). */
function headerValues(rawHeaders: readonly string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i].toLowerCase();
    if (!name.startsWith('impersonate-')) continue;
    out.set(name, [...(out.get(name) ?? []), rawHeaders[i + 1]]);
  }
  return out;
}

/** Go's url.PathUnescape of an extra key; a malformed escape keeps the key as sent. */
function unescapeExtraKey(encoded: string): string {
  try { return decodeURIComponent(encoded); } catch { return encoded; }
}

/** Go's %v of the ObjectReferences Kubernetes builds for the request, for its error message. */
function describe(asked: Impersonation): string {
  const ref = (kind: string, name: string, apiVersion = '', fieldPath = '') => `{${kind}  ${name}  ${apiVersion}  ${fieldPath}}`;
  const refs = [
    ...asked.groups.map((g) => ref('Group', g)),
    ...Object.entries(asked.extra).flatMap(([key, values]) => values.map((v) => ref('UserExtra', v, `${authenticationGroup}/v1`, key))),
    ...(asked.uid !== undefined ? [ref('UID', asked.uid, `${authenticationGroup}/v1`)] : []),
  ];
  return `[${refs.join(' ')}]`;
}

const impersonatePrefix = 'impersonate-';

/** Whether any header name starts with `Impersonate-`: most requests carry none and pay only this scan. */
function asksImpersonation(rawHeaders: readonly string[]): boolean {
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    // 'i' or 'I' first, so most names are passed over without lower-casing them
    if (name.length > impersonatePrefix.length && (name.charCodeAt(0) | 32) === 0x69
      && name.slice(0, impersonatePrefix.length).toLowerCase() === impersonatePrefix) return true;
  }
  return false;
}

/** The impersonation the headers ask for; undefined when they ask for none (empty values). */
function requested(rawHeaders: readonly string[], uri: string): Impersonation | undefined {
  const headers = headerValues(rawHeaders);
  // Go's Header.Get: the first value; an empty one asks for nothing
  const first = (name: string) => headers.get(name)?.[0] || undefined;
  const asked: Impersonation = {
    user: first('impersonate-user'),
    uid: first('impersonate-uid'),
    groups: headers.get('impersonate-group') ?? [],
    extra: Object.create(null) as Record<string, string[]>,
  };
  for (const [name, values] of headers) {
    if (!name.startsWith(extraPrefix)) continue;
    // lower-cased, then unescaped, as Kubernetes reads the key
    const key = unescapeExtraKey(name.slice(extraPrefix.length));
    asked.extra[key] = [...(asked.extra[key] ?? []), ...values];
  }
  const any = asked.user !== undefined || asked.uid !== undefined || asked.groups.length > 0 || Object.keys(asked.extra).length > 0;
  if (!any) return undefined;
  if (asked.user === undefined) {
    // kube-apiserver answers this with an internal error naming the request
    throw new StatusError(500, 'InternalError', `Internal Server Error: ${JSON.stringify(uri)}: requested ${describe(asked)} without impersonating a user`);
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
  // most requests ask for no impersonation and pay only the header scan
  return (ctx, next) => (asksImpersonation(ctx.req.rawHeaders) ? impersonate(authorizer, ctx, next) : next(ctx));
}

async function impersonate(authorizer: Authorizer, ctx: RequestContext, next: Handler): Promise<void> {
  const asked = requested(ctx.req.rawHeaders, ctx.req.url ?? ctx.path);
  if (!asked) { await next(ctx); return; }
  const actor = ctx.user as UserInfo;
  const checks: Attributes[] = [];
  let groups = [...asked.groups];
  const name = asked.user as string;
  const sa = serviceAccountUser.exec(name);
  if (sa) {
    checks.push(attributes(actor, 'serviceaccounts', sa[2], { namespace: sa[1] }));
    // a service account's groups are known: they stand unless groups are asked for
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
  // system:authenticated unless either implicit group is asked for; the anonymous user is always unauthenticated
  if (name === anonymousUserName) {
    if (!groups.includes(unauthenticatedGroup)) groups.push(unauthenticatedGroup);
  } else if (!groups.includes(authenticatedGroup) && !groups.includes(unauthenticatedGroup)) {
    groups.push(authenticatedGroup);
  }
  const user: UserInfo = { name, groups };
  if (asked.uid !== undefined) user.uid = asked.uid;
  if (Object.keys(asked.extra).length > 0) user.extra = asked.extra;
  ctx.impersonator = actor;
  ctx.user = user;
  for (const header of Object.keys(ctx.req.headers)) if (header.startsWith('impersonate-')) delete ctx.req.headers[header];
  await next(ctx);
}
