/**
 * The checks /healthz, /livez and /readyz run, by Kubernetes' names: ping, log, the storage check
 * (named `etcd` on SQLite too, so probes written for kube-apiserver keep working), informer sync,
 * the post-start hooks and shutdown.
 */
import type { HealthCheck } from '../http/health.js';

export interface HealthState {
  /** storage answers; message when it does not */
  storage(): { ok: boolean; message?: string };
  /** the storage writer is running at all (liveness on etcd) */
  storageAlive(): boolean;
  onEtcd: boolean;
  ready(): boolean;
  shuttingDown(): boolean;
  postStartHooks: ReadonlyMap<string, boolean>;
}

export function healthChecks(s: HealthState): { healthz: HealthCheck[]; livez: HealthCheck[]; readyz: HealthCheck[] } {
  const storage: HealthCheck = { name: 'etcd', check: () => { const h = s.storage(); return h.ok ? undefined : h.message ?? 'storage unavailable'; } };
  // Liveness asks whether restarting this process would help. With etcd, a cluster without
  // quorum is not cured by restarting its clients: /livez stays up while /readyz fails.
  const storageLiveness: HealthCheck = s.onEtcd
    ? { name: 'etcd', check: () => (s.storageAlive() ? undefined : s.storage().message ?? 'storage writer stopped') }
    : storage;
  const basics: HealthCheck[] = [{ name: 'ping', check: () => undefined }, { name: 'log', check: () => undefined }];
  const hooks: HealthCheck[] = [...s.postStartHooks.keys()].map((hook) => ({
    name: `poststarthook/${hook}`,
    check: () => (s.postStartHooks.get(hook) ? undefined : 'not finished'),
  }));
  return {
    healthz: [...basics, storage, ...hooks],
    livez: [...basics, storageLiveness, ...hooks],
    readyz: [
      ...basics, storage, { name: 'etcd-readiness', check: storage.check },
      { name: 'informer-sync', check: () => (s.ready() ? undefined : 'read model not loaded') },
      ...hooks,
      { name: 'shutdown', check: () => (s.shuttingDown() ? 'process is shutting down' : undefined) },
    ],
  };
}
