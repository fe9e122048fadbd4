/**
 * Authentication as the configuration asks for it: kube-apiserver's union, in its order:
 * request-header (authenticating proxies), client certificates, then bearer tokens (the token
 * file, legacy and bound service-account tokens, bootstrap tokens, the JWT issuers, the webhook),
 * and anonymous last.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { AnonymousAuthenticator } from '../auth/authn/anonymous.js';
import { audienceAgnostic } from '../auth/authn/audiences.js';
import { UnionAuthenticator, type Authenticator } from '../auth/authn/authenticator.js';
import { BearerTokenAuthenticator } from '../auth/authn/bearer-token.js';
import { BootstrapTokenAuthenticator } from '../auth/authn/bootstrap-token.js';
import { JwtAuthenticatorSet } from '../auth/authn/config/dynamic-jwt.js';
import { resolveAuthentication } from '../auth/authn/config/options.js';
import { RequestHeaderAuthenticator } from '../auth/authn/request-header.js';
import { ServiceAccountTokenAuthenticator } from '../auth/authn/service-account/authenticator.js';
import { legacyIssuer } from '../auth/authn/service-account/claims.js';
import { discoverableIssuer, IssuerDiscovery, jwksPath } from '../auth/authn/service-account/issuer-discovery.js';
import { ensureServiceAccountKeyPair, publicKeysFromFile, signingKeyFromFile, type SigningKey, type VerificationKey } from '../auth/authn/service-account/keys.js';
import type { ObjectLookup } from '../auth/authn/service-account/lookup.js';
import { ServiceAccountTokenGenerator } from '../auth/authn/service-account/token-generator.js';
import { BoundTokenValidator, LegacyTokenValidator } from '../auth/authn/service-account/validators.js';
import { TokenFileAuthenticator } from '../auth/authn/token-file.js';
import { TokenReviewService } from '../auth/authn/token-reviewer.js';
import { TokenUnion, type TokenAuthenticator } from '../auth/authn/token.js';
import { loadWebhookKubeconfig } from '../auth/webhook/kubeconfig.js';
import { WebhookTokenAuthenticator } from '../auth/authn/webhook/webhook-token.js';
import { WebSocketProtocolAuthenticator } from '../auth/authn/websocket-protocol.js';
import { X509Authenticator } from '../auth/authn/x509.js';
import { serviceAccountTokenIssuer } from '../api/authentication/token-request.js';
import { tokenReviewer } from '../api/authentication/token-review.js';
import type { Services } from '../api/services.js';
import type { ServerConfig } from '../config/server-config.js';

export interface AuthenticationParts {
  log: Logger;
  /** the authorizer types in force: anonymous requests are switched off beside AlwaysAllow */
  authorizerTypes: readonly string[];
  /** the objects tokens stand on (the read model) */
  lookup: ObjectLookup;
  /** where a generated service-account key pair lives (data-dir/pki) */
  pkiDir: string;
  /** the CA bundle client certificates are verified against */
  clientCaPem: string;
  /** host:port clients reach this server at: the default issuer and JWKS URI */
  externalAddress: string;
  /** filled with the TokenReview and TokenRequest services */
  services: Services;
}

export interface Authentication {
  authenticator: UnionAuthenticator;
  /** OpenID discovery of the service-account issuer, when the issuer is an https URL */
  discovery: IssuerDiscovery | undefined;
  /** signs legacy Secret-based tokens, when the server has a signing key */
  tokenGenerator: ServiceAccountTokenGenerator | undefined;
  stop(): void;
}

