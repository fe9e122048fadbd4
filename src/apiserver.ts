/**
 * The composition root: builds every layer from the configuration, starts storage, the front
 * door and the controllers, and tears them down in order on shutdown.
 */
import { readFileSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { Authenticator } from './auth/authenticator.js';
import { Authorizer } from './auth/authorizer.js';
import { ensurePki, writeKubeconfig } from './auth/pki.js';
import { namespaceFinalizer, namespaceKind } from './api/core/namespace.js';
import { serviceAccountKind } from './api/core/service-account.js';
import type { KindDeclaration } from './api/kind.js';
import { builtinKinds, KindRegistry } from './api/registry.js';
import type { ServerConfig } from './config/flags.js';
import { NamespaceController, namespacedKinds, controllerManager } from './controllers/namespace-controller.js';
import { ServiceAccountController } from './controllers/service-account-controller.js';
import { HealthEndpoint, type HealthCheck } from './http/health.js';
import { NonResourceHandler } from './http/non-resource.js';
import { ResourceHandler } from './http/resource-handler.js';
import { FrontDoor } from './http/server.js';
import { OutputBudget } from './http/output-budget.js';
import { ObjectStore } from './registry/object-store.js';
import { SnapshotCache } from './store/snapshot-cache.js';
import { WriterClient } from './store/writer-client.js';
import { StatusError } from './status/status-error.js';
import { ChangeLog } from './watch/change-log.js';
import { EncoderPool } from './watch/encoder-pool.js';
import { offeredEncodings } from './codec/media-types.js';
import { WatchHub } from './watch/watch-hub.js';

/** Namespaces that exist from the first start (kube-apiserver's bootstrap controller). */
const systemNamespaces = ['default', 'orch-system', 'orch-public', 'orch-node-lease'];
const watchBufferBytes = 8 * 1024 * 1024;
const bookmarkIntervalMs = 60_000;

export interface RunningServer {
  port: number;
  url: string;
  kubeconfigPath: string;
  /** SIGTERM behaviour: stop accepting, end watches, let writes commit, close storage */
  shutdown(): Promise<void>;
}

function hostForUrl(bind: string): string {
  if (bind === '0.0.0.0' || bind === '::' || bind === '') return '127.0.0.1';
  return isIPv6(bind) ? `[${bind}]` : bind;
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

  const pki = await ensurePki(join(config.dataDir, 'pki'), { ipAddresses: config.advertiseAddress ? [config.advertiseAddress] : [] });
  const tls = {
    key: config.tlsPrivateKeyFile ? readFileSync(config.tlsPrivateKeyFile, 'utf8') : pki.servingKeyPem,
    cert: config.tlsCertFile ? readFileSync(config.tlsCertFile, 'utf8') : pki.servingCertPem,
    ca: config.clientCaFile ? readFileSync(config.clientCaFile, 'utf8') : pki.caCertPem,
  };

  const onEtcd = config.etcdServers.length > 0;
  const writer = await WriterClient.start(new URL('../workers/writer.js', import.meta.url), onEtcd
    ? {
      engine: 'etcd',
      historyMs: config.watchHistoryMs,
      etcd: {
        servers: config.etcdServers, prefix: config.etcdPrefix, caFile: config.etcdCaFile, certFile: config.etcdCertFile,
        keyFile: config.etcdKeyFile, compactionIntervalMs: config.etcdCompactionIntervalMs,
      },
    }
    : { engine: 'sqlite', dataDir: config.dataDir, historyMs: config.watchHistoryMs });
  writer.onFatal((message) => {
    // the read model can no longer follow storage; a restart reloads it
    log.fatal({ reason: message }, 'storage failed; exiting');
    log.flush();
    process.exit(1);
  });
  const readModel = writer.readModel;
  postStartHooks.set('generic-apiserver-start-informers', true);

  const kinds = new KindRegistry(builtinKinds);
  const snapshots = new SnapshotCache(config.continueTtlMs);
  const stores = new Map<KindDeclaration, ObjectStore>();
  for (const kind of kinds.kinds) stores.set(kind, new ObjectStore(kind, { readModel, writer, snapshots, config }));
  const store = (k: KindDeclaration) => stores.get(k) as ObjectStore;

  const encoders = new EncoderPool(new URL('../workers/encoder.js', import.meta.url), 2);
  const output = new OutputBudget({
    perConnection: config.maxUnsentBytesPerConnection,
    total: config.maxUnsentBytes,
    onCut: ({ reason, unsentBytes }) => log.warn({ reason, unsentBytes }, 'cut a response whose client is not reading'),
  });
  // a watch stream is bounded by its connection's budget when that is the smaller
  const maxWatchBacklog = config.maxUnsentBytesPerConnection > 0 ? Math.min(watchBufferBytes, config.maxUnsentBytesPerConnection) : watchBufferBytes;
  const hub = new WatchHub(readModel, new ChangeLog(readModel.revision, config.watchHistoryMs), encoders, { maxBufferedBytes: maxWatchBacklog, bookmarkIntervalMs });
  const shutdownListeners = new Set<() => void>();

  const storageCheck: HealthCheck = { name: 'etcd', check: () => (writer.health.ok ? undefined : writer.health.message ?? 'storage unavailable') };
  // Liveness asks whether restarting this process would help. With etcd, a cluster without
  // quorum is not cured by restarting its clients: /livez stays up while /readyz fails.
  const storageLiveness: HealthCheck = onEtcd
    ? { name: 'etcd', check: () => (writer.alive ? undefined : writer.health.message ?? 'storage writer stopped') }
    : storageCheck;
  const basics: HealthCheck[] = [
    { name: 'ping', check: () => undefined },
    { name: 'log', check: () => undefined },
  ];
  const hooks: HealthCheck[] = [...postStartHooks.keys()].map((hook) => ({
    name: `poststarthook/${hook}`,
    check: () => (postStartHooks.get(hook) ? undefined : 'not finished'),
  }));
  const healthz: HealthCheck[] = [...basics, storageCheck, ...hooks];
  const livez: HealthCheck[] = [...basics, storageLiveness, ...hooks];
  const readyz: HealthCheck[] = [
    ...basics,
    storageCheck,
    { name: 'etcd-readiness', check: storageCheck.check },
    { name: 'informer-sync', check: () => (ready ? undefined : 'read model not loaded') },
    ...hooks,
    { name: 'shutdown', check: () => (shuttingDown ? 'process is shutting down' : undefined) },
  ];
  const onHealthFailure = (check: string, reason: string) => log.warn({ check, reason }, 'health check failed');

  let address = '';
  const frontDoor = new FrontDoor({
    tls,
    exchange: {
      offered: offeredEncodings((gate) => config.featureGates.enabled(gate)),
      // kube-apiserver's threshold: smaller bodies are not worth the CPU
      compressFrom: config.featureGates.enabled('APIResponseCompression') ? 128 * 1024 : undefined,
      output,
      requestTimeoutMs: config.requestTimeoutMs,
    },
    requestTimeoutMs: config.requestTimeoutMs,
    maxRequestsInflight: config.maxRequestsInflight,
    maxMutatingRequestsInflight: config.maxMutatingRequestsInflight,
  }, {
    kinds,
    authenticator: new Authenticator({ anonymous: config.anonymousAuth && !config.authorizationModes.includes('AlwaysAllow') }),
    authorizer: new Authorizer(config.authorizationModes),
    resources: new ResourceHandler({
      stores, hub, readModel,
      minRequestTimeoutSeconds: config.minRequestTimeoutSeconds,
      watchListEnabled: config.featureGates.enabled('WatchList'),
      maxRequestBodyBytes: config.maxRequestBodyBytes,
      onShutdown: (listener) => { shutdownListeners.add(listener); return () => shutdownListeners.delete(listener); },
      output,
    }),
    nonResource: new NonResourceHandler(kinds, [
      new HealthEndpoint('healthz', healthz, onHealthFailure),
      new HealthEndpoint('livez', livez, onHealthFailure),
      new HealthEndpoint('readyz', readyz, onHealthFailure),
    ], () => address),
    log,
  });
  if (config.anonymousAuth && config.authorizationModes.includes('AlwaysAllow')) {
    log.warn('AnonymousAuth is not allowed with the AlwaysAllow authorizer. Resetting AnonymousAuth to false. You should use a different authorizer');
  }
  postStartHooks.set('start-apiserver-admission-initializer', true);

  const port = await frontDoor.listen(config.securePort, config.bindAddress);
  address = `${config.advertiseAddress ?? hostForUrl(config.bindAddress)}:${port}`;
  const url = `https://${hostForUrl(config.bindAddress)}:${port}`;
  const kubeconfigPath = join(config.dataDir, 'admin.kubeconfig');
  writeKubeconfig(kubeconfigPath, { server: url, caCertPem: pki.caCertPem, clientCertPem: pki.adminCertPem, clientKeyPem: pki.adminKeyPem });

  const onControllerError = (err: unknown) => log.error({ err }, 'controller error');
  const bootstrapContext = () => ({ now: Date.now(), dryRun: false, manager: controllerManager });
  for (const name of systemNamespaces) {
    if (readModel.get('namespaces', name)) continue;
    try {
      await store(namespaceKind).create(undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name }, spec: { finalizers: [namespaceFinalizer] } }, bootstrapContext());
    } catch (err) {
      if (!(err instanceof StatusError && err.reason === 'AlreadyExists')) throw err;
    }
  }
  postStartHooks.set('bootstrap-controller', true);
  const controllers = [
    new ServiceAccountController(readModel, store(serviceAccountKind), onControllerError),
    new NamespaceController(readModel, store(namespaceKind), namespacedKinds(kinds.kinds).map(store), onControllerError),
  ];
  postStartHooks.set('start-service-account-controller', true);
  postStartHooks.set('start-namespace-controller', true);
  ready = true;
  log.info({ url, kubeconfig: kubeconfigPath, revision: readModel.revision, startupMs: Date.now() - started }, 'orch-apiserver is ready');

  let stopping: Promise<void> | undefined;
  return {
    port, url, kubeconfigPath,
    shutdown() {
      stopping ??= (async () => {
        shuttingDown = true;
        log.info('shutting down');
        if (config.shutdownDelayMs > 0) await new Promise((r) => setTimeout(r, config.shutdownDelayMs));
        for (const c of controllers) c.stop();
        for (const listener of [...shutdownListeners]) listener();
        await hub.closeAll();
        await frontDoor.close(config.requestTimeoutMs);
        await encoders.close();
        await writer.close();
        log.info('storage closed');
      })();
      return stopping;
    },
  };
}
