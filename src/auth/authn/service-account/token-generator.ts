/**
 * Signs service-account tokens for the TokenRequest API (and legacy Secret-based tokens): the
 * claims Kubernetes puts in them, `orch.io` as the private claim, signed by jose with the
 * issuer's key (`kid` as kube-apiserver derives it).
 */
import { randomUUID } from 'node:crypto';
import type { ServiceAccountTokenIssuer, TokenIssueRequest, BoundObjectReference } from '../../../api/authentication/token-request.js';
import type { KObject } from '../../../api/meta.js';
import { errors } from '../../../status/status-error.js';
import { legacyClaims, legacyIssuer, privateClaim, serviceAccountUsername, type BoundClaims } from './claims.js';
import type { SigningKey } from './keys.js';
import type { ObjectLookup } from './lookup.js';
import { loadJose } from '../jose-loader.js';

export interface GeneratorOptions {
  key: SigningKey;
  /** the first --service-account-issuer: the `iss` of every token signed here */
  issuer: string;
  apiAudiences: readonly string[];
  maxExpirationSeconds: number;
  lookup: ObjectLookup;
}

/** Go's GroupVersionKind.String(): `group/version, Kind=kind`. */
function gvkString(ref: BoundObjectReference): string {
  const apiVersion = ref.apiVersion ?? '';
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/', 2) : ['', apiVersion];
  return `${group}/${version}, Kind=${ref.kind ?? ''}`;
}

export class ServiceAccountTokenGenerator implements ServiceAccountTokenIssuer {
  readonly apiAudiences: readonly string[];
  readonly maxExpirationSeconds: number;

  constructor(private readonly options: GeneratorOptions) {
    this.apiAudiences = options.apiAudiences;
    this.maxExpirationSeconds = options.maxExpirationSeconds;
  }

  /** The object a token is bound to, checked as Kubernetes checks it: it must exist, with the UID asked for. */
  private bind(serviceAccount: Readonly<KObject>, ref: BoundObjectReference): Pick<BoundClaims, 'secret'> {
    const name = serviceAccount.metadata.name as string;
    const namespace = serviceAccount.metadata.namespace as string;
    const group = (ref.apiVersion ?? '').includes('/') ? (ref.apiVersion as string).split('/')[0] : '';
    const refName = ref.name ?? '';
    let uid: string | undefined;
    let claims: Pick<BoundClaims, 'secret'> = {};
    if (group === '' && ref.kind === 'Secret') {
      const secret = this.options.lookup.secret(namespace, refName);
      if (!secret) throw errors.notFound({ group: '', resource: 'secrets' }, refName);
      uid = secret.metadata.uid;
      claims = { secret: { name: refName, uid } };
    } else if (group === '' && (ref.kind === 'Pod' || ref.kind === 'Node')) {
      // this server serves neither Pods nor Nodes: the object cannot exist, as Kubernetes finds a missing one
      throw errors.notFound({ group: '', resource: ref.kind === 'Pod' ? 'pods' : 'nodes' }, refName);
    } else {
      throw errors.badRequest(`cannot bind token for serviceaccount ${JSON.stringify(name)} to object of type ${gvkString(ref)}`);
    }
    if (ref.uid && ref.uid !== uid) {
      throw errors.conflict({ group, resource: ref.kind ?? '' }, refName,
        `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`);
    }
    return claims;
  }

  async issue(request: TokenIssueRequest): Promise<string> {
    const sa = request.serviceAccount;
    const namespace = sa.metadata.namespace as string;
    const name = sa.metadata.name as string;
    const bound = request.boundObjectRef ? this.bind(sa, request.boundObjectRef) : {};
    const now = Math.floor(request.now / 1000);
    const claims: BoundClaims = { namespace, serviceaccount: { name, uid: sa.metadata.uid }, ...bound };
    const { SignJWT } = await loadJose();
    return new SignJWT({ [privateClaim]: claims })
      .setProtectedHeader({ alg: this.options.key.alg, kid: this.options.key.kid })
      .setIssuer(this.options.issuer)
      .setSubject(serviceAccountUsername(namespace, name))
      .setAudience([...request.audiences])
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + request.expirationSeconds)
      .setJti(randomUUID())
      .sign(this.options.key.privateKey);
  }

  /** A legacy token for a service-account token Secret (either spelling): no expiry, no audience, the Secret's name in its claims. */
  async legacyToken(serviceAccount: Readonly<KObject>, secretName: string): Promise<string> {
    const namespace = serviceAccount.metadata.namespace as string;
    const name = serviceAccount.metadata.name as string;
    const { SignJWT } = await loadJose();
    return new SignJWT({
      [legacyClaims.namespace]: namespace,
      [legacyClaims.secretName]: secretName,
      [legacyClaims.serviceAccountName]: name,
      [legacyClaims.serviceAccountUid]: serviceAccount.metadata.uid,
    })
      .setProtectedHeader({ alg: this.options.key.alg, kid: this.options.key.kid })
      .setIssuer(legacyIssuer)
      .setSubject(serviceAccountUsername(namespace, name))
      .sign(this.options.key.privateKey);
  }
}
