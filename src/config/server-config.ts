/** The parsed command line (src/config/flags.ts builds it from the flag table). */
import type { FeatureGates } from './feature-gates.js';
import type { RuntimeConfig } from './runtime-config.js';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The parsed command line. Frozen, arrays included. */
export interface ServerConfig {
  readonly securePort: number;
  readonly bindAddress: string;
  readonly advertiseAddress?: string;
  readonly tlsCertFile?: string;
  readonly tlsPrivateKeyFile?: string;
  readonly clientCaFile?: string;
  readonly anonymousAuth: boolean;
  readonly authorizationModes: string[];
  readonly authorizationPolicyFile?: string;
  readonly authorizationConfigFile?: string;
  readonly authorizationWebhookConfigFile?: string;
  readonly authorizationWebhookVersion: string;
  readonly authorizationWebhookCacheAuthorizedTtlMs: number;
  readonly authorizationWebhookCacheUnauthorizedTtlMs: number;
  /** Absolute. */
  readonly dataDir: string;
  readonly enableGarbageCollector: boolean;
  readonly enablePriorityAndFairness: boolean;
  readonly goawayChance: number;
  /** --show-hidden-metrics-for-version: '' or the previous minor release */
  readonly showHiddenMetricsForVersion: string;
  readonly enableAdmissionPlugins: readonly string[];
  readonly admissionControlConfigFile?: string;
  readonly requestTimeoutMs: number;
  readonly minRequestTimeoutSeconds: number;
  readonly eventTtlMs: number;
  readonly watchHistoryMs: number;
  readonly watchEncoderThreads: number;
  readonly continueTtlMs: number;
  readonly kubernetesGroupAliases: boolean;
  readonly maxRequestsInflight: number;
  readonly maxMutatingRequestsInflight: number;
  readonly maxRequestBodyBytes: number;
  readonly maxUnsentBytes: number;
  readonly maxUnsentBytesPerConnection: number;
  readonly shutdownDelayMs: number;
  readonly featureGates: FeatureGates;
  /** `--runtime-config`: built-in API enablement (see runtime-config.ts) */
  readonly runtimeConfig: RuntimeConfig;
  readonly logLevel: LogLevel;
  /** Empty: use the embedded SQLite store in dataDir. */
  readonly etcdServers: string[];
  readonly etcdPrefix: string;
  readonly etcdCaFile?: string;
  readonly etcdCertFile?: string;
  readonly etcdKeyFile?: string;
  readonly etcdCompactionIntervalMs: number;
  /** Unset: no auditing. */
  readonly auditPolicyFile?: string;
  /** Unset: no log backend; `-`: standard out. */
  readonly auditLogPath?: string;
  readonly auditLogFormat: string;
  readonly auditLogMaxAge: number;
  readonly auditLogMaxBackup: number;
  readonly auditLogMaxSize: number;
  readonly auditLogCompress: boolean;
  readonly auditLogMode: string;
  readonly auditLogBatchBufferSize: number;
  readonly auditLogBatchMaxSize: number;
  readonly auditLogBatchMaxWaitMs: number;
  readonly auditLogBatchThrottleEnable: boolean;
  readonly auditLogBatchThrottleQps: number;
  readonly auditLogBatchThrottleBurst: number;
  readonly auditLogTruncateEnabled: boolean;
  readonly auditLogTruncateMaxBatchSize: number;
  readonly auditLogTruncateMaxEventSize: number;
  /** Unset: no webhook backend. */
  readonly auditWebhookConfigFile?: string;
  readonly auditWebhookInitialBackoffMs: number;
  readonly auditWebhookVersion: string;
  readonly auditWebhookMode: string;
  readonly auditWebhookBatchBufferSize: number;
  readonly auditWebhookBatchMaxSize: number;
  readonly auditWebhookBatchMaxWaitMs: number;
  readonly auditWebhookBatchThrottleEnable: boolean;
  readonly auditWebhookBatchThrottleQps: number;
  readonly auditWebhookBatchThrottleBurst: number;
  readonly auditWebhookTruncateEnabled: boolean;
  readonly auditWebhookTruncateMaxBatchSize: number;
  readonly auditWebhookTruncateMaxEventSize: number;
  // authentication
  readonly apiAudiences: string[];
  readonly authenticationConfigFile?: string;
  readonly tokenAuthFile?: string;
  readonly enableBootstrapTokenAuth: boolean;
  readonly serviceAccountIssuers: string[];
  readonly serviceAccountKeyFiles: string[];
  readonly serviceAccountSigningKeyFile?: string;
  readonly serviceAccountJwksUri?: string;
  readonly serviceAccountLookup: boolean;
  readonly serviceAccountMaxTokenExpirationMs: number;
  readonly serviceAccountExtendTokenExpiration: boolean;
  readonly oidcIssuerUrl?: string;
  readonly oidcClientId?: string;
  readonly oidcCaFile?: string;
  readonly oidcUsernameClaim: string;
  readonly oidcUsernamePrefix?: string;
  readonly oidcGroupsClaim?: string;
  readonly oidcGroupsPrefix?: string;
  readonly oidcRequiredClaims: Readonly<Record<string, string>>;
  readonly oidcSigningAlgs: string[];
  readonly webhookTokenAuthnConfigFile?: string;
  readonly webhookTokenAuthnCacheTtlMs: number;
  readonly webhookTokenAuthnVersion: string;
  readonly requestheaderClientCaFile?: string;
  readonly requestheaderAllowedNames: string[];
  readonly requestheaderUsernameHeaders: string[];
  readonly requestheaderUidHeaders: string[];
  readonly requestheaderGroupHeaders: string[];
  readonly requestheaderExtraHeadersPrefix: string[];
  /** Names of the flags given on the command line or in the environment (kube-apiserver's FlagsSet tracking). */
  readonly explicitFlags: string[];
}
