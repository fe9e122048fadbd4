/**
 * The composition root: an assembly of named parts — PKI, storage, the API registry and its
 * stores, admission, watch fan-out, the request pipeline, the front door, controllers — started
 * in order and torn down in reverse on shutdown.
 */
import { readFileSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { AdmissionChain } from './admission/admission.js';
import { setUpAuditing } from './audit/setup.js';
import { NamespaceLifecycle } from './admission/plugins/namespace-lifecycle.js';
import { readAdmissionConfig } from './admission/admission-config.js';
import { EventRateLimit, parseEventRateLimitConfig } from './admission/plugins/event-rate-limit.js';
import { ensurePki, writeKubeconfig } from './auth/pki.js';
import { namespaceFinalizer, namespaceKind } from './api/core/namespace.js';
import { serviceAccountKind } from './api/core/service-account.js';
import { withKubernetesAliases } from './api/registry/alias.js';
import { ApiRegistry } from './api/registry/api-registry.js';
import { builtinKinds } from './api/registry/builtin.js';
import { Services } from './api/services.js';
import { readModelLookup } from './auth/authn/service-account/lookup.js';
import type { ServerConfig } from './config/flags.js';
import { offeredEncodings } from './codec/media-types.js';
import { GarbageCollector } from './controllers/garbage-collector/garbage-collector.js';
import { NamespaceController, controllerManager } from './controllers/namespace-controller.js';
import { ServiceAccountController } from './controllers/service-account-controller.js';
import { TokenSecretController } from './controllers/token-secret-controller.js';
import { secretKind } from './api/core/secret.js';
import { MaxInflightLimiter } from './flowcontrol/max-inflight.js';
import { PriorityAndFairness } from './flowcontrol/priority-and-fairness.js';
import { ApfConfigurationController } from './controllers/apf-configuration-controller.js';
import { flowSchemaKind } from './api/flowcontrol/flow-schema.js';
import { priorityLevelConfigurationKind } from './api/flowcontrol/priority-level-configuration.js';
import { storageResourceOf } from './api/kind.js';
import { ApiServerMetrics } from './metrics/apiserver-metrics.js';
import { MetricsEndpoint } from './http/metrics-endpoint.js';
import { HealthEndpoint } from './http/health.js';
import { NonResourceHandler } from './http/non-resource.js';
import { ResourceHandler } from './http/resource-handler.js';
import { OutputBudget } from './http/output-budget.js';
import { ResourceStores } from './registry/resource-stores.js';
import { dispatcher } from './server/dispatch.js';
import { FrontDoor } from './server/front-door.js';
import { buildHandlerChain } from './server/handler-chain.js';
import { healthChecks } from './server/health-checks.js';
import { authentication, authorization } from './server/security.js';
import { SnapshotCache } from './store/snapshot-cache.js';
import { WriterClient } from './store/writer-client.js';
import { StatusError } from './status/status-error.js';
import { ChangeLog } from './watch/change-log.js';
import { EncoderPool } from './watch/encoder-pool.js';
import { WatchHub } from './watch/watch-hub.js';

/** Namespaces that exist from the first start (kube-apiserver's bootstrap controller). */
const systemNamespaces = ['default', 'orch-system', 'orch-public', 'orch-node-lease'];
/** ...of which these can never be deleted (NamespaceLifecycle's immortal namespaces) */
const immortalNamespaces = new Set(['default', 'orch-system', 'orch-public']);
const watchBufferBytes = 8 * 1024 * 1024;
const bookmarkIntervalMs = 60_000;
const encoderThreads = 2;

export interface RunningServer {
  port: number;
  url: string;
  kubeconfigPath: string;
  /** the runtime API registry: what is added or removed here is served, or not, at once */
  registry: ApiRegistry;
  /** SIGTERM behaviour: stop accepting, end watches, let writes commit, close storage */
  shutdown(): Promise<void>;
}

function hostForUrl(bind: string): string {
  if (bind === '0.0.0.0' || bind === '::' || bind === '') return '127.0.0.1';
  return isIPv6(bind) ? `[${bind}]` : bind;
}

function startStorage(config: ServerConfig): Promise<WriterClient> {
  const onEtcd = config.etcdServers.length > 0;
  return WriterClient.start(new URL('../workers/writer.js', import.meta.url), onEtcd
    ? {
      engine: 'etcd',
      historyMs: config.watchHistoryMs,
      etcd: {
        servers: config.etcdServers, prefix: config.etcdPrefix, caFile: config.etcdCaFile, certFile: config.etcdCertFile,
        keyFile: config.etcdKeyFile, compactionIntervalMs: config.etcdCompactionIntervalMs,
      },
    }
    : { engine: 'sqlite', dataDir: config.dataDir, historyMs: config.watchHistoryMs });
}

export async function startApiServer(config: ServerConfig, log: Logger): Promise<RunningServer> {
  const started = Date.now();
  let ready = false;
  let shuttingDown = false;
  const postStartHooks = new Map<string, boolean>([
    ['start-apiserver-admission-initializer', false],
    ['generic-apiserver-start-informers', false],
    ['bootstrap-controller', false],
    ['start-service-account-controller', false],
    ['start-namespace-controller', false],
  ]);

  // auditing first: a malformed policy or an unusable backend refuses start before anything else
  const auditor = setUpAuditing(config, log);
  // admission plugins' configuration, likewise checked before anything starts
  const admissionConfigs = readAdmissionConfig(config.admissionControlConfigFile);
  const eventRateLimits = config.enableAdmissionPlugins.includes('EventRateLimit')
    ? parseEventRateLimitConfig(admissionConfigs.get('EventRateLimit')) : undefined;

  // PKI: the CA, serving and admin certificates (generated on first start)
  const pki = await ensurePki(join(config.dataDir, 'pki'), { ipAddresses: config.advertiseAddress ? [config.advertiseAddress] : [] });
  const tls = {
    key: config.tlsPrivateKeyFile ? readFileSync(config.tlsPrivateKeyFile, 'utf8') : pki.servingKeyPem,
    cert: config.tlsCertFile ? readFileSync(config.tlsCertFile, 'utf8') : pki.servingCertPem,
    ca: config.clientCaFile ? readFileSync(config.clientCaFile, 'utf8') : pki.caCertPem,
  };

  // storage (the one writer worker and the read model it feeds) and the encoder pool: both load
  // their code now, never lazily, so a build rewriting dist/ later cannot reach them
  const [writer, encoders] = await Promise.all([
    startStorage(config),
    EncoderPool.start(new URL('../workers/encoder.js', import.meta.url), encoderThreads),
  ]);
  writer.onFatal((message) => {
    // the read model can no longer follow storage; a restart reloads it
    log.fatal({ reason: message }, 'storage failed; exiting');
    log.flush();
    process.exit(1);
  });
  const readModel = writer.readModel;
  postStartHooks.set('generic-apiserver-start-informers', true);

  // the API: the runtime registry, admission, and the generic store of every served kind
  const kinds = new ApiRegistry(config.kubernetesGroupAliases ? withKubernetesAliases(builtinKinds) : builtinKinds);
  const admission = new AdmissionChain([
    new NamespaceLifecycle(readModel, immortalNamespaces),
    ...(eventRateLimits ? [new EventRateLimit(eventRateLimits)] : []),
  ]);
  const stores = new ResourceStores(kinds, { readModel, writer, snapshots: new SnapshotCache(config.continueTtlMs), admission, config });
  postStartHooks.set('start-apiserver-admission-initializer', true);

  // what clients that stop reading may hold: per connection and in all
  const output = new OutputBudget({
    perConnection: config.maxUnsentBytesPerConnection,
    total: config.maxUnsentBytes,
    onCut: ({ reason, unsentBytes }) => log.warn({ reason, unsentBytes }, 'cut a response whose client is not reading'),
  });

  // watch fan-out; a watch stream is bounded by its connection's budget when that is the smaller
  encoders.useKinds((table) => kinds.storageKind(table));
  const changeLog = new ChangeLog(readModel.revision, config.watchHistoryMs);
  const maxWatchBacklog = config.maxUnsentBytesPerConnection > 0 ? Math.min(watchBufferBytes, config.maxUnsentBytesPerConnection) : watchBufferBytes;
  const hub = new WatchHub(readModel, changeLog, encoders, { maxBufferedBytes: maxWatchBacklog, bookmarkIntervalMs });
  const shutdownListeners = new Set<() => void>();

  // the request pipeline and what it ends in
  const checks = healthChecks({
    storage: () => writer.health, storageAlive: () => writer.alive, onEtcd: config.etcdServers.length > 0,
    ready: () => ready, shuttingDown: () => shuttingDown, postStartHooks,
  });
  const onHealthFailure = (check: string, reason: string) => log.warn({ check, reason }, 'health check failed');
  let address = '';
  const authorizer = authorization(config);
  const services = new Services();
  const authn = await authentication(config, {
    log, lookup: readModelLookup(readModel), pkiDir: join(config.dataDir, 'pki'), clientCaPem: tls.ca,
    externalAddress: `${hostForUrl(config.advertiseAddress ?? config.bindAddress)}:${config.securePort}`, services,
  });
  // flow control: priority and fairness, or the plain max-in-flight limiter when it is off
  const apf = config.enablePriorityAndFairness ? new PriorityAndFairness(readModel, {
    serverConcurrencyLimit: config.maxRequestsInflight + config.maxMutatingRequestsInflight,
    requestWaitLimitMs: config.requestTimeoutMs / 4,
    objectCount: (info) => {
      const kind = kinds.lookup(info.apiGroup, info.apiVersion, info.resource);
      return kind ? readModel.table(storageResourceOf(kind)).size : 0;
    },
  }) : undefined;
  // /metrics: request metrics from the pipeline, the rest read from where the state lives
  const metrics = new ApiServerMetrics();
  metrics.useSources({
    storageObjects: function* storedObjects() {
      for (const kind of kinds.storageKinds()) {
        const resource = storageResourceOf(kind);
        yield [resource, readModel.table(resource).size] as [string, number];
      }
    },
    flowControl: apf,
    audit: auditor?.metrics,
    watchEvents: function* watchEvents() {
      for (const [table, byVersion] of hub.eventsSentBy) {
        for (const [apiVersion, { sent }] of byVersion) {
          const slash = apiVersion.indexOf('/');
          yield [slash < 0 ? '' : apiVersion.slice(0, slash), apiVersion.slice(slash + 1), table.split('.')[0], sent] as [string, string, string, number];
        }
      }
    },
  });
  const pipeline = buildHandlerChain({
    log,
    maxRequestBodyBytes: config.maxRequestBodyBytes,
    authenticator: authn.authenticator,
    authorizer,
    flowControl: apf ?? new MaxInflightLimiter({ readOnly: config.maxRequestsInflight, mutating: config.maxMutatingRequestsInflight }),
    requestTimeoutMs: config.requestTimeoutMs,
    auditor,
    metrics: { metrics, served: (info) => kinds.lookup(info.apiGroup, info.apiVersion, info.resource) !== undefined },
    goawayChance: config.goawayChance,
  }, dispatcher({
    kinds,
    resources: new ResourceHandler({
      stores, hub, readModel,
      minRequestTimeoutSeconds: config.minRequestTimeoutSeconds,
      watchListEnabled: config.featureGates.enabled('WatchList'),
      maxRequestBodyBytes: config.maxRequestBodyBytes,
      services,
      onShutdown: (listener) => { shutdownListeners.add(listener); return () => shutdownListeners.delete(listener); },
      output,
    }),
    nonResource: new NonResourceHandler(kinds, [
      new HealthEndpoint('healthz', checks.healthz, onHealthFailure),
      new HealthEndpoint('livez', checks.livez, onHealthFailure),
      new HealthEndpoint('readyz', checks.readyz, onHealthFailure),
      ...(authn.discovery ? [authn.discovery] : []),
    ], () => address, [new MetricsEndpoint({ exposition: () => metrics.exposition([() => writer.metrics()]) })]),
    onWebSocketError: (err) => log.error({ err }, 'websocket watch failed'),
  }));

  // the front door
  const frontDoor = new FrontDoor({
    tls,
    exchange: {
      offered: offeredEncodings((gate) => config.featureGates.enabled(gate)),
      // kube-apiserver's threshold: smaller bodies are not worth the CPU
      compressFrom: config.featureGates.enabled('APIResponseCompression') ? 128 * 1024 : undefined,
      output,
      requestTimeoutMs: config.requestTimeoutMs,
    },
  }, pipeline);
  frontDoor.server.on('tlsClientError', () => metrics.tlsHandshakeError());
  const port = await frontDoor.listen(config.securePort, config.bindAddress);
  address = `${config.advertiseAddress ?? hostForUrl(config.bindAddress)}:${port}`;
  const url = `https://${hostForUrl(config.bindAddress)}:${port}`;
  const kubeconfigPath = join(config.dataDir, 'admin.kubeconfig');
  writeKubeconfig(kubeconfigPath, { server: url, caCertPem: pki.caCertPem, clientCertPem: pki.adminCertPem, clientKeyPem: pki.adminKeyPem });

  // bootstrap: the system namespaces
  const bootstrapContext = () => ({ now: Date.now(), dryRun: false, manager: controllerManager });
  for (const name of systemNamespaces) {
    if (readModel.get('namespaces', name)) continue;
    try {
      await stores.of(namespaceKind).create(undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name }, spec: { finalizers: [namespaceFinalizer] } }, bootstrapContext());
    } catch (err) {
      if (!(err instanceof StatusError && err.reason === 'AlreadyExists')) throw err;
    }
  }
  postStartHooks.set('bootstrap-controller', true);

  // controllers
  const onControllerError = (err: unknown) => log.error({ err }, 'controller error');
  const controllers = [
    new ServiceAccountController(readModel, stores.of(serviceAccountKind), onControllerError),
    new NamespaceController(readModel, stores.of(namespaceKind), () => stores.namespaced(), onControllerError),
    ...(config.enableGarbageCollector ? [new GarbageCollector({ readModel, kinds, storeOf: (k) => stores.of(k), onError: onControllerError })] : []),
    ...(apf ? [new ApfConfigurationController(readModel, {
      flowSchemas: stores.of(flowSchemaKind), priorityLevels: stores.of(priorityLevelConfigurationKind),
    }, onControllerError)] : []),
    ...(authn.tokenGenerator ? [new TokenSecretController(readModel, stores.of(secretKind), authn.tokenGenerator, pki.caCertPem, onControllerError)] : []),
  ];
  postStartHooks.set('start-service-account-controller', true);
  postStartHooks.set('start-namespace-controller', true);
  ready = true;
  log.info({ url, kubeconfig: kubeconfigPath, revision: readModel.revision, startupMs: Date.now() - started }, 'orch-apiserver is ready');

  let stopping: Promise<void> | undefined;
  return {
    port, url, kubeconfigPath, registry: kinds,
    shutdown() {
      stopping ??= (async () => {
        shuttingDown = true;
        log.info('shutting down');
        if (config.shutdownDelayMs > 0) await new Promise((r) => setTimeout(r, config.shutdownDelayMs));
        for (const c of controllers) c.stop();
        apf?.stop();
        metrics.stop();
        authn.stop();
        for (const listener of [...shutdownListeners]) listener();
        await hub.closeAll();
        changeLog.close();
        await frontDoor.close(config.requestTimeoutMs);
        await auditor?.shutdown();
        await encoders.close();
        await writer.close();
        log.info('storage closed');
      })();
      return stopping;
    },
  };
}
