/**
 * /metrics: request metrics come from the pipeline; the rest is read, when scraped, from where
 * the state lives (the read model, priority and fairness, the auditor, the watch hub).
 */
import type { ApiRegistry } from '../api/registry/api-registry.js';
import { storageResourceOf } from '../api/kind.js';
import type { Auditor } from '../audit/auditor.js';
import type { PriorityAndFairness } from '../flowcontrol/priority-and-fairness.js';
import { ApiServerMetrics } from '../metrics/apiserver-metrics.js';
import type { ReadModel } from '../store/read-model.js';
import type { WatchHub } from '../watch/watch-hub.js';

export interface MetricParts {
  kinds: ApiRegistry;
  readModel: ReadModel;
  apf: PriorityAndFairness | undefined;
  auditor: Auditor | undefined;
  hub: WatchHub;
}

export function assembleMetrics({ kinds, readModel, apf, auditor, hub }: MetricParts): ApiServerMetrics {
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
  return metrics;
}
