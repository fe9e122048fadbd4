/**
 * Command-line configuration: kube-apiserver's flag names, parsed the way
 * pflag/cobra parse them, so existing manifests and muscle memory carry over.
 *
 * One declarative table (FLAGS) lists every flag; the code below it is
 * generic over that table: tokenizing argv, parsing values by type, applying
 * environment overrides, validating, building the frozen ServerConfig and
 * printing help.
 */
import { isIP } from 'node:net';
import { resolve } from 'node:path';

import { formatDuration, parseDuration } from './duration.js';
import {
  type FeatureGates,
  defaultFeatureGates,
  describeFeatureGates,
  parseBool,
  parseFeatureGates,
} from './feature-gates.js';

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
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
  /** Absolute. */
  readonly dataDir: string;
  readonly enableGarbageCollector: boolean;
  readonly enablePriorityAndFairness: boolean;
  readonly goawayChance: number;
  readonly enableAdmissionPlugins: readonly string[];
  readonly admissionControlConfigFile?: string;
  readonly requestTimeoutMs: number;
  readonly minRequestTimeoutSeconds: number;
  readonly eventTtlMs: number;
  readonly watchHistoryMs: number;
  readonly continueTtlMs: number;
  readonly kubernetesGroupAliases: boolean;
  readonly maxRequestsInflight: number;
  readonly maxMutatingRequestsInflight: number;
  readonly maxRequestBodyBytes: number;
  readonly maxUnsentBytes: number;
  readonly maxUnsentBytesPerConnection: number;
  readonly shutdownDelayMs: number;
  readonly featureGates: FeatureGates;
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

/** A command-line (or environment) error; the message names the flag. */
export class FlagError extends Error {
  override name = 'FlagError';
}

const PROGRAM = 'orch-apiserver';

/** ORCH_APISERVER_SECURE_PORT sets --secure-port, and so on; the command line wins. */
const ENV_PREFIX = 'ORCH_APISERVER_';

// ---------------------------------------------------------------------------
// Value types

/** What each flag type parses to. */
interface FlagValues {
  string: string;
  int: number;
  /** Go's float32 flags (rates) */
  float: number;
  bool: boolean;
  /** Milliseconds. */
  duration: number;
  stringList: string[];
  /** Repeated to add values; commas are part of a value (pflag's StringArray). */
  stringArray: string[];
  /** Repeated `key=value` pairs, a comma being part of the value (NewMapStringStringNoSplit). */
  stringMap: Record<string, string>;
  /** A literal IPv4 or IPv6 address. */
  ip: string;
  level: LogLevel;
  featureGates: FeatureGates;
}
type FlagType = keyof FlagValues;

interface Kind<V> {
  /** Shown after the flag name in help, as pflag names its types; empty for bools, which take no value. */
  readonly typeName: string;
  /**
   * Parses one occurrence; throws an Error whose message becomes the tail of
   * pflag's `invalid argument` message. `previous` is the value so far;
   * `fresh` is true until the command line first sets the flag: lists append
   * on repeats but replace their default, as pflag's string slices do.
   */
  parse(text: string, previous: V | undefined, fresh: boolean): V;
  /** The default as help prints it; undefined for the zero value, which pflag leaves out. */
  show(value: V): string | undefined;
}

/** Go's %q; JSON quoting agrees with it for the printable text flags carry. */
const quote = (text: string): string => JSON.stringify(text);

const KINDS: { readonly [T in FlagType]: Kind<FlagValues[T]> } = {
  string: {
    typeName: 'string',
    parse: (text) => text,
    show: (value) => (value === '' ? undefined : quote(value)),
  },
  int: {
    typeName: 'int',
    parse: parseInt64,
    show: (value) => (value === 0 ? undefined : String(value)),
  },
  float: {
    typeName: 'float32',
    parse: parseFloatFlag,
    show: (value) => (value === 0 ? undefined : String(value)),
  },
  bool: {
    typeName: '',
    parse: parseBool,
    show: (value) => (value ? 'true' : undefined),
  },
  duration: {
    typeName: 'duration',
    parse: parseDuration,
    show: (value) => (value === 0 ? undefined : formatDuration(value)),
  },
  stringList: {
    typeName: 'strings',
    parse: (text, previous, fresh) => {
      const items = text === '' ? [] : text.split(',');
      return fresh || previous === undefined ? items : [...previous, ...items];
    },
    show: (value) => (value.length === 0 ? undefined : `[${value.join(',')}]`),
  },
  stringArray: {
    typeName: 'stringArray',
    parse: (text, previous, fresh) => (fresh || previous === undefined ? [text] : [...previous, text]),
    show: (value) => (value.length === 0 ? undefined : `[${value.join(',')}]`),
  },
  stringMap: {
    typeName: 'mapStringString',
    parse: (text, previous, fresh) => {
      const eq = text.indexOf('=');
      if (eq < 0) throw new Error(`${text} must be formatted as key=value`);
      return { ...(fresh || previous === undefined ? {} : previous), [text.slice(0, eq).trim()]: text.slice(eq + 1).trim() };
    },
    show: () => undefined,
  },
  ip: {
    typeName: 'ip',
    parse: (text) => {
      const address = text.trim();
      if (isIP(address) === 0) throw new Error(`failed to parse IP: ${quote(text)}`);
      return address;
    },
    show: (value) => value,
  },
  level: {
    typeName: 'level',
    parse: parseLevel,
    show: (value) => value,
  },
  featureGates: {
    typeName: 'mapStringBool',
    parse: (text, previous) => parseFeatureGates(text, previous),
    show: () => undefined,
  },
};

