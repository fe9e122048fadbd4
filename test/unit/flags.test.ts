import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';

import { formatDuration, parseDuration } from '../../src/config/duration.js';
import {
  KNOWN_FEATURES,
  defaultFeatureGates,
  describeFeatureGates,
  parseBool,
  parseFeatureGates,
} from '../../src/config/feature-gates.js';
import { FlagError } from '../../src/config/flag-spec.js';
import { helpText, parseFlags } from '../../src/config/flags.js';
import type { ServerConfig } from '../../src/config/server-config.js';

/** Parses with an empty environment, so the developer's shell cannot leak in. */
function config(argv: string[], env: NodeJS.ProcessEnv = {}): ServerConfig {
  const result = parseFlags(argv, env);
  assert.ok('config' in result, 'expected a config, got help');
  return result.config;
}

function rejects(argv: string[], message: string, env: NodeJS.ProcessEnv = {}): void {
  assert.throws(() => parseFlags(argv, env), (error: unknown) => {
    assert.ok(error instanceof FlagError, `expected a FlagError, got ${String(error)}`);
    assert.equal(error.message, message);
    return true;
  });
}

describe('parseDuration / formatDuration', () => {
  it('round-trips Go syntax to Go String() form', () => {
    const table: [input: string, ms: number, formatted: string][] = [
      ['0', 0, '0s'],
      ['0s', 0, '0s'],
      ['-0', 0, '0s'],
      ['1h0m0s', 3_600_000, '1h0m0s'],
      ['5m', 300_000, '5m0s'],
      ['30s', 30_000, '30s'],
      ['90s', 90_000, '1m30s'],
      ['1.5h', 5_400_000, '1h30m0s'],
      ['2h45m', 9_900_000, '2h45m0s'],
      ['100h', 360_000_000, '100h0m0s'],
      ['300ms', 300, '300ms'],
      ['1.5s', 1_500, '1.5s'],
      ['.5s', 500, '500ms'],
      ['5.s', 5_000, '5s'],
      ['1m30.5s', 90_500, '1m30.5s'],
      ['1h1m1s1ms', 3_661_001, '1h1m1.001s'],
      ['1.0001ms', 1.0001, '1.0001ms'],
      ['1us', 0.001, '1µs'],
      ['1µs', 0.001, '1µs'],
      ['1μs', 0.001, '1µs'], // Greek mu
      ['1.5us', 0.0015, '1.5µs'],
      ['1ns', 0.000001, '1ns'],
      ['-1m30s', -90_000, '-1m30s'],
      ['+5s', 5_000, '5s'],
    ];
    for (const [input, ms, formatted] of table) {
      assert.equal(parseDuration(input), ms, `parseDuration(${input})`);
      assert.equal(formatDuration(parseDuration(input)), formatted, `format(parse(${input}))`);
    }
  });

  it('formats milliseconds', () => {
    assert.equal(formatDuration(0), '0s');
    assert.equal(formatDuration(500), '500ms');
    assert.equal(formatDuration(1_500), '1.5s');
    assert.equal(formatDuration(90_000), '1m30s');
    assert.equal(formatDuration(300_000), '5m0s');
    assert.equal(formatDuration(3_600_000), '1h0m0s');
    assert.equal(formatDuration(0.1), '100µs');
    assert.throws(() => formatDuration(Number.NaN), RangeError);
  });

  it('rejects bad syntax with Go messages', () => {
    const table: [input: string, message: string][] = [
      ['', 'time: invalid duration ""'],
      ['abc', 'time: invalid duration "abc"'],
      ['-', 'time: invalid duration "-"'],
      ['.', 'time: invalid duration "."'],
      ['.s', 'time: invalid duration ".s"'],
      ['5', 'time: missing unit in duration "5"'],
      ['1h5', 'time: missing unit in duration "1h5"'],
      ['5x', 'time: unknown unit "x" in duration "5x"'],
      ['1e3s', 'time: unknown unit "e" in duration "1e3s"'],
      ['3000000h', 'time: invalid duration "3000000h"'], // past int64 nanoseconds
      ['2562047h47m16.854775808s', 'time: invalid duration "2562047h47m16.854775808s"'], // int64 max + 1ns
    ];
    for (const [input, message] of table) {
      assert.throws(() => parseDuration(input), { message }, input);
    }
    // The int64 limits themselves are fine.
    assert.ok(parseDuration('2562047h47m16.854775807s') > 0);
    assert.ok(parseDuration('-2562047h47m16.854775808s') < 0);
  });
});

