/**
 * The request pipeline and what it ends in: the handler chain (src/server/handler-chain.ts lists
 * the filters) in front of the dispatcher to resource handlers, watches and the non-resource
 * endpoints (health, issuer discovery, /metrics).
 */
import type { Logger } from 'pino';
import type { Services } from '../api/services.js';
import type { Auditor } from '../audit/auditor.js';
import type { ServerConfig } from '../config/server-config.js';
import type { FlowController } from '../flowcontrol/flow-control.js';
import { HealthEndpoint } from '../http/health.js';
import { MetricsEndpoint } from '../http/metrics-endpoint.js';
import { NonResourceHandler } from '../http/non-resource.js';
import { ResourceHandler } from '../http/resource-handler.js';
import type { ApiServerMetrics } from '../metrics/apiserver-metrics.js';
import type { Authentication } from '../server/authentication.js';
import type { Authorization } from '../server/authorization.js';
import { dispatcher } from '../server/dispatch.js';
import type { Handler } from '../server/filter.js';
import { buildHandlerChain } from '../server/handler-chain.js';
import { healthChecks } from '../server/health-checks.js';
import type { WriterClient } from '../store/writer-client.js';
import type { Api } from './api.js';
import type { Lifecycle } from './lifecycle.js';
import type { Watching } from './watch.js';

export interface PipelineParts {
  config: ServerConfig;
  log: Logger;
  lifecycle: Lifecycle;
  writer: WriterClient;
  api: Api;
  watching: Watching;
  authn: Authentication;
  authz: Authorization;
  flowControl: FlowController;
  auditor: Auditor | undefined;
  metrics: ApiServerMetrics;
  services: Services;
  /** what watches and other long-running requests end on at shutdown */
  shutdownListeners: Set<() => void>;
  /** host:port as discovery advertises it, known once listening */
  address: () => string;
}

export function assemblePipeline(p: PipelineParts): Handler {
  const { config, log, lifecycle, writer, api: { kinds, stores }, watching: { hub, output }, metrics } = p;
  const checks = healthChecks({
    storage: () => writer.health, storageAlive: () => writer.alive, onEtcd: config.etcdServers.length > 0,
    ready: () => lifecycle.ready, shuttingDown: () => lifecycle.shuttingDown, postStartHooks: lifecycle.postStartHooks,
  });
  const onHealthFailure = (check: string, reason: string) => log.warn({ check, reason }, 'health check failed');
  return buildHandlerChain({
    log,
    maxRequestBodyBytes: config.maxRequestBodyBytes,
    authenticator: p.authn.authenticator,
    authorizer: p.authz.authorizer,
    flowControl: p.flowControl,
    requestTimeoutMs: config.requestTimeoutMs,
    auditor: p.auditor,
    metrics: { metrics, served: (info) => kinds.lookup(info.apiGroup, info.apiVersion, info.resource) !== undefined },
    goawayChance: config.goawayChance,
  }, dispatcher({
    kinds,
    resources: new ResourceHandler({
      stores, hub, readModel: writer.readModel,
      minRequestTimeoutSeconds: config.minRequestTimeoutSeconds,
      watchListEnabled: config.featureGates.enabled('WatchList'),
      maxRequestBodyBytes: config.maxRequestBodyBytes,
      services: p.services,
      onShutdown: (listener) => { p.shutdownListeners.add(listener); return () => p.shutdownListeners.delete(listener); },
      output,
    }),
    nonResource: new NonResourceHandler(kinds, [
      new HealthEndpoint('healthz', checks.healthz, onHealthFailure),
      new HealthEndpoint('livez', checks.livez, onHealthFailure),
      new HealthEndpoint('readyz', checks.readyz, onHealthFailure),
      ...(p.authn.discovery ? [p.authn.discovery] : []),
    ], p.address, [new MetricsEndpoint({ exposition: () => metrics.exposition([() => writer.metrics()]) })]),
    onWebSocketError: (err) => log.error({ err }, 'websocket watch failed'),
    onDeprecatedRequest: (r) => metrics.requestedDeprecatedApi(r.group, r.version, r.resource, r.subresource, r.removedRelease),
  }));
}
