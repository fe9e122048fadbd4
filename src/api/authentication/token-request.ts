/**
 * TokenRequest: `POST .../serviceaccounts/{name}/token` asks for a signed service-account token
 * (k8s.io/kubernetes pkg/registry/core/serviceaccount/storage/token.go). The body's kind is
 * `authentication.orch.io/v1` TokenRequest, or Kubernetes' name for it that `kubectl create token`
 * sends; the answer names the group the body named.
 */
import { errors, fieldErrors, type FieldError } from '../../status/status-error.js';
import { builtinKind, type KindDeclaration, type SubresourceCreate } from '../kind.js';
import { typeAndMeta, type KObject } from '../meta.js';
import { formatTime } from '../schema.js';
import { s } from '../schema/builtin-structural.js';
import { serviceKey } from '../services.js';
import { authenticationGroup, underKubernetesName, unstoredKindBehaviour } from './group.js';

export interface BoundObjectReference { kind?: string; apiVersion?: string; name?: string; uid?: string }

export interface TokenIssueRequest {
  serviceAccount: Readonly<KObject>;
  boundObjectRef?: BoundObjectReference;
  audiences: readonly string[];
  expirationSeconds: number;
  /** wall-clock milliseconds of the request: iat and nbf */
  now: number;
}

export interface ServiceAccountTokenIssuer {
  /** the API's audiences: what a request naming none gets */
  readonly apiAudiences: readonly string[];
  /** the longest validity (seconds) a requested token keeps; 0: no limit */
  readonly maxExpirationSeconds: number;
  /** the signed token; a StatusError when the bound object is missing, replaced or of a kind that cannot be bound */
  issue(request: TokenIssueRequest): Promise<string>;
}

export const serviceAccountTokenIssuer = serviceKey<ServiceAccountTokenIssuer>('service-account token issuer');

/** Kubernetes' bounds: at least 10 minutes, at most 2^32 seconds; one hour by default. */
const minExpirationSeconds = 10 * 60;
const maxExpirationSeconds = 2 ** 32;
const defaultExpirationSeconds = 60 * 60;

const boundObjectReference = s.struct('BoundObjectReference', {
  kind: s.string("Kind of the referent. Valid kinds are 'Pod' and 'Secret'."),
  apiVersion: s.string('API version of the referent.'),
  name: s.string('Name of the referent.'),
  uid: s.string('UID of the referent.'),
}, 'BoundObjectReference is a reference to an object that a token is bound to.', { proto: { kind: 1, apiVersion: 2, name: 3, uid: 4 } });

// `required`: the fields Go serializes without omitempty, which Kubernetes' OpenAPI lists as required
const tokenRequestSpec = s.struct('TokenRequestSpec', {
  audiences: s.atomicList(s.string(), 'Audiences are the intendend audiences of the token. A recipient of a token must identify themself with an identifier in the list of audiences of the token, and otherwise should reject the token. A token issued for multiple audiences may be used to authenticate against any of the audiences listed but implies a high degree of trust between the target audiences.'),
  expirationSeconds: s.int64("ExpirationSeconds is the requested duration of validity of the request. The token issuer may return a token with a different validity duration so a client needs to check the 'expiration' field in a response."),
  boundObjectRef: boundObjectReference,
}, 'TokenRequestSpec contains client provided parameters of a token request.', {
  proto: { audiences: 1, expirationSeconds: 4, boundObjectRef: 3 },
  required: ['audiences'],
  pointers: ['boundObjectRef'],
  // `*BoundObjectReference json:"boundObjectRef"`: a pointer without omitempty, written null
  withoutOmitEmpty: ['boundObjectRef'],
});

const tokenRequestStatus = s.struct('TokenRequestStatus', {
  token: s.string('Token is the opaque bearer token.'),
  expirationTimestamp: s.time('ExpirationTimestamp is the time of expiration of the returned token.'),
}, 'TokenRequestStatus is the result of a token request.', {
  proto: { token: 1, expirationTimestamp: 2 },
  required: ['token', 'expirationTimestamp'],
});