/**
 * Go's strconv.ParseInt(text, 0, 64), as pflag's int flags use: decimal,
 * 0x/0o/0b prefixes, a leading 0 for octal, and `_` between digits.
 * The range is JavaScript's safe integers rather than int64.
 */
function parseInt64(text: string): number {
  const syntax =
    /^[+-]?(?:0[xX](?:_?[0-9a-fA-F])+|0[bB](?:_?[01])+|0[oO](?:_?[0-7])+|0(?:_?[0-7])*|[1-9](?:_?\d)*)$/;
  if (!syntax.test(text)) throw new Error(`strconv.ParseInt: parsing ${quote(text)}: invalid syntax`);
  let digits = text.replace(/^[+-]/, '').replaceAll('_', '');
  if (/^0\d/.test(digits)) digits = `0o${digits.slice(1)}`; // BigInt reads "017" as decimal
  const magnitude = BigInt(digits);
  if (magnitude > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new Error(`strconv.ParseInt: parsing ${quote(text)}: value out of range`);
  }
  return text.startsWith('-') ? -Number(magnitude) : Number(magnitude);
}

/** Go's strconv.ParseFloat syntax (decimal, with an optional exponent), as pflag's float flags read it. */
function parseFloatFlag(text: string): number {
  if (!/^[+-]?(?:\d+(?:_?\d)*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/.test(text)) {
    throw new Error(`strconv.ParseFloat: parsing ${quote(text)}: invalid syntax`);
  }
  return Number(text.replaceAll('_', ''));
}

/**
 * A log level, either as klog verbosity (what -v means to Kubernetes
 * operators) or as a pino level name.
 */
function parseLevel(text: string): LogLevel {
  if (/^\d+$/.test(text)) {
    const verbosity = Number(text);
    // kube-apiserver logs each request (httplog) at -v=3: here those lines are debug
    return verbosity >= 6 ? 'trace' : verbosity >= 3 ? 'debug' : 'info';
  }
  const level = LOG_LEVELS.find((name) => name === text);
  if (level === undefined) {
    throw new Error(`want a klog verbosity (0, 1, 2, ...) or one of ${LOG_LEVELS.join(', ')}`);
  }
  return level;
}

// ---------------------------------------------------------------------------
// The flag table

/** Config keys that can hold a value of flag type T. */
type KeysFor<T extends FlagType> = {
  [K in keyof ServerConfig]-?: FlagValues[T] extends ServerConfig[K] ? K : never;
}[keyof ServerConfig];

interface FlagSpec<T extends FlagType> {
  readonly name: string;
  readonly shorthand?: string;
  readonly type: T;
  /** Several flags may share a key (-v and --log-level); the last one given wins. */
  readonly key: KeysFor<T>;
  readonly default?: FlagValues[T];
  readonly help: string;
  /** Checks the final value; returns the problem, worded like kube-apiserver's validation. */
  readonly validate?: (value: FlagValues[T], flag: string) => string | undefined;
}
type AnyFlagSpec = { [T in FlagType]: FlagSpec<T> }[FlagType];

const nonNegative = (value: number, flag: string) =>
  value < 0 ? `${flag} can not be negative value` : undefined;

/** The admission plugins this server has, and those on without --enable-admission-plugins */
const ADMISSION_PLUGINS = ['EventRateLimit', 'NamespaceLifecycle'];
const DEFAULT_ADMISSION_PLUGINS = ['NamespaceLifecycle'];

const SUPPORTED_AUTHORIZATION_MODES = ['AlwaysAllow', 'AlwaysDeny'];
/** Kubernetes' other modes: known, so they get a clearer message than a typo does. */
const PLANNED_AUTHORIZATION_MODES = ['ABAC', 'Webhook', 'RBAC', 'Node'];

function validateAuthorizationModes(modes: string[]): string | undefined {
  if (modes.length === 0) return 'at least one authorization-mode must be passed';
  for (const mode of modes) {
    if (PLANNED_AUTHORIZATION_MODES.includes(mode)) {
      return `authorization-mode ${quote(mode)} is not supported yet`;
    }
    if (!SUPPORTED_AUTHORIZATION_MODES.includes(mode)) {
      return `authorization-mode ${quote(mode)} is not a valid mode`;
    }
  }
  if (new Set(modes).size !== modes.length) {
    return `authorization-mode [${modes.map(quote).join(' ')}] has mode specified more than once`;
  }
  return undefined;
}

function validateEtcdServers(urls: string[], flag: string): string | undefined {
  const bad = urls.find((url) => !URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol));
  return bad === undefined ? undefined : `${flag} ${quote(bad)} is not an http or https URL`;
}

