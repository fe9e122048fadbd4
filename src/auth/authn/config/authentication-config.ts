/**
 * AuthenticationConfiguration (`--authentication-config`): the file Kubernetes 1.32 reads, in
 * its versions v1alpha1 and v1beta1, under `apiserver.config.orch.io` or Kubernetes'
 * `apiserver.config.k8s.io` (files written from Kubernetes' documentation load unchanged).
 * Decoded as src/config/config-file.ts reads every such file.
 */
import { readFileSync } from 'node:fs';
import type { StructSchema } from '../../../api/schema.js';
import { s } from '../../../api/schema/builtin-structural.js';
import { internalStructOf } from '../../../api/schema/to-internal.js';
import { decodeConfigFile } from '../../../config/config-file.js';

export const configVersions = ['v1alpha1', 'v1beta1'];

export interface PrefixedClaimOrExpression { claim?: string; prefix?: string; expression?: string }
export interface ClaimOrExpression { claim?: string; expression?: string }
export interface ExtraMapping { key?: string; valueExpression?: string }
export interface ClaimValidationRule { claim?: string; requiredValue?: string; expression?: string; message?: string }
export interface UserValidationRule { expression?: string; message?: string }

export interface Issuer {
  url?: string;
  discoveryURL?: string;
  certificateAuthority?: string;
  audiences?: string[];
  audienceMatchPolicy?: string;
  egressSelectorType?: string;
}

export interface JwtAuthenticatorConfig {
  issuer: Issuer;
  claimValidationRules?: ClaimValidationRule[];
  claimMappings: {
    username?: PrefixedClaimOrExpression;
    groups?: PrefixedClaimOrExpression;
    uid?: ClaimOrExpression;
    extra?: ExtraMapping[];
  };
  userValidationRules?: UserValidationRule[];
}

export interface AnonymousConfig { enabled?: boolean; conditions?: { path?: string }[] }

export interface AuthenticationConfiguration {
  jwt: JwtAuthenticatorConfig[];
  anonymous?: AnonymousConfig;
}

const prefixedClaimOrExpression = s.struct('PrefixedClaimOrExpression', {
  claim: s.string(), prefix: s.string(), expression: s.string(),
});
const configSchema: StructSchema = internalStructOf(s.struct('AuthenticationConfiguration', {
  apiVersion: s.string(),
  kind: s.string(),
  jwt: s.atomicList(s.struct('JWTAuthenticator', {
    issuer: s.struct('Issuer', {
      url: s.string(), discoveryURL: s.string(), certificateAuthority: s.string(),
      audiences: s.atomicList(s.string()), audienceMatchPolicy: s.string(), egressSelectorType: s.string(),
    }),
    claimValidationRules: s.atomicList(s.struct('ClaimValidationRule', {
      claim: s.string(), requiredValue: s.string(), expression: s.string(), message: s.string(),
    })),
    claimMappings: s.struct('ClaimMappings', {
      username: prefixedClaimOrExpression,
      groups: prefixedClaimOrExpression,
      uid: s.struct('ClaimOrExpression', { claim: s.string(), expression: s.string() }),
      extra: s.atomicList(s.struct('ExtraMapping', { key: s.string(), valueExpression: s.string() })),
    }),
    userValidationRules: s.atomicList(s.struct('UserValidationRule', { expression: s.string(), message: s.string() })),
  })),
  anonymous: s.struct('AnonymousAuthConfig', {
    enabled: s.boolean(),
    conditions: s.atomicList(s.struct('AnonymousAuthCondition', { path: s.string() })),
  }),
}));

/** The file's text as a configuration; throws with Kubernetes' wording on malformed files. */
export function parseAuthenticationConfiguration(text: string): AuthenticationConfiguration {
  const decoded = decodeConfigFile(text, { kind: 'AuthenticationConfiguration', versions: configVersions, schema: configSchema });
  const jwt = ((decoded.jwt ?? []) as JwtAuthenticatorConfig[]).map((a) => ({ ...a, issuer: a.issuer ?? {}, claimMappings: a.claimMappings ?? {} }));
  const config: AuthenticationConfiguration = { jwt };
  if (decoded.anonymous) config.anonymous = decoded.anonymous as AnonymousConfig;
  return config;
}

export function loadAuthenticationConfiguration(path: string): { config: AuthenticationConfiguration; text: string } {
  const text = readFileSync(path, 'utf8');
  try {
    return { config: parseAuthenticationConfiguration(text), text };
  } catch (err) {
    throw new Error(`failed to load authentication configuration from file ${JSON.stringify(path)}: ${(err as Error).message}`);
  }
}
