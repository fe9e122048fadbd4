/**
 * The API: the runtime registry of served kinds (the built-ins `--runtime-config` enables, under
 * Kubernetes' group names too unless switched off), the admission chain writes pass, and the
 * generic store of every kind.
 */
import { AdmissionChain } from '../admission/admission.js';
import { readAdmissionConfig } from '../admission/admission-config.js';
import { EventRateLimit, parseEventRateLimitConfig, type EventRateLimitSpec } from '../admission/plugins/event-rate-limit.js';
import { NamespaceLifecycle } from '../admission/plugins/namespace-lifecycle.js';
import { RbacEscalationCheck } from '../admission/plugins/rbac-escalation.js';
import { withKubernetesAliases } from '../api/registry/alias.js';
import { ApiRegistry } from '../api/registry/api-registry.js';
import { builtinKinds } from '../api/registry/builtin.js';
import { enabledKinds } from '../api/registry/enablement.js';
import type { ServerConfig } from '../config/server-config.js';
import { ResourceStores } from '../resource-store/resource-stores.js';
import type { Authorization } from '../server/authorization.js';
import { SnapshotCache } from '../store/snapshot-cache.js';
import type { WriterClient } from '../store/writer-client.js';

/** ...of the system namespaces, these can never be deleted (NamespaceLifecycle's immortal namespaces) */
const immortalNamespaces = new Set(['default', 'orch-system', 'orch-public']);

export interface Api {
  kinds: ApiRegistry;
  stores: ResourceStores;
}

export interface AdmissionSettings {
  /** EventRateLimit's limits, when the plugin is enabled */
  eventRateLimits: EventRateLimitSpec[] | undefined;
}

/** The admission plugins' configuration, read before anything starts so a bad file refuses start. */
export function admissionSettings(config: ServerConfig): AdmissionSettings {
  const configs = readAdmissionConfig(config.admissionControlConfigFile);
  return {
    eventRateLimits: config.enableAdmissionPlugins.includes('EventRateLimit') ? parseEventRateLimitConfig(configs.get('EventRateLimit')) : undefined,
  };
}

export function assembleApi(config: ServerConfig, writer: WriterClient, authz: Authorization, admissionConfig: AdmissionSettings): Api {
  const readModel = writer.readModel;
  const enabled = enabledKinds(builtinKinds, config.runtimeConfig);
  const kinds = new ApiRegistry(config.kubernetesGroupAliases ? withKubernetesAliases(enabled) : enabled);
  const admission = new AdmissionChain([
    new NamespaceLifecycle(readModel, immortalNamespaces),
    ...(authz.rbacIndex ? [new RbacEscalationCheck(authz.authorizer, authz.rbacIndex)] : []),
    ...(admissionConfig.eventRateLimits ? [new EventRateLimit(admissionConfig.eventRateLimits)] : []),
  ]);
  const stores = new ResourceStores(kinds, { readModel, writer, snapshots: new SnapshotCache(config.continueTtlMs), admission, config });
  return { kinds, stores };
}
