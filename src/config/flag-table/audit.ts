/** kube-apiserver's audit flags: the policy, the log backend and the webhook backend with their batching and truncation. */
import { parseDuration } from '../duration.js';
import { type AnyFlagSpec, type KeysFor, nonNegative, quote } from '../flag-spec.js';

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

export const AUDIT_FLAGS: readonly AnyFlagSpec[] = [
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
