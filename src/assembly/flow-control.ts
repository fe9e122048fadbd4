/**
 * Flow control: priority and fairness (the default), or the plain max-in-flight limiter when
 * `--enable-priority-and-fairness=false`. Lists are weighted by the objects the read model holds.
 */
import type { ApiRegistry } from '../api/registry/api-registry.js';
import { storageResourceOf } from '../api/kind.js';
import type { ServerConfig } from '../config/server-config.js';
import type { FlowController } from '../flowcontrol/flow-control.js';
import { MaxInflightLimiter } from '../flowcontrol/max-inflight.js';
import { PriorityAndFairness } from '../flowcontrol/priority-and-fairness.js';
import type { ReadModel } from '../store/read-model.js';

export interface FlowControl {
  controller: FlowController;
  /** priority and fairness, when on: its configuration controller and metrics read it */
  apf: PriorityAndFairness | undefined;
}

export function assembleFlowControl(config: ServerConfig, readModel: ReadModel, kinds: ApiRegistry): FlowControl {
  if (!config.enablePriorityAndFairness) {
    return { controller: new MaxInflightLimiter({ readOnly: config.maxRequestsInflight, mutating: config.maxMutatingRequestsInflight }), apf: undefined };
  }
  const apf = new PriorityAndFairness(readModel, {
    serverConcurrencyLimit: config.maxRequestsInflight + config.maxMutatingRequestsInflight,
    requestWaitLimitMs: config.requestTimeoutMs / 4,
    objectCount: (info) => {
      const kind = kinds.lookup(info.apiGroup, info.apiVersion, info.resource);
      return kind ? readModel.table(storageResourceOf(kind)).size : 0;
    },
  });
  return { controller: apf, apf };
}