const AUDIT_MODES = ['batch', 'blocking', 'blocking-strict'];
const AUDIT_LOG_FORMATS = ['json', 'legacy'];
const AUDIT_VERSIONS = ['audit.orch.io/v1', 'audit.k8s.io/v1'];

const auditNotNegative = (value: number, flag: string) => (value < 0 ? `${flag} ${value} can't be a negative number` : undefined);

/** The config keys of one audit backend's mode, batching and truncation flags. */
interface AuditBackendKeys {
  mode: KeysFor<'string'>;
  batchBufferSize: KeysFor<'int'>;
  batchMaxSize: KeysFor<'int'>;
  batchMaxWait: KeysFor<'duration'>;
  batchThrottleEnable: KeysFor<'bool'>;
  batchThrottleQps: KeysFor<'float'>;
  batchThrottleBurst: KeysFor<'int'>;
  truncateEnabled: KeysFor<'bool'>;
  truncateMaxBatchSize: KeysFor<'int'>;
  truncateMaxEventSize: KeysFor<'int'>;
}

interface AuditBatchDefaults { mode: string; bufferSize: number; maxSize: number; maxWaitMs: number; throttle: boolean; qps: number; burst: number }

/** kube-apiserver's AuditBatchOptions and AuditTruncateOptions flags, under --audit-<plugin>-. */
function auditBackendFlags(plugin: 'log' | 'webhook', keys: AuditBackendKeys, d: AuditBatchDefaults): AnyFlagSpec[] {
  const prefix = `audit-${plugin}`;
  return [
    {
      name: `${prefix}-batch-buffer-size`, type: 'int', key: keys.batchBufferSize, default: d.bufferSize,
      help: 'The size of the buffer to store events before batching and writing. Only used in batch mode.',
    },
    {
      name: `${prefix}-batch-max-size`, type: 'int', key: keys.batchMaxSize, default: d.maxSize,
      help: 'The maximum size of a batch. Only used in batch mode.',
    },
    {
      name: `${prefix}-batch-max-wait`, type: 'duration', key: keys.batchMaxWait, default: d.maxWaitMs,
      help: "The amount of time to wait before force writing the batch that hadn't reached the max size. Only used in batch mode.",
      validate: nonNegative,
    },
    {
      name: `${prefix}-batch-throttle-burst`, type: 'int', key: keys.batchThrottleBurst, default: d.burst,
      help: 'Maximum number of requests sent at the same moment if ThrottleQPS was not utilized before. Only used in batch mode.',
    },
    {
      name: `${prefix}-batch-throttle-enable`, type: 'bool', key: keys.batchThrottleEnable, default: d.throttle,
      help: 'Whether batching throttling is enabled. Only used in batch mode.',
    },
    {
      name: `${prefix}-batch-throttle-qps`, type: 'float', key: keys.batchThrottleQps, default: d.qps,
      help: 'Maximum average number of batches per second. Only used in batch mode.',
    },
    {
      name: `${prefix}-mode`, type: 'string', key: keys.mode, default: d.mode,
      help:
        'Strategy for sending audit events. Blocking indicates sending events should block server responses. ' +
        'Batch causes the backend to buffer and write events asynchronously. ' +
        `Known modes are ${AUDIT_MODES.join(',')}.`,
      validate: (mode) => (AUDIT_MODES.includes(mode) ? undefined : `invalid audit ${plugin} mode ${mode}, allowed modes are ${quote(AUDIT_MODES.join(','))}`),
    },
    {
      name: `${prefix}-truncate-enabled`, type: 'bool', key: keys.truncateEnabled, default: false,
      help: 'Whether event and batch truncating is enabled.',
    },
    {
      name: `${prefix}-truncate-max-batch-size`, type: 'int', key: keys.truncateMaxBatchSize, default: 10 * 1024 * 1024,
      help:
        'Maximum size of the batch sent to the underlying backend. Actual serialized size can be several hundreds of bytes greater. ' +
        'If a batch exceeds this limit, it is split into several batches of smaller size.',
    },
    {
      name: `${prefix}-truncate-max-event-size`, type: 'int', key: keys.truncateMaxEventSize, default: 100 * 1024,
      help:
        'Maximum size of the audit event sent to the underlying backend. If the size of an event is greater than this number, ' +
        "first request and response are removed, and if this doesn't reduce the size enough, event is discarded.",
    },
  ];
}

