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
import type { EncoderPool } from '../watch/encoder-pool.js';
import type { WatchHub } from '../watch/watch-hub.js';

export interface MetricParts {
  kinds: ApiRegistry;
  encoders: EncoderPool;
  readModel: ReadModel;
  apf: PriorityAndFairness | undefined;
  auditor: Auditor | undefined;
  hub: WatchHub;
}

/** group, version and resource labels of a watched storage table and the apiVersion it is served in */
function watchLabels(table: string, apiVersion: string): [group: string, version: string, resource: string] {
  const slash = apiVersion.indexOf('/');
  return [slash < 0 ? '' : apiVersion.slice(0, slash), apiVersion.slice(slash + 1), table.split('.')[0]];
}

export function assembleMetrics({ kinds, encoders, readModel, apf, auditor, hub }: MetricParts): ApiServerMetrics {
  const metrics = new ApiServerMetrics();
  metrics.useSources({
    storageObjects: function* storedObjects() {
      for (const kind of kinds.storageKinds()) {
        const resource = storageResourceOf(kind);
        yield [resource, readModel.table(resource).size] as [string, number];
      }
    },
    flowControl: apf,
    encoderPoolUtilization: () => encoders.utilization,
    audit: auditor?.metrics,
    watchEvents: function* watchEvents() {
      for (const [table, byVersion] of hub.eventsSentBy) {
        for (const [apiVersion, { sent }] of byVersion) yield [...watchLabels(table, apiVersion), sent] as [string, string, string, number];
      }
    },
  });
  hub.reportEventSizes((table, apiVersion) => metrics.watchEventSizesOf(...watchLabels(table, apiVersion)));
  return metrics;
}