/** The body's kind: decoded and checked like any kind, served only below a ServiceAccount. */
export const tokenRequestKind: KindDeclaration = builtinKind({
  group: authenticationGroup, version: 'v1', kind: 'TokenRequest', listKind: 'TokenRequestList',
  resource: 'tokenrequests', singular: 'tokenrequest', shortNames: [], namespaced: true,
  verbs: [],
  structural: s.struct('TokenRequest', typeAndMeta({
    spec: tokenRequestSpec,
    status: tokenRequestStatus,
  }), 'TokenRequest requests a token for a given service account.', { proto: { metadata: 1, spec: 2, status: 3 }, required: ['spec'] }),
  ...unstoredKindBehaviour,
});

interface TokenRequestBody extends KObject {
  spec?: { audiences?: string[]; expirationSeconds?: number; boundObjectRef?: BoundObjectReference };
}

function groupOf(body: KObject): string {
  const apiVersion = body.apiVersion ?? '';
  return apiVersion.includes('/') ? apiVersion.split('/')[0] : authenticationGroup;
}

export const serviceAccountToken: SubresourceCreate = {
  kinds: [tokenRequestKind, underKubernetesName(tokenRequestKind)],
  async create(serviceAccount, body, ctx) {
    const request = body as TokenRequestBody;
    const name = serviceAccount.metadata.name as string;
    const namespace = serviceAccount.metadata.namespace as string;
    const invalid = (errs: FieldError[]) => errors.invalid({ group: groupOf(body), kind: 'TokenRequest' }, name, errs);
    if (request.metadata.name && request.metadata.name !== name) {
      throw invalid([fieldErrors.invalid('metadata.name', request.metadata.name, 'must match the service account name if specified')]);
    }
    if (request.metadata.namespace && request.metadata.namespace !== namespace) {
      throw invalid([fieldErrors.invalid('metadata.namespace', request.metadata.namespace, 'must match the service account namespace if specified')]);
    }
    // without a signing key the server issues no tokens, and Kubernetes serves no such route
    if (!ctx.services.has(serviceAccountTokenIssuer)) throw errors.pathNotFound();
    const issuer = ctx.services.get(serviceAccountTokenIssuer);
    const spec = { ...request.spec };
    if (!spec.audiences || spec.audiences.length === 0) spec.audiences = [...issuer.apiAudiences];
    spec.expirationSeconds ??= defaultExpirationSeconds;
    if (spec.expirationSeconds < minExpirationSeconds) {
      throw invalid([fieldErrors.invalid('spec.expirationSeconds', spec.expirationSeconds, 'may not specify a duration less than 10 minutes')]);
    }
    if (spec.expirationSeconds > maxExpirationSeconds) {
      throw invalid([fieldErrors.invalid('spec.expirationSeconds', spec.expirationSeconds, 'may not specify a duration larger than 2^32 seconds')]);
    }
    if (issuer.maxExpirationSeconds > 0 && spec.expirationSeconds > issuer.maxExpirationSeconds) {
      ctx.warnings.push(`requested expiration of ${spec.expirationSeconds} seconds shortened to ${issuer.maxExpirationSeconds} seconds`);
      spec.expirationSeconds = issuer.maxExpirationSeconds;
    }
    const token = await issuer.issue({
      serviceAccount, boundObjectRef: spec.boundObjectRef, audiences: spec.audiences, expirationSeconds: spec.expirationSeconds, now: ctx.now,
    });
    return {
      metadata: { ...request.metadata, name, namespace, creationTimestamp: formatTime(ctx.now) },
      spec: { audiences: spec.audiences, expirationSeconds: spec.expirationSeconds, boundObjectRef: spec.boundObjectRef ?? null },
      status: { token, expirationTimestamp: formatTime(ctx.now + spec.expirationSeconds * 1000) },
    };
  },
};