const AUDIT_FLAGS: readonly AnyFlagSpec[] = [
  {
    name: 'audit-log-compress',
    type: 'bool',
    key: 'auditLogCompress',
    default: false,
    help: 'If set, the rotated log files will be compressed using gzip.',
  },
  {
    name: 'audit-log-format',
    type: 'string',
    key: 'auditLogFormat',
    default: 'json',
    help:
      'Format of saved audits. "legacy" indicates 1-line text format for each event. "json" indicates structured json format. ' +
      `Known formats are ${AUDIT_LOG_FORMATS.join(',')}.`,
    validate: (format) => (AUDIT_LOG_FORMATS.includes(format) ? undefined : `invalid audit log format ${format}, allowed formats are ${quote(AUDIT_LOG_FORMATS.join(','))}`),
  },
  {
    name: 'audit-log-maxage',
    type: 'int',
    key: 'auditLogMaxAge',
    default: 0,
    help: 'The maximum number of days to retain old audit log files based on the timestamp encoded in their filename.',
    validate: auditNotNegative,
  },
  {
    name: 'audit-log-maxbackup',
    type: 'int',
    key: 'auditLogMaxBackup',
    default: 0,
    help: 'The maximum number of old audit log files to retain. Setting a value of 0 will mean there\'s no restriction on the number of files.',
    validate: auditNotNegative,
  },
  {
    name: 'audit-log-maxsize',
    type: 'int',
    key: 'auditLogMaxSize',
    default: 0,
    help: 'The maximum size in megabytes of the audit log file before it gets rotated. 0 means 100, as in kube-apiserver.',
    validate: auditNotNegative,
  },
  {
    name: 'audit-log-path',
    type: 'string',
    key: 'auditLogPath',
    help: "If set, all requests coming to the apiserver will be logged to this file. '-' means standard out.",
  },
  ...auditBackendFlags('log', {
    mode: 'auditLogMode', batchBufferSize: 'auditLogBatchBufferSize', batchMaxSize: 'auditLogBatchMaxSize',
    batchMaxWait: 'auditLogBatchMaxWaitMs', batchThrottleEnable: 'auditLogBatchThrottleEnable', batchThrottleQps: 'auditLogBatchThrottleQps',
    batchThrottleBurst: 'auditLogBatchThrottleBurst', truncateEnabled: 'auditLogTruncateEnabled',
    truncateMaxBatchSize: 'auditLogTruncateMaxBatchSize', truncateMaxEventSize: 'auditLogTruncateMaxEventSize',
  }, { mode: 'blocking', bufferSize: 10000, maxSize: 1, maxWaitMs: 0, throttle: false, qps: 0, burst: 0 }),
  {
    name: 'audit-policy-file',
    type: 'string',
    key: 'auditPolicyFile',
    help:
      'Path to the file that defines the audit policy configuration (an audit.orch.io/v1 or audit.k8s.io/v1 Policy). ' +
      'Without it nothing is audited.',
  },
  {
    name: 'audit-webhook-config-file',
    type: 'string',
    key: 'auditWebhookConfigFile',
    help: 'Path to a kubeconfig formatted file that defines the audit webhook configuration.',
  },
  {
    name: 'audit-webhook-initial-backoff',
    type: 'duration',
    key: 'auditWebhookInitialBackoffMs',
    default: parseDuration('10s'),
    help: 'The amount of time to wait before retrying the first failed request.',
    validate: nonNegative,
  },
  {
    name: 'audit-webhook-version',
    type: 'string',
    key: 'auditWebhookVersion',
    default: 'audit.orch.io/v1',
    help: `API group and version used for serializing audit events written to webhook: ${AUDIT_VERSIONS.join(' or ')}.`,
    validate: (version) => (AUDIT_VERSIONS.includes(version) ? undefined : `invalid group version, allowed versions are ${quote(AUDIT_VERSIONS.join(','))}`),
  },
  ...auditBackendFlags('webhook', {
    mode: 'auditWebhookMode', batchBufferSize: 'auditWebhookBatchBufferSize', batchMaxSize: 'auditWebhookBatchMaxSize',
    batchMaxWait: 'auditWebhookBatchMaxWaitMs', batchThrottleEnable: 'auditWebhookBatchThrottleEnable', batchThrottleQps: 'auditWebhookBatchThrottleQps',
    batchThrottleBurst: 'auditWebhookBatchThrottleBurst', truncateEnabled: 'auditWebhookTruncateEnabled',
    truncateMaxBatchSize: 'auditWebhookTruncateMaxBatchSize', truncateMaxEventSize: 'auditWebhookTruncateMaxEventSize',
  }, { mode: 'batch', bufferSize: 10000, maxSize: 400, maxWaitMs: parseDuration('30s'), throttle: true, qps: 10, burst: 15 }),
];
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

