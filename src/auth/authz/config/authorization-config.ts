/**
 * AuthorizationConfiguration: the ordered authorizer chain, from `--authorization-config` (the
 * file Kubernetes 1.32 reads, versions v1alpha1, v1beta1 and v1) or from the legacy flags
 * (`--authorization-mode` and `--authorization-webhook-*`), which Kubernetes converts to the same
 * structure. Durations are Go durations; defaults are Kubernetes'.
 */
import type { StructSchema } from '../../../api/schema.js';
import { s } from '../../../api/schema/builtin-structural.js';
import { internalStructOf } from '../../../api/schema/to-internal.js';
import { decodeConfigFile } from '../../../config/config-file.js';
import { parseDuration } from '../../../config/duration.js';
import type { ServerConfig } from '../../../config/server-config.js';

export const authorizerTypes = ['ABAC', 'AlwaysAllow', 'AlwaysDeny', 'Node', 'RBAC', 'Webhook'] as const;
export type AuthorizerType = typeof authorizerTypes[number];

export interface WebhookConfiguration {
  /** milliseconds; 0 when absent (required) */
  timeoutMs: number;
  authorizedTtlMs: number;
  unauthorizedTtlMs: number;
  cacheAuthorizedRequests: boolean;
  cacheUnauthorizedRequests: boolean;
  subjectAccessReviewVersion: string;
  matchConditionSubjectAccessReviewVersion: string;
  failurePolicy: string;
  connectionInfo: { type: string; kubeConfigFile?: string };
  matchConditions: { expression: string }[];
  /** the durations as written, for messages */
  written: { timeout?: string; authorizedTTL?: string; unauthorizedTTL?: string };
}

export interface AuthorizerConfiguration {
  type: string;
  name: string;
  webhook?: WebhookConfiguration;
}

export interface AuthorizationConfiguration {
  authorizers: AuthorizerConfiguration[];
}

const configSchema: StructSchema = internalStructOf(s.struct('AuthorizationConfiguration', {
  apiVersion: s.string(),
  kind: s.string(),
  authorizers: s.atomicList(s.struct('AuthorizerConfiguration', {
    type: s.string(),
    name: s.string(),
    webhook: s.struct('WebhookConfiguration', {
      authorizedTTL: s.string(),
      cacheAuthorizedRequests: s.boolean(),
      unauthorizedTTL: s.string(),
      cacheUnauthorizedRequests: s.boolean(),
      timeout: s.string(),
      subjectAccessReviewVersion: s.string(),
      matchConditionSubjectAccessReviewVersion: s.string(),
      failurePolicy: s.string(),
      connectionInfo: s.struct('WebhookConnectionInfo', { type: s.string(), kubeConfigFile: s.string() }),
      matchConditions: s.atomicList(s.struct('WebhookMatchCondition', { expression: s.string() })),
    }),
  })),
}));

interface WrittenWebhook {
  authorizedTTL?: string; cacheAuthorizedRequests?: boolean; unauthorizedTTL?: string; cacheUnauthorizedRequests?: boolean;
  timeout?: string; subjectAccessReviewVersion?: string; matchConditionSubjectAccessReviewVersion?: string;
  failurePolicy?: string; connectionInfo?: { type?: string; kubeConfigFile?: string }; matchConditions?: { expression?: string }[];
}

function duration(text: string | undefined, field: string): number {
  if (text === undefined) return 0;
  try {
    return parseDuration(text);
  } catch (err) {
    throw new Error(`${field}: ${(err as Error).message}`);
  }
}

/** SetDefaults_WebhookConfiguration: 5m and 30s caches, both on. */
function webhookFrom(w: WrittenWebhook, path: string): WebhookConfiguration {
  return {
    timeoutMs: duration(w.timeout, `${path}.timeout`),
    authorizedTtlMs: duration(w.authorizedTTL, `${path}.authorizedTTL`) || 5 * 60_000,
    unauthorizedTtlMs: duration(w.unauthorizedTTL, `${path}.unauthorizedTTL`) || 30_000,
    cacheAuthorizedRequests: w.cacheAuthorizedRequests ?? true,
    cacheUnauthorizedRequests: w.cacheUnauthorizedRequests ?? true,
    subjectAccessReviewVersion: w.subjectAccessReviewVersion ?? '',
    matchConditionSubjectAccessReviewVersion: w.matchConditionSubjectAccessReviewVersion ?? '',
    failurePolicy: w.failurePolicy ?? '',
    connectionInfo: { type: w.connectionInfo?.type ?? '', ...(w.connectionInfo?.kubeConfigFile !== undefined ? { kubeConfigFile: w.connectionInfo.kubeConfigFile } : {}) },
    matchConditions: (w.matchConditions ?? []).map((c) => ({ expression: c.expression ?? '' })),
    written: { timeout: w.timeout, authorizedTTL: w.authorizedTTL, unauthorizedTTL: w.unauthorizedTTL },
  };
}

/** The file's text as a configuration (not yet validated); throws with Kubernetes' wording on malformed files. */
export function parseAuthorizationConfiguration(text: string): AuthorizationConfiguration {
  const decoded = decodeConfigFile(text, { kind: 'AuthorizationConfiguration', versions: ['v1alpha1', 'v1beta1', 'v1'], schema: configSchema });
  const written = (decoded.authorizers ?? []) as { type?: string; name?: string; webhook?: WrittenWebhook }[];
  return {
    authorizers: written.map((a, i) => ({
      type: a.type ?? '',
      name: a.name ?? '',
      ...(a.webhook ? { webhook: webhookFrom(a.webhook, `authorizers[${i}].webhook`) } : {}),
    })),
  };
}

/**
 * The legacy flags as a configuration (buildAuthorizationConfiguration): the webhook with a 30 s
 * timeout and failure policy NoOpinion; a TTL of 0 switches that cache off.
 */
export function configurationFromFlags(config: ServerConfig): AuthorizationConfiguration {
  return {
    authorizers: config.authorizationModes.map((mode): AuthorizerConfiguration => {
      if (mode !== 'Webhook') return { type: mode, name: mode.toLowerCase() };
      return {
        type: 'Webhook',
        name: 'webhook',
        webhook: {
          timeoutMs: 30_000,
          authorizedTtlMs: config.authorizationWebhookCacheAuthorizedTtlMs,
          unauthorizedTtlMs: config.authorizationWebhookCacheUnauthorizedTtlMs,
          cacheAuthorizedRequests: config.authorizationWebhookCacheAuthorizedTtlMs !== 0,
          cacheUnauthorizedRequests: config.authorizationWebhookCacheUnauthorizedTtlMs !== 0,
          subjectAccessReviewVersion: config.authorizationWebhookVersion,
          matchConditionSubjectAccessReviewVersion: '',
          failurePolicy: 'NoOpinion',
          connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: config.authorizationWebhookConfigFile as string },
          matchConditions: [],
          written: {},
        },
      };
    }),
  };
}