function certificates(pem: string): X509Certificate[] {
  return (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((c) => new X509Certificate(c));
}

/** Verification keys and the signing key: from the flags, or the pair generated in the data dir. */
function serviceAccountKeys(config: ServerConfig, pkiDir: string): { keys: VerificationKey[]; signing: SigningKey | undefined } {
  let keyFiles = config.serviceAccountKeyFiles;
  let signingFile = config.serviceAccountSigningKeyFile;
  if (keyFiles.length === 0 && !signingFile) {
    const generated = ensureServiceAccountKeyPair(pkiDir);
    keyFiles = [generated.publicKeyFile];
    signingFile = generated.keyFile;
  }
  const signing = signingFile ? signingKeyFromFile(signingFile) : undefined;
  const keys = new Map<string, VerificationKey>();
  for (const file of keyFiles) for (const key of publicKeysFromFile(file)) keys.set(key.kid, key);
  // the signing key's own tokens always verify
  if (signing && !keys.has(signing.kid)) keys.set(signing.kid, { key: signing.key, kid: signing.kid, alg: signing.alg });
  return { keys: [...keys.values()], signing };
}

function requestHeader(config: ServerConfig, clientCaPem: string): RequestHeaderAuthenticator | undefined {
  if (!config.requestheaderClientCaFile) return undefined;
  const caPem = readFileSync(config.requestheaderClientCaFile, 'utf8');
  if (config.requestheaderAllowedNames.length === 0) {
    const client = certificates(clientCaPem).map((c) => c.fingerprint256);
    if (certificates(caPem).some((c) => client.includes(c.fingerprint256))) {
      throw new Error('--requestheader-client-ca-file and --client-ca-file contain overlapping certificates; --requestheader-allowed-names must be specified to ensure regular client certificates cannot set authenticating proxy headers for arbitrary users');
    }
  }
  return new RequestHeaderAuthenticator({
    caPem,
    allowedNames: config.requestheaderAllowedNames,
    usernameHeaders: config.requestheaderUsernameHeaders,
    uidHeaders: config.requestheaderUidHeaders,
    groupHeaders: config.requestheaderGroupHeaders,
    extraHeaderPrefixes: config.requestheaderExtraHeadersPrefix,
  });
}

export async function authentication(config: ServerConfig, parts: AuthenticationParts): Promise<Authentication> {
  const { log, lookup } = parts;
  const issuers = config.serviceAccountIssuers.length > 0 ? [...config.serviceAccountIssuers] : [`https://${parts.externalAddress}`];
  const apiAudiences = config.apiAudiences.length > 0 ? [...config.apiAudiences] : issuers;
  const resolved = await resolveAuthentication(config, issuers);
  const { keys, signing } = serviceAccountKeys(config, parts.pkiDir);

  const tokens: TokenAuthenticator[] = [];
  if (config.tokenAuthFile) {
    tokens.push(audienceAgnostic(apiAudiences, TokenFileAuthenticator.load(config.tokenAuthFile, (m) => log.warn(m))));
  }
  // bound tokens before legacy ones (Kubernetes asks legacy first; the issuers are disjoint, so only
  // the cost differs: a cached bound token is then answered without reading its payload)
  tokens.push(new ServiceAccountTokenAuthenticator({
    name: 'service-account', issuers, keys, implicitAudiences: apiAudiences, validator: new BoundTokenValidator(lookup),
  }));
  tokens.push(new ServiceAccountTokenAuthenticator({
    name: 'legacy-service-account', issuers: [legacyIssuer], keys, implicitAudiences: apiAudiences,
    validator: new LegacyTokenValidator(lookup, config.serviceAccountLookup),
  }));
  if (config.enableBootstrapTokenAuth) tokens.push(audienceAgnostic(apiAudiences, new BootstrapTokenAuthenticator(lookup)));
  // after the service-account methods: a JWT issuer may fetch keys on a token it cannot verify
  const jwt = new JwtAuthenticatorSet(resolved.jwt, {
    apiAudiences, algorithms: resolved.algorithms, disallowedIssuers: issuers,
    log: { info: (m) => log.info(m), error: (m) => log.error(m) },
  });
  if (resolved.file) jwt.watch(resolved.file.path, resolved.file.text, resolved.file.anonymous);
  if (resolved.jwt.length > 0 || resolved.file) tokens.push(jwt);
  if (config.webhookTokenAuthnConfigFile) {
    tokens.push(new WebhookTokenAuthenticator({
      connection: loadWebhookKubeconfig(config.webhookTokenAuthnConfigFile),
      version: config.webhookTokenAuthnVersion as 'v1' | 'v1beta1',
      cacheTtlMs: config.webhookTokenAuthnCacheTtlMs,
      implicitAudiences: apiAudiences,
    }));
  }
  const tokenUnion = new TokenUnion(tokens);

  const methods: Authenticator[] = [];
  const proxy = requestHeader(config, parts.clientCaPem);
  if (proxy) methods.push(proxy);
  methods.push(new X509Authenticator(), new BearerTokenAuthenticator(tokenUnion, apiAudiences), new WebSocketProtocolAuthenticator(tokenUnion, apiAudiences));

  // kube-apiserver switches flag-enabled anonymous requests off when AlwaysAllow would let them do anything
  let anonymous = resolved.anonymous.enabled;
  if (anonymous && !resolved.anonymous.fromFile && parts.authorizerTypes.includes('AlwaysAllow')) {
    log.warn('AnonymousAuth is not allowed with the AlwaysAllow authorizer. Resetting AnonymousAuth to false. You should use a different authorizer');
    anonymous = false;
  }
  const authenticator = new UnionAuthenticator(methods, {
    anonymous: anonymous ? new AnonymousAuthenticator(resolved.anonymous.paths) : undefined,
    onFailure: (failure, request) => log.info({ reason: failure.reason, path: request.path }, 'Unable to authenticate the request'),
  });

  const tokenGenerator = signing
    ? new ServiceAccountTokenGenerator({ key: signing, issuer: issuers[0], apiAudiences, maxExpirationSeconds: config.serviceAccountMaxTokenExpirationMs / 1000, lookup })
    : undefined;
  parts.services.set(tokenReviewer, new TokenReviewService(tokenUnion.size > 0 ? tokenUnion : undefined, apiAudiences));
  if (tokenGenerator) parts.services.set(serviceAccountTokenIssuer, tokenGenerator);
  const discovery = discoverableIssuer(issuers[0])
    ? new IssuerDiscovery(issuers[0], config.serviceAccountJwksUri ?? `https://${parts.externalAddress}${jwksPath}`, keys)
    : undefined;
  return { authenticator, discovery, tokenGenerator, stop: () => jwt.stop() };
}