const FLAGS: readonly AnyFlagSpec[] = [
  ...AUDIT_FLAGS,
  {
    name: 'admission-control-config-file',
    type: 'string',
    key: 'admissionControlConfigFile',
    help: 'File with admission control configuration (an AdmissionConfiguration of apiserver.config.orch.io/v1 or apiserver.config.k8s.io/v1).',
  },
  {
    name: 'advertise-address',
    type: 'ip',
    key: 'advertiseAddress',
    help:
      'The IP address on which to advertise the apiserver to members of the cluster. ' +
      'If blank, the --bind-address will be used.',
  },
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
    name: 'authorization-mode',
    type: 'stringList',
    key: 'authorizationModes',
    default: ['AlwaysAllow'],
    help:
      'Ordered list of plug-ins to do authorization on secure port. Comma-delimited list of: ' +
      `${SUPPORTED_AUTHORIZATION_MODES.join(',')} (${PLANNED_AUTHORIZATION_MODES.join(', ')} are not supported yet).`,
    validate: validateAuthorizationModes,
  },
  {
    name: 'bind-address',
    type: 'ip',
    key: 'bindAddress',
    default: '127.0.0.1',
    help:
      'The IP address on which to listen for the --secure-port port. Unlike kube-apiserver, which ' +
      'listens on all interfaces by default, this server defaults to loopback only: pass 0.0.0.0 ' +
      '(or :: for IPv6) to listen on all interfaces.',
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
    name: 'continue-ttl',
    type: 'duration',
    key: 'continueTtlMs',
    default: parseDuration('5m'),
    help: 'How long the continue token of a paginated list stays usable; older tokens get 410 Gone.',
    validate: nonNegative,
  },
  {
    name: 'data-dir',
    type: 'string',
    key: 'dataDir',
    default: './data',
    help:
      'Directory of the server\'s PKI (pki/) and admin kubeconfig (admin.kubeconfig), and of the embedded SQLite store when --etcd-servers is empty. ' +
      'A relative path is resolved against the working directory.',
    validate: (dir, flag) => (dir === '' ? `${flag} must not be empty` : undefined),
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
    name: 'enable-admission-plugins',
    type: 'stringList',
    key: 'enableAdmissionPlugins',
    default: [],
    help:
      `admission plugins that should be enabled in addition to default enabled ones (${DEFAULT_ADMISSION_PLUGINS.join(', ')}). ` +
      `Comma-delimited list of admission plugins: ${ADMISSION_PLUGINS.join(', ')}. The order of plugins in this flag does not matter.`,
    validate: (plugins) => {
      const unknown = plugins.find((p) => !ADMISSION_PLUGINS.includes(p));
      return unknown === undefined ? undefined : `enable-admission-plugins plugin ${quote(unknown)} is unknown`;
    },
  },
  {
    name: 'enable-garbage-collector',
    type: 'bool',
    key: 'enableGarbageCollector',
    default: true,
    help:
      'Enables the generic garbage collector: DELETE adds the orphan and foregroundDeletion finalizers ' +
      'that propagationPolicy asks for, and the built-in garbage collector controller deletes or orphans dependents.',
  },
  {
    name: 'enable-priority-and-fairness',
    type: 'bool',
    key: 'enablePriorityAndFairness',
    default: true,
    help:
      'If true, replace the max-in-flight handler with an enhanced one that queues and dispatches with ' +
      'priority and fairness (FlowSchemas and PriorityLevelConfigurations of flowcontrol.apiserver.orch.io/v1).',
  },
  {
    name: 'etcd-cafile',
    type: 'string',
    key: 'etcdCaFile',
    help: 'SSL Certificate Authority file used to secure etcd communication.',
  },
  {
    name: 'etcd-certfile',
    type: 'string',
    key: 'etcdCertFile',
    help: 'SSL certification file used to secure etcd communication.',
  },
  {
    name: 'etcd-compaction-interval',
    type: 'duration',
    key: 'etcdCompactionIntervalMs',
    default: parseDuration('5m'),
    help: 'The interval of compaction requests. If 0, the compaction request from apiserver is disabled.',
    validate: nonNegative,
  },
  {
    name: 'etcd-keyfile',
    type: 'string',
    key: 'etcdKeyFile',
    help: 'SSL key file used to secure etcd communication.',
  },
  {
    name: 'etcd-prefix',
    type: 'string',
    key: 'etcdPrefix',
    default: '/registry',
    help: 'The prefix to prepend to all resource paths in etcd.',
  },
  {
    name: 'etcd-servers',
    type: 'stringList',
    key: 'etcdServers',
    default: [],
    help:
      'List of etcd servers to connect with (scheme://ip:port), comma separated. ' +
      'If empty, the embedded SQLite store in --data-dir is used.',
    validate: validateEtcdServers,
  },
  {
    name: 'event-ttl',
    type: 'duration',
    key: 'eventTtlMs',
    default: parseDuration('1h'),
    help: 'Amount of time to retain events.',
    validate: nonNegative,
  },
  {
    name: 'feature-gates',
    type: 'featureGates',
    key: 'featureGates',
    default: defaultFeatureGates(),
    help:
      'A set of key=value pairs that describe feature gates for alpha/experimental features. ' +
      `Options are:\n${describeFeatureGates().join('\n')}`,
  },
  {
    name: 'goaway-chance',
    type: 'float',
    key: 'goawayChance',
    default: 0,
    help:
      'To prevent HTTP/2 clients from getting stuck on a single apiserver, randomly close a connection (GOAWAY). ' +
      'The client\'s other in-flight requests won\'t be affected, and the client will reconnect, likely landing on a ' +
      'different apiserver after going through the load balancer again. This argument sets the fraction of requests ' +
      'that will be sent a GOAWAY. Clusters with single apiservers, or which don\'t use a load balancer, should NOT ' +
      'enable this. Min is 0 (off), Max is .02 (1/50 requests); .001 (1/1000) is a recommended starting point.',
    validate: (chance) => (chance < 0 || chance > 0.02 ? '--goaway-chance can not be less than 0 or greater than 0.02' : undefined),
  },
  {
    name: 'log-level',
    type: 'level',
    key: 'logLevel',
    default: 'info',
    help:
      `Log level: one of ${LOG_LEVELS.join(', ')}, or a klog verbosity number as for -v. ` +
      'If both this and -v are given, the last one wins.',
  },
  {
    name: 'max-mutating-requests-inflight',
    type: 'int',
    key: 'maxMutatingRequestsInflight',
    default: 200,
    help:
      'The maximum number of mutating requests in flight at a given time. When the server ' +
      'exceeds this, it rejects requests. Zero for no limit.',
    validate: nonNegative,
  },
  {
    name: 'max-request-body-bytes',
    type: 'int',
    key: 'maxRequestBodyBytes',
    default: 3 * 1024 * 1024,
    help: 'The largest request body accepted, in bytes; larger requests get 413. Zero for no limit.',
    validate: nonNegative,
  },
  {
    name: 'max-requests-inflight',
    type: 'int',
    key: 'maxRequestsInflight',
    default: 400,
    help:
      'The maximum number of non-mutating requests in flight at a given time. When the server ' +
      'exceeds this, it rejects requests. Zero for no limit.',
    validate: nonNegative,
  },
  {
    name: 'max-unsent-bytes',
    type: 'int',
    key: 'maxUnsentBytes',
    default: 512 * 1024 * 1024,
    help:
      'The most bytes all connections together may hold written but not yet taken by their clients. ' +
      'Past it, the connections holding the most are cut first (HTTP/1.1 and WebSocket: the ' +
      'connection is closed; HTTP/2: its streams holding bytes are reset). Zero for no limit.',
    validate: nonNegative,
  },
  {
    name: 'max-unsent-bytes-per-connection',
    type: 'int',
    key: 'maxUnsentBytesPerConnection',
    default: 16 * 1024 * 1024,
    help:
      'The most bytes one connection (all its responses and watches together) may hold written but ' +
      'not yet taken by its client. Past it, the response is ended at once, its backlog dropped: ' +
      'the HTTP/1.1 or WebSocket connection is closed, an HTTP/2 stream is reset (the session\'s ' +
      'other streams live on). A watch cut so resumes from its last resourceVersion. Zero for no limit.',
    validate: nonNegative,
  },
  {
    name: 'min-request-timeout',
    type: 'int',
    key: 'minRequestTimeoutSeconds',
    default: 1800,
    help:
      'The minimum number of seconds a handler must keep a request open before timing it out. ' +
      'Currently only honored by the watch request handler, which picks a randomized value above ' +
      'this number as the connection timeout, to spread out load.',
    validate: nonNegative,
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
    name: 'request-timeout',
    type: 'duration',
    key: 'requestTimeoutMs',
    default: parseDuration('1m'),
    help:
      'The duration a handler must keep a request open before timing it out. This is the default ' +
      'request timeout for requests but may be overridden by flags such as --min-request-timeout ' +
      'for specific types of requests.',
    validate: nonNegative,
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
    name: 'secure-port',
    type: 'int',
    key: 'securePort',
    default: 6443,
    help: 'The port on which to serve HTTPS with authentication and authorization. It cannot be switched off with 0.',
    validate: (port, flag) =>
      port >= 1 && port <= 65535
        ? undefined
        : `${flag} ${port} must be between 1 and 65535, inclusive. It cannot be turned off with 0`,
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
    name: 'shutdown-delay-duration',
    type: 'duration',
    key: 'shutdownDelayMs',
    default: 0,
    help:
      'Time to delay the termination. During that time the server keeps serving requests normally, ' +
      'but /readyz returns failure, so that load balancers stop sending traffic to this server.',
    validate: nonNegative,
  },
  {
    name: 'tls-cert-file',
    type: 'string',
    key: 'tlsCertFile',
    help:
      'File containing the default x509 certificate for HTTPS (CA cert, if any, concatenated after ' +
      'the server cert). Must be given together with --tls-private-key-file.',
  },
  {
    name: 'tls-private-key-file',
    type: 'string',
    key: 'tlsPrivateKeyFile',
    help: 'File containing the default x509 private key matching --tls-cert-file.',
  },
  {
    name: 'token-auth-file',
    type: 'string',
    key: 'tokenAuthFile',
    help: 'If set, the file that will be used to secure the secure port of the API server via token authentication.',
  },
  {
    name: 'v',
    shorthand: 'v',
    type: 'level',
    key: 'logLevel',
    help:
      'number for the log level verbosity, as klog counts it: 0-2 info, 3-5 debug (a line per request from 3 on, as kube-apiserver logs them), 6 and above trace. ' +
      'If both this and --log-level are given, the last one wins.',
  },
  {
    name: 'kubernetes-group-aliases',
    type: 'bool',
    key: 'kubernetesGroupAliases',
    default: true,
    help:
      'Also serve each API group the spec names after orch.io under the name Kubernetes gives it ' +
      '(events.k8s.io, coordination.k8s.io, ...), over the same objects, for clients that hard-code ' +
      "Kubernetes' names. false serves only the orch.io names.",
  },
  {
    name: 'watch-history',
    type: 'duration',
    key: 'watchHistoryMs',
    default: parseDuration('5m'),
    help:
      'How long watch events are kept so that a watch can resume from an older resourceVersion; ' +
      'resuming from before that gets 410 Gone.',
    validate: nonNegative,
  },
];

