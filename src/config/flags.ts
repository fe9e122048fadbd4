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
  readonly requestTimeoutMs: number;
  readonly minRequestTimeoutSeconds: number;
  readonly eventTtlMs: number;
  readonly watchHistoryMs: number;
  readonly continueTtlMs: number;
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
  bool: boolean;
  /** Milliseconds. */
  duration: number;
  stringList: string[];
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

/**
 * A log level, either as klog verbosity (what -v means to Kubernetes
 * operators) or as a pino level name.
 */
function parseLevel(text: string): LogLevel {
  if (/^\d+$/.test(text)) {
    const verbosity = Number(text);
    return verbosity >= 6 ? 'trace' : verbosity >= 4 ? 'debug' : 'info';
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

const FLAGS: readonly AnyFlagSpec[] = [
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
      'number for the log level verbosity, as klog counts it: 0-3 info, 4-5 debug, 6 and above trace. ' +
      'If both this and --log-level are given, the last one wins.',
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

  const seen = new Set<Flag>();
  for (const { flag, text } of occurrences) {
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
  for (const value of values.values()) if (Array.isArray(value)) Object.freeze(value);
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
