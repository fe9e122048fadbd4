/** Storage flags: the data directory, etcd, history, retention and the garbage collector. */
import { parseDuration } from '../duration.js';
import { type AnyFlagSpec, nonNegative, quote } from '../flag-spec.js';

function validateEtcdServers(urls: string[], flag: string): string | undefined {
  const bad = urls.find((url) => !URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol));
  return bad === undefined ? undefined : `${flag} ${quote(bad)} is not an http or https URL`;
}

export const STORAGE_FLAGS: readonly AnyFlagSpec[] = [
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
    name: 'enable-garbage-collector',
    type: 'bool',
    key: 'enableGarbageCollector',
    default: true,
    help:
      'Enables the generic garbage collector: DELETE adds the orphan and foregroundDeletion finalizers ' +
      'that propagationPolicy asks for, and the built-in garbage collector controller deletes or orphans dependents.',
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
    name: 'watch-history',
    type: 'duration',
    key: 'watchHistoryMs',
    default: parseDuration('5m'),
    help:
      'How long watch events are kept so that a watch can resume from an older resourceVersion; ' +
      'resuming from before that gets 410 Gone.',
    validate: nonNegative,
  },
  {
    name: 'watch-encoder-threads',
    type: 'int',
    key: 'watchEncoderThreads',
    default: 0,
    help:
      'Threads of the encoder pool, which encodes every watch event once per encoding and view in use. ' +
      '0 picks one less than the machine\'s cores (at least 1).',
    validate: nonNegative,
  },
];