/** Flags that only make sense as a pair: giving one without the other is an error. */
const REQUIRED_TOGETHER: readonly (readonly [keyof ServerConfig, keyof ServerConfig])[] = [
  ['tlsCertFile', 'tlsPrivateKeyFile'],
  ['etcdCertFile', 'etcdKeyFile'],
];

// ---------------------------------------------------------------------------
// Generic parsing over the table

/**
 * A table entry with its type resolved. The table ties each flag's type to its
 * value and config key; past this point values travel as unknown.
 */
interface Flag {
  readonly name: string;
  readonly shorthand?: string;
  readonly isBool: boolean;
  readonly key: keyof ServerConfig;
  readonly default?: unknown;
  readonly help: string;
  readonly validate?: (value: unknown, flag: string) => string | undefined;
  readonly kind: Kind<unknown>;
  /** How pflag names the flag in errors: `--name`, or `-v, --v` when it has a shorthand. */
  readonly label: string;
  readonly envName: string;
}

const TABLE: readonly Flag[] = FLAGS.map((spec) => ({
  ...spec,
  isBool: spec.type === 'bool',
  validate: spec.validate as Flag['validate'],
  kind: KINDS[spec.type] as Kind<unknown>,
  label: spec.shorthand === undefined ? `--${spec.name}` : `-${spec.shorthand}, --${spec.name}`,
  envName: ENV_PREFIX + spec.name.toUpperCase().replaceAll('-', '_'),
}));
const BY_NAME = new Map(TABLE.map((flag) => [flag.name, flag]));
const BY_SHORTHAND = new Map(
  TABLE.flatMap((flag) => (flag.shorthand === undefined ? [] : [[flag.shorthand, flag] as const])),
);

