/** Authentication flags: client certificates, the authenticating proxy, tokens, service accounts, OIDC, the token webhook, anonymous requests. */
import { parseDuration } from '../duration.js';
import { type AnyFlagSpec, nonNegative, quote } from '../flag-spec.js';

/** The JOSE asymmetric algorithms an OIDC issuer may sign with (RFC 7518 section 3.1). */
export const OIDC_SIGNING_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512'];

function validateSigningAlgs(algs: string[]): string | undefined {
  const bad = algs.find((alg) => !OIDC_SIGNING_ALGORITHMS.includes(alg));
  return bad === undefined ? undefined : `oidc: unsupported signing alg: ${quote(bad)}`;
}

function validateIssuers(issuers: string[]): string | undefined {
  const seen = new Set<string>();
  for (const issuer of issuers) {
    if (issuer === '') return 'service-account-issuer should not be an empty string';
    if (issuer.includes(':') && !URL.canParse(issuer)) return `service-account-issuer ${quote(issuer)} contained a ':' but was not a valid URL`;
    if (seen.has(issuer)) return `service-account-issuer ${quote(issuer)} is already specified`;
    seen.add(issuer);
  }
  return undefined;
}

const HOUR_MS = 3_600_000;

export const AUTHENTICATION_FLAGS: readonly AnyFlagSpec[] = [
  {
    name: 'anonymous-auth',
    type: 'bool',
    key: 'anonymousAuth',
    default: true,
    help:
      'Enables anonymous requests to the secure port of the API server. Requests that are not ' +
      'rejected by another authentication method are treated as anonymous requests, with a ' +
      'username of system:anonymous and a group name of system:unauthenticated.',
  },
  {
    name: 'api-audiences',
    type: 'stringList',
    key: 'apiAudiences',
    default: [],
    help:
      'Identifiers of the API. The service account token authenticator will validate that tokens used against the API ' +
      'are bound to at least one of these audiences. If the --service-account-issuer flag is configured and this flag ' +
      'is not, this field defaults to a single element list containing the issuer URL.',
  },
  {
    name: 'authentication-config',
    type: 'string',
    key: 'authenticationConfigFile',
    help:
      'File with Authentication Configuration (apiserver.config.orch.io or apiserver.config.k8s.io, v1alpha1 or ' +
      'v1beta1) to configure the JWT Token authenticator or the anonymous authenticator; re-read when it changes. ' +
      'Requires the StructuredAuthenticationConfiguration feature gate. This ' +
      'flag is mutually exclusive with the --oidc-* flags if the file configures the JWT Token authenticator. This flag ' +
      'is mutually exclusive with --anonymous-auth if the file configures the Anonymous authenticator.',
  },
  {
    name: 'authentication-token-webhook-cache-ttl',
    type: 'duration',
    key: 'webhookTokenAuthnCacheTtlMs',
    default: parseDuration('2m'),
    help: 'The duration to cache responses from the webhook token authenticator.',
    validate: nonNegative,
  },
  {
    name: 'authentication-token-webhook-config-file',
    type: 'string',
    key: 'webhookTokenAuthnConfigFile',
    help:
      'File with webhook configuration for token authentication in kubeconfig format. The API server will query the ' +
      'remote service to determine authentication for bearer tokens.',
  },
  {
    name: 'authentication-token-webhook-version',
    type: 'string',
    key: 'webhookTokenAuthnVersion',
    default: 'v1beta1',
    help: 'The API version of the authentication.k8s.io TokenReview to send to and expect from the webhook.',
    validate: (version) => (version === 'v1' || version === 'v1beta1'
      ? undefined
      : `unsupported authentication webhook version ${quote(version)}, supported versions are "v1", "v1beta1"`),
  },
  {
    name: 'client-ca-file',
    type: 'string',
    key: 'clientCaFile',
    help:
      'If set, any request presenting a client certificate signed by one of the authorities in ' +
      'the client-ca-file is authenticated with an identity corresponding to the CommonName of ' +
      'the client certificate.',
  },
  {
    name: 'enable-bootstrap-token-auth',
    type: 'bool',
    key: 'enableBootstrapTokenAuth',
    default: false,
    help:
      "Enable to allow secrets of type 'bootstrap.orch.io/token' in the 'orch-system' namespace to be used for TLS " +
      'bootstrapping authentication.',
  },
  {
    name: 'oidc-ca-file',
    type: 'string',
    key: 'oidcCaFile',
    help:
      "If set, the OpenID server's certificate will be verified by one of the authorities in the oidc-ca-file, " +
      "otherwise the host's root CA set will be used.",
  },
  {
    name: 'oidc-client-id',
    type: 'string',
    key: 'oidcClientId',
    help: 'The client ID for the OpenID Connect client, must be set if oidc-issuer-url is set.',
  },
  {
    name: 'oidc-groups-claim',
    type: 'string',
    key: 'oidcGroupsClaim',
    help:
      'If provided, the name of a custom OpenID Connect claim for specifying user groups. The claim value is expected ' +
      'to be a string or array of strings.',
  },
  {
    name: 'oidc-groups-prefix',
    type: 'string',
    key: 'oidcGroupsPrefix',
    help: 'If provided, all groups will be prefixed with this value to prevent conflicts with other authentication strategies.',
  },
  {
    name: 'oidc-issuer-url',
    type: 'string',
    key: 'oidcIssuerUrl',
    help:
      'The URL of the OpenID issuer, only HTTPS scheme will be accepted. If set, it will be used to verify the OIDC ' +
      'JSON Web Token (JWT).',
  },
  {
    name: 'oidc-required-claim',
    type: 'stringMap',
    key: 'oidcRequiredClaims',
    default: {},
    help:
      'A key=value pair that describes a required claim in the ID Token. If set, the claim is verified to be present ' +
      'in the ID Token with a matching value. Repeat this flag to specify multiple claims.',
  },
  {
    name: 'oidc-signing-algs',
    type: 'stringList',
    key: 'oidcSigningAlgs',
    default: ['RS256'],
    help:
      "Comma-separated list of allowed JOSE asymmetric signing algorithms. JWTs with a supported 'alg' header values " +
      `are: ${OIDC_SIGNING_ALGORITHMS.join(', ')}. Values are defined by RFC 7518 https://tools.ietf.org/html/rfc7518#section-3.1.`,
    validate: validateSigningAlgs,
  },
  {
    name: 'oidc-username-claim',
    type: 'string',
    key: 'oidcUsernameClaim',
    default: 'sub',
    help:
      "The OpenID claim to use as the user name. Note that claims other than the default ('sub') is not guaranteed " +
      'to be unique and immutable.',
  },
  {
    name: 'oidc-username-prefix',
    type: 'string',
    key: 'oidcUsernamePrefix',
    help:
      "If provided, all usernames will be prefixed with this value. If not provided, username claims other than 'email' " +
      "are prefixed by the issuer URL to avoid clashes. To skip any prefixing, provide the value '-'.",
  },
  {
    name: 'requestheader-allowed-names',
    type: 'stringList',
    key: 'requestheaderAllowedNames',
    default: [],
    help:
      'List of client certificate common names to allow to provide usernames in headers specified by ' +
      '--requestheader-username-headers. If empty, any client certificate validated by the authorities in ' +
      '--requestheader-client-ca-file is allowed.',
  },
  {
    name: 'requestheader-client-ca-file',
    type: 'string',
    key: 'requestheaderClientCaFile',
    help:
      'Root certificate bundle to use to verify client certificates on incoming requests before trusting usernames in ' +
      'headers specified by --requestheader-username-headers. WARNING: generally do not depend on authorization being ' +
      'already done for incoming requests.',
  },
  {
    name: 'requestheader-extra-headers-prefix',
    type: 'stringList',
    key: 'requestheaderExtraHeadersPrefix',
    default: [],
    help: 'List of request header prefixes to inspect. X-Remote-Extra- is suggested.',
  },
  {
    name: 'requestheader-group-headers',
    type: 'stringList',
    key: 'requestheaderGroupHeaders',
    default: [],
    help: 'List of request headers to inspect for groups. X-Remote-Group is suggested.',
  },
  {
    name: 'requestheader-uid-headers',
    type: 'stringList',
    key: 'requestheaderUidHeaders',
    default: [],
    help: 'List of request headers to inspect for UIDs. X-Remote-Uid is suggested.',
  },
  {
    name: 'requestheader-username-headers',
    type: 'stringList',
    key: 'requestheaderUsernameHeaders',
    default: [],
    help: 'List of request headers to inspect for usernames. X-Remote-User is common.',
  },
  {
    name: 'service-account-extend-token-expiration',
    type: 'bool',
    key: 'serviceAccountExtendTokenExpiration',
    default: true,
    help:
      'Turns on projected service account expiration extension during token generation, which helps safe transition ' +
      'from legacy token to bound service account token feature. It applies to Pod-bound tokens only, which this server ' +
      'does not issue (it serves no Pods).',
  },
  {
    name: 'service-account-issuer',
    type: 'stringArray',
    key: 'serviceAccountIssuers',
    default: [],
    help:
      'Identifier of the service account token issuer. The issuer will assert this identifier in "iss" claim of issued ' +
      'tokens. This value is a string or URI; an https URL enables the OpenID discovery documents at ' +
      '{service-account-issuer}/.well-known/openid-configuration. When this flag is specified multiple times, the first ' +
      'is used to generate tokens and all are used to determine which issuers are accepted. If unset, the issuer is ' +
      'https://<advertise-address or bind-address>:<secure-port>.',
    validate: validateIssuers,
  },
  {
    name: 'service-account-jwks-uri',
    type: 'string',
    key: 'serviceAccountJwksUri',
    help:
      'Overrides the URI for the JSON Web Key Set in the discovery doc served at /.well-known/openid-configuration. ' +
      "This flag is useful if the discovery doc and key set are served to relying parties from a URL other than the API server's external address.",
    validate: (uri) => {
      if (!URL.canParse(uri)) return 'service-account-jwks-uri must be a valid URL';
      const url = new URL(uri);
      return url.protocol === 'https:' ? undefined : `service-account-jwks-uri requires https scheme, parsed as: ${url.href}`;
    },
  },
  {
    name: 'service-account-key-file',
    type: 'stringArray',
    key: 'serviceAccountKeyFiles',
    default: [],
    help:
      'File containing PEM-encoded x509 RSA or ECDSA private or public keys, used to verify ServiceAccount tokens. The ' +
      'specified file can contain multiple keys, and the flag can be specified multiple times with different files. If ' +
      'unspecified with --service-account-signing-key-file unset too, a key pair is generated in --data-dir (pki/sa.key, pki/sa.pub).',
  },
  {
    name: 'service-account-lookup',
    type: 'bool',
    key: 'serviceAccountLookup',
    default: true,
    help: 'If true, validate ServiceAccount tokens exist in storage as part of authentication.',
  },
  {
    name: 'service-account-max-token-expiration',
    type: 'duration',
    key: 'serviceAccountMaxTokenExpirationMs',
    default: 0,
    help:
      'The maximum validity duration of a token created by the service account token issuer. If an otherwise valid ' +
      'TokenRequest with a validity duration larger than this value is requested, a token will be issued with a validity duration of this value.',
    validate: (ms) => (ms === 0 || (ms >= HOUR_MS && ms <= 2 ** 32 * 1000)
      ? undefined
      : 'the service-account-max-token-expiration must be between 1 hour and 2^32 seconds'),
  },
  {
    name: 'service-account-signing-key-file',
    type: 'string',
    key: 'serviceAccountSigningKeyFile',
    help:
      'Path to the file that contains the current private key of the service account token issuer. The issuer will ' +
      'sign issued ID tokens with this private key. Its public key is trusted as if given to --service-account-key-file.',
  },
  {
    name: 'token-auth-file',
    type: 'string',
    key: 'tokenAuthFile',
    help: 'If set, the file that will be used to secure the secure port of the API server via token authentication.',
  },
];
