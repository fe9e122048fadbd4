/**
 * What a service-account token says, and the user it names (k8s.io/kubernetes pkg/serviceaccount,
 * with `orch.io` in place of `kubernetes.io`): bound tokens carry a private claim `orch.io`
 * naming the namespace, the ServiceAccount and what the token is bound to; legacy Secret-based
 * tokens carry `orch.io/serviceaccount/*` claims and the issuer `orch.io/serviceaccount`.
 */
import type { UserInfo } from '../../user.js';

export const privateClaim = 'orch.io';
export const legacyIssuer = 'orch.io/serviceaccount';
export const legacyClaims = {
  namespace: 'orch.io/serviceaccount/namespace',
  secretName: 'orch.io/serviceaccount/secret.name',
  serviceAccountName: 'orch.io/serviceaccount/service-account.name',
  serviceAccountUid: 'orch.io/serviceaccount/service-account.uid',
} as const;

/** The keys of UserInfo.extra a service-account user carries (authentication.kubernetes.io/* in Kubernetes). */
export const extraKeys = {
  podName: 'authentication.orch.io/pod-name',
  podUid: 'authentication.orch.io/pod-uid',
  nodeName: 'authentication.orch.io/node-name',
  nodeUid: 'authentication.orch.io/node-uid',
  credentialId: 'authentication.orch.io/credential-id',
} as const;

export const serviceAccountsGroup = 'system:serviceaccounts';
const userPrefix = 'system:serviceaccount:';

export interface ObjectRef { name?: string; uid?: string }

/** The `orch.io` private claim of a bound token. */
export interface BoundClaims {
  namespace?: string;
  serviceaccount?: ObjectRef;
  secret?: ObjectRef;
  pod?: ObjectRef;
  node?: ObjectRef;
  warnafter?: number;
}

export function serviceAccountUsername(namespace: string, name: string): string {
  return `${userPrefix}${namespace}:${name}`;
}

/** namespace and name of a `system:serviceaccount:NS:NAME` user; undefined for other names */
export function splitServiceAccountUsername(username: string): { namespace: string; name: string } | undefined {
  if (!username.startsWith(userPrefix)) return undefined;
  const parts = username.slice(userPrefix.length).split(':');
  if (parts.length !== 2 || !parts[0] || !parts[1]) return undefined;
  return { namespace: parts[0], name: parts[1] };
}

export interface ServiceAccountInfo {
  namespace: string;
  name: string;
  uid: string;
  podName?: string;
  podUid?: string;
  nodeName?: string;
  nodeUid?: string;
  /** `JTI=<jti>` for tokens with a jti */
  credentialId?: string;
}

export function serviceAccountUser(sa: ServiceAccountInfo): UserInfo {
  const extra: Record<string, string[]> = {};
  if (sa.podName && sa.podUid) {
    extra[extraKeys.podName] = [sa.podName];
    extra[extraKeys.podUid] = [sa.podUid];
  }
  if (sa.credentialId) extra[extraKeys.credentialId] = [sa.credentialId];
  if (sa.nodeName) {
    extra[extraKeys.nodeName] = [sa.nodeName];
    if (sa.nodeUid) extra[extraKeys.nodeUid] = [sa.nodeUid];
  }
  const user: UserInfo = {
    name: serviceAccountUsername(sa.namespace, sa.name),
    uid: sa.uid,
    groups: [serviceAccountsGroup, `${serviceAccountsGroup}:${sa.namespace}`],
  };
  if (Object.keys(extra).length > 0) user.extra = extra;
  return user;
}