interface Occurrence {
  readonly flag: Flag;
  readonly text: string;
}

/**
 * Parses the command line (without node and script), over environment
 * variables ORCH_APISERVER_<FLAG_NAME> (empty ones ignored), over defaults.
 * `-h`/`--help` anywhere returns the help text instead. Throws FlagError.
 */
export function parseFlags(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
): { config: ServerConfig } | { help: string } {
  const occurrences = tokenize(argv);
  if (occurrences === 'help') return { help: helpText() };

  const values = new Map<keyof ServerConfig, unknown>();
  for (const flag of TABLE) if (flag.default !== undefined) values.set(flag.key, flag.default);

  // Environment values stand in for defaults, so they too are replaced, not appended to.
  for (const flag of TABLE) {
    const text = env[flag.envName];
    if (text === undefined || text === '') continue;
    try {
      values.set(flag.key, flag.kind.parse(text, values.get(flag.key), true));
    } catch (error) {
      throw new FlagError(
        `invalid value ${quote(text)} in ${flag.envName} for ${quote(flag.label)} flag: ${(error as Error).message}`,
      );
    }
  }

  const explicit = new Set<string>();
  for (const flag of TABLE) {
    const text = env[flag.envName];
    if (text !== undefined && text !== '') explicit.add(flag.name);
  }
  const seen = new Set<Flag>();
  for (const { flag, text } of occurrences) {
    explicit.add(flag.name);
    try {
      values.set(flag.key, flag.kind.parse(text, values.get(flag.key), !seen.has(flag)));
    } catch (error) {
      throw new FlagError(`invalid argument ${quote(text)} for ${quote(flag.label)} flag: ${(error as Error).message}`);
    }
    seen.add(flag);
  }

  for (const flag of TABLE) {
    const value = values.get(flag.key);
    const problem = value === undefined ? undefined : flag.validate?.(value, `--${flag.name}`);
    if (problem !== undefined) throw new FlagError(problem);
  }
  for (const [a, b] of REQUIRED_TOGETHER) {
    if (values.has(a) !== values.has(b)) {
      throw new FlagError(`${flagFor(a)} and ${flagFor(b)} must be specified together`);
    }
  }

  values.set('dataDir', resolve(values.get('dataDir') as string));
  values.set('explicitFlags', [...explicit].sort());
  for (const value of values.values()) if (Array.isArray(value) || (typeof value === 'object' && value?.constructor === Object)) Object.freeze(value);
  // Every required key has a flag with a default, so the entries make a whole ServerConfig.
  return { config: Object.freeze(Object.fromEntries(values)) as unknown as ServerConfig };
}