describe('feature gates', () => {
  it('knows the 1.32 gates with their stage and default', () => {
    assert.deepEqual(
      Object.fromEntries(Object.entries(KNOWN_FEATURES).map(([name, spec]) => [name, `${spec.stage}/${spec.default}`])),
      {
        AggregatedDiscoveryEndpoint: 'GA/true',
        AnonymousAuthConfigurableEndpoints: 'BETA/true',
        APIResponseCompression: 'BETA/true',
        CBORServingAndStorage: 'ALPHA/false',
        ComponentSLIs: 'BETA/true',
        ConsistentListFromCache: 'BETA/true',
        CRDValidationRatcheting: 'BETA/true',
        CustomResourceFieldSelectors: 'GA/true',
        KMSv1: 'DEPRECATED/false',
        StructuredAuthenticationConfiguration: 'BETA/true',
        StructuredAuthorizationConfiguration: 'BETA/true',
        WatchFromStorageWithoutResourceVersion: 'BETA/false',
        WatchList: 'BETA/true',
      },
    );
    const gates = defaultFeatureGates();
    for (const [name, spec] of Object.entries(KNOWN_FEATURES)) assert.equal(gates.enabled(name), spec.default, name);
    assert.ok(Object.isFrozen(KNOWN_FEATURES) && Object.isFrozen(KNOWN_FEATURES['WatchList']));
  });

  it('parses overrides, trimming and skipping empty items, later settings winning', () => {
    const gates = parseFeatureGates(' WatchList = false ,,CBORServingAndStorage=true,CBORServingAndStorage=T,');
    assert.equal(gates.enabled('WatchList'), false);
    assert.equal(gates.enabled('CBORServingAndStorage'), true);
    assert.equal(gates.enabled('APIResponseCompression'), true);
    assert.deepEqual(gates.overrides, { WatchList: false, CBORServingAndStorage: true });
    assert.deepEqual(parseFeatureGates('').overrides, {});
  });

  it('merges onto a base and is frozen', () => {
    const base = parseFeatureGates('WatchList=false');
    const merged = parseFeatureGates('ComponentSLIs=false', base);
    assert.equal(merged.enabled('WatchList'), false);
    assert.equal(merged.enabled('ComponentSLIs'), false);
    assert.equal(base.enabled('ComponentSLIs'), true);
    assert.ok(Object.isFrozen(merged) && Object.isFrozen(merged.overrides));
  });

  it('accepts extra gates from a caller-supplied table', () => {
    const known = { ...KNOWN_FEATURES, MyGate: { stage: 'ALPHA', default: false } } as const;
    const gates = parseFeatureGates('MyGate=true', defaultFeatureGates(known));
    assert.equal(gates.enabled('MyGate'), true);
    assert.throws(() => parseFeatureGates('MyGate=true'), { message: 'unrecognized feature gate: MyGate' });
  });

  it('rejects bad input with Kubernetes messages', () => {
    assert.throws(() => parseFeatureGates('Foo=true'), { message: 'unrecognized feature gate: Foo' });
    assert.throws(() => parseFeatureGates('Foo=bar'), {
      message: 'invalid value of Foo=bar, err: strconv.ParseBool: parsing "bar": invalid syntax',
    });
    assert.throws(() => parseFeatureGates('WatchList=true,Foo'), { message: 'missing bool value for Foo' });
    // Syntax is checked for every item before names are looked up, as in Kubernetes.
    assert.throws(() => parseFeatureGates('Unknown=true,WatchList=maybe'), {
      message: 'invalid value of WatchList=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax',
    });
    assert.throws(() => defaultFeatureGates().enabled('Nope'), { message: 'feature gate "Nope" is not registered' });
  });

  it('describes gates in Kubernetes help form', () => {
    assert.equal(describeFeatureGates()[0], 'APIResponseCompression=true|false (BETA - default=true)');
    // GA and deprecated gates are left out of help, as Kubernetes' KnownFeatures leaves them out
    assert.equal(describeFeatureGates().length, Object.values(KNOWN_FEATURES).filter((f) => f.stage !== 'GA' && f.stage !== 'DEPRECATED').length);
    assert.ok(!describeFeatureGates().some((line) => line.startsWith('CustomResourceFieldSelectors=')));
  });

  it('refuses to move a locked GA gate off its default, and warns about deprecated and GA gates', () => {
    assert.throws(() => parseFeatureGates('CustomResourceFieldSelectors=false'), {
      message: 'cannot set feature gate CustomResourceFieldSelectors to false, feature is locked to true',
    });
    const gates = parseFeatureGates('CustomResourceFieldSelectors=true,KMSv1=true,WatchList=false');
    assert.deepEqual(gates.warnings, [
      'Setting GA feature gate CustomResourceFieldSelectors=true. It will be removed in a future release.',
      'Setting deprecated feature gate KMSv1=true. It will be removed in a future release.',
    ]);
    assert.deepEqual(defaultFeatureGates().warnings, []);
  });

  it('parses bools as strconv.ParseBool', () => {
    for (const text of ['1', 't', 'T', 'true', 'TRUE', 'True']) assert.equal(parseBool(text), true, text);
    for (const text of ['0', 'f', 'F', 'false', 'FALSE', 'False']) assert.equal(parseBool(text), false, text);
    assert.throws(() => parseBool('yes'), { message: 'strconv.ParseBool: parsing "yes": invalid syntax' });
  });
});

