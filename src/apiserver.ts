/**
 * The composition root: an assembly of named parts (src/assembly/), started in order and torn
 * down in reverse on shutdown. Configuration that can be wrong is checked first, so a bad file
 * refuses start before anything listens or writes.
 */
import { join } from 'node:path';
import type { Logger } from 'pino';
import { accessReviewer } from './api/authorization/reviews.js';
import type { ApiRegistry } from './api/registry/api-registry.js';
import { Services } from './api/services.js';
import { setUpAuditing } from './audit/setup.js';
import { readModelLookup } from './auth/authn/service-account/lookup.js';
import { writeKubeconfig } from './auth/pki.js';
import { offeredEncodings } from './codec/media-types.js';
import type { ServerConfig } from './config/server-config.js';
import { admissionSettings, assembleApi } from './assembly/api.js';
import { advertisedAddress, hostForUrl } from './assembly/addresses.js';
import { bootstrapObjects } from './assembly/bootstrap.js';
import { startControllers } from './assembly/controllers.js';
import { assembleFlowControl } from './assembly/flow-control.js';
import { serverIdentity } from './assembly/identity.js';
import { apfConfigProducerHook, Lifecycle } from './assembly/lifecycle.js';
import { assembleMetrics } from './assembly/metrics.js';
import { assemblePipeline } from './assembly/pipeline.js';
import { startStorage } from './assembly/storage.js';
import { assembleWatching } from './assembly/watch.js';
import { authentication } from './server/authentication.js';
import { authorization } from './server/authorization.js';
import { FrontDoor } from './server/front-door.js';

export interface RunningServer {
  port: number;
  url: string;
  kubeconfigPath: string;
  /** the runtime API registry: what is added or removed here is served, or not, at once */
  registry: ApiRegistry;
  /** SIGTERM behaviour: stop accepting, end watches, let writes commit, close storage */
  shutdown(): Promise<void>;
}

export async function startApiServer(config: ServerConfig, log: Logger): Promise<RunningServer> {
  const lifecycle = new Lifecycle();
  for (const warning of config.featureGates.warnings) log.warn(warning);

  // configuration files first: a malformed policy or plugin configuration refuses start
  const auditor = setUpAuditing(config, log);
  const admission = admissionSettings(config);

  const identity = await serverIdentity(config);
  const storage = await startStorage(config, log);
  const readModel = storage.writer.readModel;
  lifecycle.done('generic-apiserver-start-informers');

  // authorization reads its policy from the read model; the access reviews ask it
  const authz = await authorization(config, { readModel }, log);
  if (authz.rbacIndex) lifecycle.expect('rbac/bootstrap-roles');
  const api = assembleApi(config, storage.writer, authz, admission);
  lifecycle.done('start-apiserver-admission-initializer');
  const watching = assembleWatching(config, storage, api.kinds, log);

  const services = new Services().set(accessReviewer, authz.authorizer);
  const authn = await authentication(config, {
    log, authorizerTypes: authz.types, lookup: readModelLookup(readModel), pkiDir: join(config.dataDir, 'pki'), clientCaPem: identity.tls.ca,
    externalAddress: `${hostForUrl(config.advertiseAddress ?? config.bindAddress)}:${config.securePort}`, services,
  });
  const flowControl = assembleFlowControl(config, readModel, api.kinds);
  // the levels and schemas are read from the read model as it is built, and the filter is in the chain
  if (flowControl.apf) {
    lifecycle.done('priority-and-fairness-config-consumer', 'priority-and-fairness-filter');
    lifecycle.expect(apfConfigProducerHook);
  }
  const metrics = assembleMetrics({ kinds: api.kinds, encoders: storage.encoders, readModel, apf: flowControl.apf, auditor, hub: watching.hub });
  const shutdownListeners = new Set<() => void>();
  let address = '';
  const pipeline = assemblePipeline({
    config, log, lifecycle, writer: storage.writer, api, watching, authn, authz, flowControl: flowControl.controller,
    auditor, metrics, services, shutdownListeners, address: () => address,
  });

  const frontDoor = new FrontDoor({
    tls: identity.tls,
    exchange: {
      offered: offeredEncodings((gate) => config.featureGates.enabled(gate)),
      // kube-apiserver's threshold: smaller bodies are not worth the CPU
      compressFrom: config.featureGates.enabled('APIResponseCompression') ? 128 * 1024 : undefined,
      output: watching.output,
      requestTimeoutMs: config.requestTimeoutMs,
    },
  }, pipeline);
  frontDoor.server.on('tlsClientError', () => metrics.tlsHandshakeError());
  // what runs below the front door: stopped on shutdown, and at once when the port cannot be had,
  // so an embedder that fails to start is left with no threads or files held
  const stopBackground = async () => {
    authn.stop();
    authz.stop();
    for (const listener of [...shutdownListeners]) listener();
    await watching.hub.closeAll();
    watching.changeLog.close();
  };
  const stopStorage = async () => {
    await auditor?.shutdown();
    await storage.encoders.close();
    await storage.writer.close();
    log.info('storage closed');
  };
  let port: number;
  try {
    port = await frontDoor.listen(config.securePort, config.bindAddress);
  } catch (err) {
    await stopBackground();
    await stopStorage();
    throw err;
  }
  address = advertisedAddress(config, port);
  const url = `https://${hostForUrl(config.bindAddress)}:${port}`;
  const kubeconfigPath = join(config.dataDir, 'admin.kubeconfig');
  const { pki } = identity;
  writeKubeconfig(kubeconfigPath, { server: url, caCertPem: pki.caCertPem, clientCertPem: pki.adminCertPem, clientKeyPem: pki.adminKeyPem });

  await bootstrapObjects(readModel, api.stores, authz.rbacIndex !== undefined, lifecycle);
  const controllers = startControllers({ config, log, readModel, api, authn, authz, apf: flowControl.apf !== undefined, lifecycle, caCertPem: pki.caCertPem });
  lifecycle.done('start-service-account-controller', 'start-namespace-controller');
  lifecycle.ready = true;
  // "ready" is logged when /readyz says so. Not awaited: a configuration that never gets stored
  // leaves the server serving and not ready, as kube-apiserver, and a signal still stops it
  void lifecycle.finished(apfConfigProducerHook).then(() => {
    log.info({ url, kubeconfig: kubeconfigPath, revision: readModel.revision, startupMs: Date.now() - lifecycle.started }, 'orch-apiserver is ready');
  });

  let stopping: Promise<void> | undefined;
  return {
    port, url, kubeconfigPath, registry: api.kinds,
    shutdown() {
      stopping ??= (async () => {
        lifecycle.shuttingDown = true;
        log.info('shutting down');
        if (config.shutdownDelayMs > 0) await new Promise((r) => setTimeout(r, config.shutdownDelayMs));
        for (const c of controllers) c.stop();
        await stopBackground();
        await frontDoor.close(config.requestTimeoutMs);
        await stopStorage();
      })();
      return stopping;
    },
  };
}
