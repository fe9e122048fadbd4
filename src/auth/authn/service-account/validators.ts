/**
 * What a verified service-account token must still stand on (k8s.io/kubernetes pkg/serviceaccount
 * claims.go and legacy.go): the ServiceAccount by name and UID, and the Secret a token is bound
 * to (or, for a legacy token, the Secret holding it, with this very token). Objects deleted more
 * than a minute ago count as gone; Pod and Node bindings cannot hold here, as neither is served.
 */
import { timingSafeEqual } from 'node:crypto';
import type { JWTPayload } from 'jose';
import type { KObject } from '../../../api/meta.js';
import { AuthenticationFailure } from '../authenticator.js';
import type { TokenValidator } from './authenticator.js';
import { legacyClaims, privateClaim, splitServiceAccountUsername, type BoundClaims, type ServiceAccountInfo } from './claims.js';
import type { ObjectLookup } from './lookup.js';

const deletionLeewayMs = 60_000;
const invalidated = new AuthenticationFailure('service account token has been invalidated');
/** the label the legacy token cleaner sets on Secrets whose tokens it has invalidated */
export const legacyTokenInvalidSinceLabel = 'orch.io/legacy-token-invalid-since';

function deletedBefore(obj: Readonly<KObject>, instant: number): boolean {
  const at = obj.metadata.deletionTimestamp;
  return at !== undefined && Date.parse(at) < instant;
}

export class BoundTokenValidator implements TokenValidator {
  constructor(private readonly lookup: ObjectLookup) {}

  validate(_token: string, claims: JWTPayload, nowMs: number): ServiceAccountInfo | AuthenticationFailure {
    const bound = (claims[privateClaim] ?? {}) as BoundClaims;
    const namespace = bound.namespace ?? '';
    const saRef = bound.serviceaccount ?? {};
    const saName = saRef.name ?? '';
    const invalidIfDeletedBefore = nowMs - deletionLeewayMs;
    const sa = this.lookup.serviceAccount(namespace, saName);
    if (!sa) return new AuthenticationFailure(`serviceaccounts ${JSON.stringify(saName)} not found`);
    if (deletedBefore(sa, invalidIfDeletedBefore)) return new AuthenticationFailure(`service account ${namespace}/${saName} has been deleted`);
    if (sa.metadata.uid !== saRef.uid) {
      return new AuthenticationFailure(`service account UID (${sa.metadata.uid ?? ''}) does not match claim (${saRef.uid ?? ''})`);
    }
    if (bound.secret) {
      const secret = this.lookup.secret(namespace, bound.secret.name ?? '');
      if (!secret || deletedBefore(secret, invalidIfDeletedBefore)) return invalidated;
      if (secret.metadata.uid !== bound.secret.uid) {
        return new AuthenticationFailure(`secret UID (${secret.metadata.uid ?? ''}) does not match service account secret ref claim (${bound.secret.uid ?? ''})`);
      }
    }
    // no Pod or Node is ever found here: a token bound to one is invalid
    if (bound.pod || bound.node) return invalidated;
    const info: ServiceAccountInfo = { namespace, name: saName, uid: saRef.uid ?? '' };
    if (typeof claims.jti === 'string' && claims.jti) info.credentialId = `JTI=${claims.jti}`;
    return info;
  }
}

function equalBytes(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export class LegacyTokenValidator implements TokenValidator {
  /** `lookup` false (--service-account-lookup=false): the claims alone are trusted */
  constructor(private readonly lookup: ObjectLookup, private readonly checkObjects: boolean) {}

  validate(token: string, claims: JWTPayload): ServiceAccountInfo | AuthenticationFailure {
    const claim = (name: string): string => (typeof claims[name] === 'string' ? claims[name] as string : '');
    if (!claims.sub) return new AuthenticationFailure('sub claim is missing');
    const namespace = claim(legacyClaims.namespace);
    if (!namespace) return new AuthenticationFailure('namespace claim is missing');
    const secretName = claim(legacyClaims.secretName);
    if (!secretName) return new AuthenticationFailure('secretName claim is missing');
    const saName = claim(legacyClaims.serviceAccountName);
    if (!saName) return new AuthenticationFailure('serviceAccountName claim is missing');
    const saUid = claim(legacyClaims.serviceAccountUid);
    if (!saUid) return new AuthenticationFailure('serviceAccountUID claim is missing');
    const subject = splitServiceAccountUsername(claims.sub);
    if (!subject || subject.namespace !== namespace || subject.name !== saName) return new AuthenticationFailure('sub claim is invalid');

    if (this.checkObjects) {
      const secret = this.lookup.secret(namespace, secretName);
      if (!secret || secret.metadata.deletionTimestamp) return new AuthenticationFailure('token has been invalidated');
      const stored = (secret as { data?: Record<string, string> }).data?.token;
      if (stored === undefined || !equalBytes(Buffer.from(stored, 'base64').toString('utf8'), token)) {
        return new AuthenticationFailure("token does not match server's copy");
      }
      if (secret.metadata.labels?.[legacyTokenInvalidSinceLabel]) return new AuthenticationFailure('token has been invalidated');
      const sa = this.lookup.serviceAccount(namespace, saName);
      if (!sa) return new AuthenticationFailure(`serviceaccounts ${JSON.stringify(saName)} not found`);
      if (sa.metadata.deletionTimestamp) return new AuthenticationFailure(`ServiceAccount ${namespace}/${saName} has been deleted`);
      if (sa.metadata.uid !== saUid) return new AuthenticationFailure(`ServiceAccount UID (${sa.metadata.uid ?? ''}) does not match claim (${saUid})`);
    }
    return { namespace, name: saName, uid: saUid };
  }
}