function flagFor(key: keyof ServerConfig): string {
  return `--${TABLE.find((flag) => flag.key === key)!.name}`;
}

/**
 * Splits argv into flag occurrences with pflag's syntax: `--name=value`,
 * `--name value`, bools as `--name` or `--name=false`, shorthands as `-v=4`,
 * `-v 4` or `-v4`, and `--` ending the flags. Underscores in names read as
 * dashes (Kubernetes' WordSepNormalizeFunc). Stops at the first -h/--help.
 */
function tokenize(argv: readonly string[]): Occurrence[] | 'help' {
  const occurrences: Occurrence[] = [];
  const positional: string[] = [];
  let i = 0;
  // A flag's value may be the next argument, even if it starts with a dash, as in pflag.
  const next = (): string | undefined => (i < argv.length ? argv[i++] : undefined);

  while (i < argv.length) {
    const arg = argv[i++]!;
    if (arg === '--') {
      positional.push(...argv.slice(i));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positional.push(arg);
    } else if (arg.startsWith('--')) {
      const body = arg.slice(2);
      if (body.startsWith('-') || body.startsWith('=')) throw new FlagError(`bad flag syntax: ${arg}`);
      const eq = body.indexOf('=');
      const name = eq < 0 ? body : body.slice(0, eq);
      const normalized = name.replaceAll('_', '-');
      const flag = BY_NAME.get(normalized);
      if (flag === undefined) {
        if (normalized === 'help') return 'help';
        throw new FlagError(`unknown flag: --${name}`);
      }
      const text = eq >= 0 ? body.slice(eq + 1) : flag.isBool ? 'true' : next();
      if (text === undefined) throw new FlagError(`flag needs an argument: ${arg}`);
      occurrences.push({ flag, text });
    } else {
      // Several shorthands may share one dash (`-ab`); a value ends the group.
      let shorthands = arg.slice(1);
      while (shorthands !== '') {
        const letter = String.fromCodePoint(shorthands.codePointAt(0)!);
        const rest = shorthands.slice(letter.length);
        const flag = BY_SHORTHAND.get(letter);
        if (flag === undefined) {
          if (letter === 'h') return 'help';
          throw new FlagError(`unknown shorthand flag: '${letter}' in -${shorthands}`);
        }
        let text: string | undefined;
        if (rest.startsWith('=')) text = rest.slice(1);
        else if (flag.isBool) text = 'true';
        else if (rest !== '') text = rest;
        else text = next();
        if (text === undefined) throw new FlagError(`flag needs an argument: '${letter}' in -${shorthands}`);
        occurrences.push({ flag, text });
        shorthands = flag.isBool && !rest.startsWith('=') ? rest : '';
      }
    }
  }
  if (positional.length > 0) throw new FlagError(`unexpected argument ${quote(positional[0]!)}`);
  return occurrences;
}

/** Usage and every flag, sorted by name, laid out as pflag's FlagUsages. */
export function helpText(): string {
  const rows = [
    ...TABLE.map((flag) => {
      const shown = flag.default === undefined ? undefined : flag.kind.show(flag.default);
      return {
        name: flag.name,
        left: `${flag.shorthand === undefined ? '    ' : `-${flag.shorthand}, `}--${flag.name}${
          flag.kind.typeName === '' ? '' : ` ${flag.kind.typeName}`
        }`,
        right: flag.help + (shown === undefined ? '' : ` (default ${shown})`),
      };
    }),
    { name: 'help', left: '-h, --help', right: `help for ${PROGRAM}` },
  ].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

  const width = Math.max(...rows.map((row) => row.left.length)) + 3;
  const lines = rows.map(
    (row) => `  ${row.left.padEnd(width)}${row.right.replaceAll('\n', `\n${' '.repeat(width + 2)}`)}`,
  );
  return [
    'Usage:',
    `  ${PROGRAM} [flags]`,
    '',
    'Every flag can also be set through an environment variable named after it, such as',
    `${ENV_PREFIX}SECURE_PORT for --secure-port; the command line takes precedence.`,
    '',
    'Flags:',
    ...lines,
    '',
  ].join('\n');
}
