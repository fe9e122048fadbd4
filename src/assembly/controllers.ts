/** The controllers this server runs in process, each following the read model's change feed. */
import type { Logger } from 'pino';
import { namespaceKind } from '../api/core/namespace.js';
import { secretKind } from '../api/core/secret.js';
import { serviceAccountKind } from '../api/core/service-account.js';
import { flowSchemaKind } from '../api/flowcontrol/flow-schema.js';
import { priorityLevelConfigurationKind } from '../api/flowcontrol/priority-level-configuration.js';
import { clusterRoleKind } from '../api/rbac/roles.js';
import { CrdController } from '../apiextensions/crd-controller.js';
import { crdKind } from '../apiextensions/crd-kind.js';
import type { ServerConfig } from '../config/server-config.js';
import { ApfConfigurationController } from '../controllers/apf-configuration-controller.js';
import { GarbageCollector } from '../controllers/garbage-collector/garbage-collector.js';
import { NamespaceController } from '../controllers/namespace-controller.js';
import { ClusterRoleAggregationController } from '../controllers/rbac/aggregation-controller.js';
import { ServiceAccountController } from '../controllers/service-account-controller.js';
import { TokenSecretController } from '../controllers/token-secret-controller.js';
import type { Authentication } from '../server/authentication.js';
import type { Authorization } from '../server/authorization.js';
import type { ReadModel } from '../store/read-model.js';
import type { Api } from './api.js';
import { apfConfigProducerHook, type Lifecycle } from './lifecycle.js';

export interface ControllerParts {
  config: ServerConfig;
  log: Logger;
  readModel: ReadModel;
  api: Api;
  authn: Authentication;
  authz: Authorization;
  /** with priority and fairness on, its mandatory and suggested objects are kept */
  apf: boolean;
  /** the post-start hooks a controller's first pass finishes */
  lifecycle: Lifecycle;
  caCertPem: string;
}

export function startControllers({ config, log, readModel, api: { kinds, stores }, authn, authz, apf, lifecycle, caCertPem }: ControllerParts): Array<{ stop(): void }> {
  const onError = (err: unknown) => log.error({ err }, 'controller error');
  const apfConfiguration = apf ? new ApfConfigurationController(readModel, { flowSchemas: stores.of(flowSchemaKind), priorityLevels: stores.of(priorityLevelConfigurationKind) }, onError) : undefined;
  if (apfConfiguration) {
    // ready once the configuration objects exist (apiserver.ts expects the hook)
    void apfConfiguration.idle().then(() => lifecycle.done(apfConfigProducerHook));
  }
  return [
    new ServiceAccountController(readModel, stores.of(serviceAccountKind), onError),
    new NamespaceController(readModel, stores.of(namespaceKind), () => stores.namespaced(), onError),
    ...(authz.rbacIndex ? [new ClusterRoleAggregationController(readModel, authz.rbacIndex, stores.of(clusterRoleKind), onError)] : []),
    new CrdController({
      readModel, registry: kinds, crds: stores.of(crdKind), storeOf: (k) => stores.of(k), onError,
      serving: { ratcheting: config.featureGates.enabled('CRDValidationRatcheting') },
    }),
    ...(config.enableGarbageCollector ? [new GarbageCollector({ readModel, kinds, storeOf: (k) => stores.of(k), onError })] : []),
    ...(apfConfiguration ? [apfConfiguration] : []),
    ...(authn.tokenGenerator ? [new TokenSecretController(readModel, stores.of(secretKind), authn.tokenGenerator, caCertPem, onError)] : []),
  ];
}