describe('parseFlags', () => {
  it('has kube-apiserver defaults, except a loopback bind address', () => {
    const c = config([]);
    assert.deepEqual(
      { ...c, featureGates: undefined },
      {
        securePort: 6443,
        bindAddress: '127.0.0.1',
        anonymousAuth: true,
        authorizationModes: ['AlwaysAllow'],
        authorizationWebhookCacheAuthorizedTtlMs: 300_000,
        authorizationWebhookCacheUnauthorizedTtlMs: 30_000,
        authorizationWebhookVersion: 'v1beta1',
        dataDir: resolve('./data'),
        enableGarbageCollector: true,
        enablePriorityAndFairness: true,
        goawayChance: 0,
        showHiddenMetricsForVersion: '',
        enableAdmissionPlugins: [],
        requestTimeoutMs: 60_000,
        minRequestTimeoutSeconds: 1800,
        eventTtlMs: 3_600_000,
        watchHistoryMs: 300_000,
        watchEncoderThreads: 0,
        continueTtlMs: 300_000,
        kubernetesGroupAliases: true,
        maxRequestsInflight: 400,
        maxMutatingRequestsInflight: 200,
        maxRequestBodyBytes: 3_145_728,
        maxUnsentBytes: 536_870_912,
        maxUnsentBytesPerConnection: 16_777_216,
        shutdownDelayMs: 0,
        featureGates: undefined,
        runtimeConfig: {},
        logLevel: 'info',
        etcdServers: [],
        etcdPrefix: '/registry',
        etcdCompactionIntervalMs: 300_000,
        // kube-apiserver's audit defaults: the log blocks, the webhook batches
        auditLogFormat: 'json',
        auditLogMaxAge: 0,
        auditLogMaxBackup: 0,
        auditLogMaxSize: 0,
        auditLogCompress: false,
        auditLogMode: 'blocking',
        auditLogBatchBufferSize: 10_000,
        auditLogBatchMaxSize: 1,
        auditLogBatchMaxWaitMs: 0,
        auditLogBatchThrottleEnable: false,
        auditLogBatchThrottleQps: 0,
        auditLogBatchThrottleBurst: 0,
        auditLogTruncateEnabled: false,
        auditLogTruncateMaxBatchSize: 10_485_760,
        auditLogTruncateMaxEventSize: 102_400,
        auditWebhookInitialBackoffMs: 10_000,
        auditWebhookVersion: 'audit.orch.io/v1',
        auditWebhookMode: 'batch',
        auditWebhookBatchBufferSize: 10_000,
        auditWebhookBatchMaxSize: 400,
        auditWebhookBatchMaxWaitMs: 30_000,
        auditWebhookBatchThrottleEnable: true,
        auditWebhookBatchThrottleQps: 10,
        auditWebhookBatchThrottleBurst: 15,
        auditWebhookTruncateEnabled: false,
        auditWebhookTruncateMaxBatchSize: 10_485_760,
        auditWebhookTruncateMaxEventSize: 102_400,
        apiAudiences: [],
        enableBootstrapTokenAuth: false,
        serviceAccountIssuers: [],
        serviceAccountKeyFiles: [],
        serviceAccountLookup: true,
        serviceAccountMaxTokenExpirationMs: 0,
        serviceAccountExtendTokenExpiration: true,
        oidcUsernameClaim: 'sub',
        oidcRequiredClaims: {},
        oidcSigningAlgs: ['RS256'],
        webhookTokenAuthnCacheTtlMs: 120_000,
        webhookTokenAuthnVersion: 'v1beta1',
        requestheaderAllowedNames: [],
        requestheaderUsernameHeaders: [],
        requestheaderUidHeaders: [],
        requestheaderGroupHeaders: [],
        requestheaderExtraHeadersPrefix: [],
        explicitFlags: [],
      },
    );
    assert.deepEqual(c.featureGates.overrides, {});
    assert.equal(c.featureGates.enabled('WatchList'), true);
  });

  it('reads the audit flags: float rates, kube-apiserver\'s messages for bad modes, formats, versions and sizes', () => {
    const c = config(['--audit-policy-file=p.yaml', '--audit-log-path', '-', '--audit-webhook-batch-throttle-qps', '2.5', '--audit-log-mode=batch']);
    assert.equal(c.auditPolicyFile, 'p.yaml');
    assert.equal(c.auditLogPath, '-');
    assert.equal(c.auditWebhookBatchThrottleQps, 2.5);
    assert.equal(c.auditLogMode, 'batch');
    rejects(['--audit-webhook-batch-throttle-qps', 'fast'], 'invalid argument "fast" for "--audit-webhook-batch-throttle-qps" flag: strconv.ParseFloat: parsing "fast": invalid syntax');
    rejects(['--audit-log-mode', 'eventually'], 'invalid audit log mode eventually, allowed modes are "batch,blocking,blocking-strict"');
    rejects(['--audit-log-format', 'xml'], 'invalid audit log format xml, allowed formats are "json,legacy"');
    rejects(['--audit-webhook-version', 'audit.k8s.io/v1beta1'], 'invalid group version, allowed versions are "audit.orch.io/v1,audit.k8s.io/v1"');
    rejects(['--audit-log-maxage', '-1'], "--audit-log-maxage -1 can't be a negative number");
  });

  it('returns a frozen config, arrays included', () => {
    const c = config(['--authorization-mode=AlwaysDeny']);
    assert.ok(Object.isFrozen(c));
    assert.ok(Object.isFrozen(c.authorizationModes) && Object.isFrozen(c.etcdServers));
    assert.throws(() => c.authorizationModes.push('AlwaysAllow'), TypeError);
  });

  it('takes --name=value and --name value, and underscores for dashes', () => {
    assert.equal(config(['--etcd-prefix=/a']).etcdPrefix, '/a');
    assert.equal(config(['--etcd-prefix', '/b']).etcdPrefix, '/b');
    assert.equal(config(['--etcd_prefix', '/c']).etcdPrefix, '/c');
    assert.equal(config(['--etcd-prefix=']).etcdPrefix, '');
    assert.equal(config(['--etcd-prefix', '--not-a-flag']).etcdPrefix, '--not-a-flag'); // as in pflag
    assert.equal(config(['--etcd-prefix=/a', '--etcd-prefix=/z']).etcdPrefix, '/z'); // last wins
  });

  it('parses string flags', () => {
    const c = config([
      '--tls-cert-file=server.crt',
      '--tls-private-key-file',
      'server.key',
      '--client-ca-file=ca.crt',
      '--etcd-cafile=e-ca.crt',
      '--etcd-certfile=e.crt',
      '--etcd-keyfile=e.key',
      '--data-dir=/var/lib/orch',
    ]);
    assert.equal(c.tlsCertFile, 'server.crt');
    assert.equal(c.tlsPrivateKeyFile, 'server.key');
    assert.equal(c.clientCaFile, 'ca.crt');
    assert.equal(c.etcdCaFile, 'e-ca.crt');
    assert.equal(c.etcdCertFile, 'e.crt');
    assert.equal(c.etcdKeyFile, 'e.key');
    assert.equal(c.dataDir, '/var/lib/orch');
    assert.equal(config(['--data-dir', 'rel/dir']).dataDir, resolve('rel/dir'));
  });

  it('parses int flags like strconv.ParseInt with base 0', () => {
    assert.equal(config(['--secure-port=8443']).securePort, 8443);
    assert.equal(config(['--secure-port', '0x20FB']).securePort, 8443);
    assert.equal(config(['--secure-port=020373']).securePort, 8443);
    assert.equal(config(['--secure-port=8_443']).securePort, 8443);
    assert.equal(config(['--max-requests-inflight=0']).maxRequestsInflight, 0);
    assert.equal(config(['--max-mutating-requests-inflight=10']).maxMutatingRequestsInflight, 10);
    assert.equal(config(['--max-request-body-bytes=1048576']).maxRequestBodyBytes, 1_048_576);
    assert.equal(config(['--max-unsent-bytes=0']).maxUnsentBytes, 0);
    assert.equal(config(['--max-unsent-bytes-per-connection=262144']).maxUnsentBytesPerConnection, 262_144);
    assert.equal(config(['--min-request-timeout=60']).minRequestTimeoutSeconds, 60);
  });

  it('parses bool flags: bare means true, a value needs =', () => {
    assert.equal(config(['--anonymous-auth=false']).anonymousAuth, false);
    assert.equal(config(['--anonymous-auth=0']).anonymousAuth, false);
    assert.equal(config(['--anonymous-auth=false', '--anonymous-auth']).anonymousAuth, true);
    rejects(['--anonymous-auth', 'false'], 'unexpected argument "false"');
  });

  it('parses duration flags', () => {
    const c = config([
      '--request-timeout=30s',
      '--event-ttl=2h',
      '--watch-history',
      '10m',
      '--continue-ttl=90s',
      '--shutdown-delay-duration=1.5s',
      '--etcd-compaction-interval=0',
    ]);
    assert.equal(c.requestTimeoutMs, 30_000);
    assert.equal(c.eventTtlMs, 7_200_000);
    assert.equal(c.watchHistoryMs, 600_000);
    assert.equal(c.continueTtlMs, 90_000);
    assert.equal(c.shutdownDelayMs, 1_500);
    assert.equal(c.etcdCompactionIntervalMs, 0);
  });

  it('parses list flags: comma lists, repeats append, the first replaces the default', () => {
    assert.deepEqual(config(['--authorization-mode=AlwaysDeny,AlwaysAllow']).authorizationModes, [
      'AlwaysDeny',
      'AlwaysAllow',
    ]);
    assert.deepEqual(
      config(['--authorization-mode=AlwaysDeny', '--authorization-mode', 'AlwaysAllow']).authorizationModes,
      ['AlwaysDeny', 'AlwaysAllow'],
    );
    assert.deepEqual(
      config(['--etcd-servers=https://10.0.0.1:2379,http://10.0.0.2:2379', '--etcd-servers=https://e3:2379'])
        .etcdServers,
      ['https://10.0.0.1:2379', 'http://10.0.0.2:2379', 'https://e3:2379'],
    );
    assert.deepEqual(config(['--etcd-servers=']).etcdServers, []);
  });

  it('parses IP flags', () => {
    assert.equal(config(['--bind-address=0.0.0.0']).bindAddress, '0.0.0.0');
    assert.equal(config(['--bind-address', '::']).bindAddress, '::');
    assert.equal(config(['--bind-address=fd00::1']).bindAddress, 'fd00::1');
    assert.equal(config(['--advertise-address=10.1.2.3']).advertiseAddress, '10.1.2.3');
    assert.equal(config([]).advertiseAddress, undefined);
  });

  it('parses log levels from -v (klog verbosity) and --log-level, the last one winning', () => {
    const level = (...argv: string[]) => config(argv).logLevel;
    assert.equal(level('-v=4'), 'debug');
    assert.equal(level('-v', '4'), 'debug');
    assert.equal(level('-v4'), 'debug');
    assert.equal(level('--v=4'), 'debug');
    assert.equal(level('--v', '5'), 'debug');
    assert.equal(level('-v=0'), 'info');
    assert.equal(level('-v=2'), 'info');
    assert.equal(level('-v=3'), 'debug');
    assert.equal(level('-v=6'), 'trace');
    assert.equal(level('-v=10'), 'trace');
    assert.equal(level('--log-level=warn'), 'warn');
    assert.equal(level('--log-level', 'silent'), 'silent');
    assert.equal(level('--log-level=error', '-v=4'), 'debug');
    assert.equal(level('-v=4', '--log-level=error'), 'error');
  });

  it('parses feature gates, repeated flags merging', () => {
    const gates = config(['--feature-gates=WatchList=false', '--feature-gates', 'CBORServingAndStorage=true']).featureGates;
    assert.equal(gates.enabled('WatchList'), false);
    assert.equal(gates.enabled('CBORServingAndStorage'), true);
    assert.equal(gates.enabled('ConsistentListFromCache'), true);
  });

  it('takes ORCH_APISERVER_* environment variables, under the command line', () => {
    const env = {
      ORCH_APISERVER_SECURE_PORT: '7443',
      ORCH_APISERVER_ANONYMOUS_AUTH: 'false',
      ORCH_APISERVER_ETCD_SERVERS: 'http://env:2379',
      ORCH_APISERVER_V: '6',
      ORCH_APISERVER_EVENT_TTL: '', // empty: ignored
    };
    const fromEnv = config([], env);
    assert.equal(fromEnv.securePort, 7443);
    assert.equal(fromEnv.anonymousAuth, false);
    assert.deepEqual(fromEnv.etcdServers, ['http://env:2379']);
    assert.equal(fromEnv.logLevel, 'trace');
    assert.equal(fromEnv.eventTtlMs, 3_600_000);

    const overridden = config(['--secure-port=8443', '--etcd-servers=http://cli:2379'], env);
    assert.equal(overridden.securePort, 8443);
    assert.deepEqual(overridden.etcdServers, ['http://cli:2379']); // replaced, not appended to

    rejects(
      [],
      'invalid value "abc" in ORCH_APISERVER_SECURE_PORT for "--secure-port" flag: strconv.ParseInt: parsing "abc": invalid syntax',
      { ORCH_APISERVER_SECURE_PORT: 'abc' },
    );
  });

  it('returns help for -h and --help, wherever they are', () => {
    for (const argv of [['-h'], ['--help'], ['--secure-port=1', '-h'], ['stray', '--help']]) {
      const result = parseFlags(argv, {});
      assert.ok('help' in result, argv.join(' '));
      assert.equal(result.help, helpText());
    }
    // Flag syntax errors before the help flag still win, as in pflag.
    rejects(['--nope', '--help'], 'unknown flag: --nope');
  });

  it('lists every flag in help, sorted, with type and default', () => {
    const help = helpText();
    const names = [...help.matchAll(/^ {2}(?:-\w, | {4})--([\w-]+)/gm)].map((match) => match[1]);
    assert.deepEqual(names, [...names].sort());
    assert.equal(names.length, 104); // 45, kube-apiserver's 30 audit flags and 29 authentication flags
    assert.match(help, /^ {6}--secure-port int +The port .* \(default 6443\)$/m);
    assert.match(help, /^ {6}--bind-address ip +.*loopback.* \(default 127\.0\.0\.1\)$/m);
    assert.match(help, /^ {6}--anonymous-auth +Enables .* \(default true\)$/m);
    assert.match(help, /^ {6}--enable-garbage-collector +Enables the generic garbage collector.* \(default true\)$/m);
    assert.match(help, /^ {6}--request-timeout duration +.* \(default 1m0s\)$/m);
    assert.match(help, /^ {6}--authorization-mode strings +.* \(default \[AlwaysAllow\]\)$/m);
    assert.match(help, /^ {6}--data-dir string +.* \(default "\.\/data"\)$/m);
    assert.match(help, /^ {2}-v, --v level +number for the log level verbosity/m);
    assert.match(help, /^ {2}-h, --help +help for orch-apiserver$/m);
    assert.match(help, /^ +WatchList=true\|false \(BETA - default=true\)$/m);
    // Zero defaults are left out, as pflag does.
    assert.match(help, /^ {6}--shutdown-delay-duration duration +[^(]*$/m);
    assert.match(help, /^ {6}--audit-webhook-batch-throttle-qps float32 +Maximum average number of batches per second\. Only used in batch mode\. \(default 10\)$/m);
  });

  describe('errors', () => {
    it('words syntax errors as pflag', () => {
      rejects(['--foo'], 'unknown flag: --foo');
      rejects(['--foo=1'], 'unknown flag: --foo');
      rejects(['-x'], "unknown shorthand flag: 'x' in -x");
      rejects(['---x'], 'bad flag syntax: ---x');
      rejects(['--=x'], 'bad flag syntax: --=x');
      rejects(['--secure-port'], 'flag needs an argument: --secure-port');
      rejects(['-v'], "flag needs an argument: 'v' in -v");
      rejects(['foo'], 'unexpected argument "foo"');
      rejects(['--', '--secure-port=1'], 'unexpected argument "--secure-port=1"');
    });

    it('words value errors as pflag', () => {
      rejects(
        ['--secure-port=abc'],
        'invalid argument "abc" for "--secure-port" flag: strconv.ParseInt: parsing "abc": invalid syntax',
      );
      rejects(
        ['--secure-port', '99999999999999999999'],
        'invalid argument "99999999999999999999" for "--secure-port" flag: strconv.ParseInt: parsing "99999999999999999999": value out of range',
      );
      rejects(
        ['--request-timeout=5x'],
        'invalid argument "5x" for "--request-timeout" flag: time: unknown unit "x" in duration "5x"',
      );
      rejects(
        ['--event-ttl', '5'],
        'invalid argument "5" for "--event-ttl" flag: time: missing unit in duration "5"',
      );
      rejects(
        ['--anonymous-auth=maybe'],
        'invalid argument "maybe" for "--anonymous-auth" flag: strconv.ParseBool: parsing "maybe": invalid syntax',
      );
      rejects(
        ['--bind-address=localhost'],
        'invalid argument "localhost" for "--bind-address" flag: failed to parse IP: "localhost"',
      );
      rejects(
        ['-v=loud'],
        'invalid argument "loud" for "-v, --v" flag: want a klog verbosity (0, 1, 2, ...) or one of trace, debug, info, warn, error, fatal, silent',
      );
      rejects(
        ['--feature-gates=Foo=true'],
        'invalid argument "Foo=true" for "--feature-gates" flag: unrecognized feature gate: Foo',
      );
      rejects(
        ['--feature-gates=Foo=bar'],
        'invalid argument "Foo=bar" for "--feature-gates" flag: invalid value of Foo=bar, err: strconv.ParseBool: parsing "bar": invalid syntax',
      );
      rejects(['--feature-gates=Foo'], 'invalid argument "Foo" for "--feature-gates" flag: missing bool value for Foo');
      rejects(['--runtime-config=apiall=false'], 'invalid argument "apiall=false" for "--runtime-config" flag: runtime-config invalid key apiall');
      rejects(['--runtime-config=api/all=false'], 'invalid argument "api/all=false" for "--runtime-config" flag: invalid key with only api/all=false');
      rejects(['--runtime-config=events.orch.io/v1=maybe'], 'invalid argument "events.orch.io/v1=maybe" for "--runtime-config" flag: invalid value of events.orch.io/v1: maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax');
    });

    it('parses --runtime-config as kube-apiserver does: comma-separated, a key alone meaning true, repeats merging', () => {
      assert.deepEqual(config([]).runtimeConfig, {});
      assert.deepEqual(config(['--runtime-config=api/all=false,v1,events.orch.io/v1=true', '--runtime-config', 'coordination.orch.io/v1/leases=false']).runtimeConfig,
        { 'api/all': 'false', v1: '', 'events.orch.io/v1': 'true', 'coordination.orch.io/v1/leases': 'false' });
    });

    it('validates the port range', () => {
      const message = (port: number) =>
        `--secure-port ${port} must be between 1 and 65535, inclusive. It cannot be turned off with 0`;
      rejects(['--secure-port=0'], message(0));
      rejects(['--secure-port=65536'], message(65536));
      rejects(['--secure-port=-1'], message(-1));
      assert.equal(config(['--secure-port=1']).securePort, 1);
      assert.equal(config(['--secure-port=65535']).securePort, 65535);
    });

    it('accepts a --goaway-chance from 0 to 0.02 only', () => {
      rejects(['--goaway-chance=0.03'], '--goaway-chance can not be less than 0 or greater than 0.02');
      rejects(['--goaway-chance=-0.01'], '--goaway-chance can not be less than 0 or greater than 0.02');
      assert.equal(config(['--goaway-chance=0.02']).goawayChance, 0.02);
      assert.equal(config(['--enable-priority-and-fairness=false']).enablePriorityAndFairness, false);
    });

    it('rejects negative durations and counts', () => {
      rejects(['--request-timeout=-1s'], '--request-timeout can not be negative value');
      rejects(['--shutdown-delay-duration=-5s'], '--shutdown-delay-duration can not be negative value');
      rejects(['--watch-history=-1m'], '--watch-history can not be negative value');
      rejects(['--max-requests-inflight=-1'], '--max-requests-inflight can not be negative value');
      rejects(['--min-request-timeout=-1'], '--min-request-timeout can not be negative value');
      rejects(['--max-unsent-bytes-per-connection=-1'], '--max-unsent-bytes-per-connection can not be negative value');
    });

    it('validates authorization modes', () => {
      rejects(['--authorization-mode=Webhook'], "authorization-mode Webhook's authorization config file not passed");
      rejects(['--authorization-webhook-config-file=/w.kubeconfig'], 'cannot specify --authorization-webhook-config-file without mode Webhook');
      rejects(['--authorization-mode=ABAC'], "authorization-mode ABAC's authorization policy file not passed");
      rejects(['--show-hidden-metrics-for-version=1.30'], "--show-hidden-metrics-for-version must be omitted or have the value '1.31'. Only the previous minor version is allowed");
      assert.equal(config(['--show-hidden-metrics-for-version=1.31']).showHiddenMetricsForVersion, '1.31');
      rejects(['--authorization-webhook-version=v2'], 'unsupported authorization webhook version "v2", supported versions are "v1", "v1beta1"');
      rejects(['--authorization-config=/a.yaml', '--authorization-mode=RBAC'],
        '--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined');
      rejects(['--authorization-config=/a.yaml', '--authorization-webhook-cache-authorized-ttl=1m'],
        '--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined');
      rejects(['--authorization-config=/a.yaml', '--feature-gates=StructuredAuthorizationConfiguration=false'],
        '--authorization-config cannot be used without enabling StructuredAuthorizationConfiguration feature flag');
      assert.deepEqual(config(['--authorization-mode=Node,Webhook,RBAC', '--authorization-webhook-config-file=w.kubeconfig']).authorizationModes, ['Node', 'Webhook', 'RBAC']);
      rejects(['--authorization-mode=Foo'], 'authorization-mode "Foo" is not a valid mode');
      rejects(['--authorization-mode='], 'at least one authorization-mode must be passed');
      rejects(
        ['--authorization-mode=AlwaysAllow,AlwaysDeny,AlwaysAllow'],
        'authorization-mode ["AlwaysAllow" "AlwaysDeny" "AlwaysAllow"] has mode specified more than once',
      );
    });

    it('validates etcd servers and the data dir', () => {
      rejects(['--etcd-servers=10.0.0.1:2379'], '--etcd-servers "10.0.0.1:2379" is not an http or https URL');
      rejects(['--etcd-servers=http://a:2379,'], '--etcd-servers "" is not an http or https URL');
      rejects(['--data-dir='], '--data-dir must not be empty');
    });

    it('requires TLS files in pairs', () => {
      rejects(['--tls-cert-file=a.crt'], '--tls-cert-file and --tls-private-key-file must be specified together');
      rejects(['--tls-private-key-file=a.key'], '--tls-cert-file and --tls-private-key-file must be specified together');
      rejects(['--etcd-keyfile=e.key'], '--etcd-certfile and --etcd-keyfile must be specified together');
    });
  });
});

describe('authentication flags', () => {
  it('repeats string arrays without splitting on commas, as pflag\'s StringArray', () => {
    const c = config(['--service-account-issuer=https://a.test', '--service-account-issuer', 'urn:x,y', '--service-account-key-file=k1.pem']);
    assert.deepEqual(c.serviceAccountIssuers, ['https://a.test', 'urn:x,y']);
    assert.deepEqual(c.serviceAccountKeyFiles, ['k1.pem']);
    assert.match(helpText(), /^ {6}--service-account-issuer stringArray +/m);
  });

  it('reads required claims as repeated key=value pairs, a comma being part of a value', () => {
    assert.deepEqual(config(['--oidc-required-claim', 'hd=example.com,x', '--oidc-required-claim= aud = orch ']).oidcRequiredClaims, { hd: 'example.com,x', aud: 'orch' });
    rejects(['--oidc-required-claim=hd'], 'invalid argument "hd" for "--oidc-required-claim" flag: hd must be formatted as key=value');
  });

  it('records which flags were given, on the command line or in the environment', () => {
    assert.deepEqual(config(['--anonymous-auth=false', '--oidc-username-claim=sub'], { ORCH_APISERVER_TOKEN_AUTH_FILE: 't.csv' }).explicitFlags,
      ['anonymous-auth', 'oidc-username-claim', 'token-auth-file']);
  });

  it('validates as kube-apiserver does', () => {
    rejects(['--oidc-signing-algs=RS256,HS256'], 'oidc: unsupported signing alg: "HS256"');
    rejects(['--authentication-token-webhook-version=v2'], 'unsupported authentication webhook version "v2", supported versions are "v1", "v1beta1"');
    rejects(['--service-account-max-token-expiration=30m'], 'the service-account-max-token-expiration must be between 1 hour and 2^32 seconds');
    rejects(['--service-account-jwks-uri=http://x.test/jwks'], 'service-account-jwks-uri requires https scheme, parsed as: http://x.test/jwks');
    rejects(['--service-account-issuer=a', '--service-account-issuer=a'], 'service-account-issuer "a" is already specified');
    rejects(['--service-account-issuer='], 'service-account-issuer should not be an empty string');
    assert.equal(config(['--service-account-max-token-expiration=48h']).serviceAccountMaxTokenExpirationMs, 48 * 3_600_000);
  });
});
