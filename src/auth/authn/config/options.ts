/**
 * The JWT issuers and the anonymous authenticator, from the `--oidc-*` flags or the
 * authentication configuration file, with the combinations Kubernetes refuses refused
 * (k8s.io/kubernetes pkg/kubeapiserver/options/authentication.go): the server does not start.
 */
import { readFileSync } from 'node:fs';
import type { ServerConfig } from '../../../config/server-config.js';
import { OIDC_SIGNING_ALGORITHMS } from '../../../config/flag-table/authentication.js';
import { loadAuthenticationConfiguration, type AnonymousConfig, type AuthenticationConfiguration, type JwtAuthenticatorConfig } from './authentication-config.js';
import { validateAuthenticationConfiguration, type CompiledJwtAuthenticator } from './validation.js';

export interface ResolvedAuthentication {
  jwt: CompiledJwtAuthenticator[];
  /** the algorithms JWT issuers may sign with: the flag's, or all nine with a configuration file */
  algorithms: string[];
  anonymous: { enabled: boolean; paths: string[]; fromFile: boolean };
  /** the configuration file, watched for changes */
  file?: { path: string; text: string; anonymous?: AnonymousConfig };
}

/** Kubernetes' legacy flag behaviour, as a JWT authenticator (ToAuthenticationConfig). */
function fromOidcFlags(config: ServerConfig): JwtAuthenticatorConfig {
  const issuerUrl = config.oidcIssuerUrl as string;
  let usernamePrefix = config.oidcUsernamePrefix ?? '';
  // claims other than email are prefixed with the issuer unless a prefix is given (kubernetes/kubernetes#31380)
  if (usernamePrefix === '' && config.oidcUsernameClaim !== 'email') usernamePrefix = `${issuerUrl}#`;
  if (usernamePrefix === '-') usernamePrefix = '';
  const jwt: JwtAuthenticatorConfig = {
    issuer: { url: issuerUrl, audiences: [config.oidcClientId as string] },
    claimMappings: { username: { claim: config.oidcUsernameClaim, prefix: usernamePrefix } },
  };
  if (config.oidcGroupsClaim) jwt.claimMappings.groups = { claim: config.oidcGroupsClaim, prefix: config.oidcGroupsPrefix ?? '' };
  if (config.oidcCaFile) jwt.issuer.certificateAuthority = readFileSync(config.oidcCaFile, 'utf8');
  const required = Object.entries(config.oidcRequiredClaims);
  if (required.length > 0) jwt.claimValidationRules = required.map(([claim, requiredValue]) => ({ claim, requiredValue }));
  return jwt;
}

export async function resolveAuthentication(config: ServerConfig, serviceAccountIssuers: readonly string[]): Promise<ResolvedAuthentication> {
  const explicit = new Set(config.explicitFlags);
  const oidcFlagsSet = [...explicit].some((name) => name.startsWith('oidc-'));
  let file: ResolvedAuthentication['file'];
  let structured: AuthenticationConfiguration = { jwt: [] };
  let algorithms = [...config.oidcSigningAlgs];

  if (config.authenticationConfigFile) {
    if (!config.featureGates.enabled('StructuredAuthenticationConfiguration')) {
      throw new Error('set --feature-gates=StructuredAuthenticationConfiguration=true to use authentication-config file');
    }
    const loaded = loadAuthenticationConfiguration(config.authenticationConfigFile);
    structured = loaded.config;
    file = { path: config.authenticationConfigFile, text: loaded.text, anonymous: loaded.config.anonymous };
    if (oidcFlagsSet && structured.jwt.length > 0) throw new Error('authentication-config file and oidc-* flags are mutually exclusive');
    // any algorithm is fine with a configuration file, as long as it matches a key
    algorithms = [...OIDC_SIGNING_ALGORITHMS];
  } else if (oidcFlagsSet && (!config.oidcIssuerUrl || !config.oidcClientId)) {
    throw new Error('oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set');
  } else if (config.oidcIssuerUrl && config.oidcClientId) {
    structured = { jwt: [fromOidcFlags(config)] };
  }

  let anonymous: ResolvedAuthentication['anonymous'];
  if (structured.anonymous && explicit.has('anonymous-auth')) {
    throw new Error('anonymous: Forbidden: --anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file');
  } else if (structured.anonymous) {
    anonymous = { enabled: structured.anonymous.enabled ?? false, paths: (structured.anonymous.conditions ?? []).map((c) => c.path ?? ''), fromFile: true };
  } else {
    anonymous = { enabled: config.anonymousAuth, paths: [], fromFile: false };
  }

  const jwt = await validateAuthenticationConfiguration(structured, serviceAccountIssuers, config.featureGates.enabled('AnonymousAuthConfigurableEndpoints'));
  return { jwt, algorithms, anonymous, file };
}
