/** Serving flags: addresses, ports, TLS, limits and timeouts, logging, feature gates, API names. */
import { parseDuration } from '../duration.js';
import { type AnyFlagSpec, nonNegative } from '../flag-spec.js';
import { defaultFeatureGates, describeFeatureGates } from '../feature-gates.js';
import { LOG_LEVELS } from '../server-config.js';

/** the release before the one this server matches (1.32) */
const previousMinorRelease = '1.31';

export const SERVING_FLAGS: readonly AnyFlagSpec[] = [
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
    name: 'advertise-address',
    type: 'ip',
    key: 'advertiseAddress',
    help:
      'The IP address on which to advertise the apiserver to members of the cluster. ' +
      'If blank, the --bind-address will be used.',
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
    name: 'feature-gates',
    type: 'featureGates',
    key: 'featureGates',
    default: defaultFeatureGates(),
    help:
      'A set of key=value pairs that describe feature gates for alpha/experimental features. ' +
      `Options are:\n${describeFeatureGates().join('\n')}`,
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
    name: 'runtime-config',
    type: 'runtimeConfig',
    key: 'runtimeConfig',
    default: Object.freeze({}),
    help:
      'A set of key=value pairs that enable or disable built-in APIs. Supported options are:\n' +
      'v1=true|false for the core API group\n' +
      '<group>/<version>=true|false for a specific API group and version (e.g. apps/v1=true)\n' +
      'api/all=true|false controls all API versions\n' +
      'api/ga=true|false controls all API versions of the form v[0-9]+\n' +
      'api/beta=true|false controls all API versions of the form v[0-9]+beta[0-9]+\n' +
      'api/alpha=true|false controls all API versions of the form v[0-9]+alpha[0-9]+',
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
    name: 'show-hidden-metrics-for-version',
    type: 'string',
    key: 'showHiddenMetricsForVersion',
    default: '',
    help: 'The previous version for which you want to show hidden metrics. Only the previous minor version is meaningful, ' +
      'other values will not be allowed. The format is <major>.<minor>, e.g.: \'1.16\'. The purpose of this format is make ' +
      'sure you have the opportunity to notice if the next release hides additional metrics, rather than being surprised ' +
      'when they are permanently removed in the release after that.',
    // component-base's validation, for a server of Kubernetes 1.32
    validate: (version) => (version === '' || version === previousMinorRelease
      ? undefined
      : `--show-hidden-metrics-for-version must be omitted or have the value '${previousMinorRelease}'. Only the previous minor version is allowed`),
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
];
