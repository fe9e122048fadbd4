/**
 * Watch fan-out: the change log, the watch hub over the encoder pool, and the output budget that
 * bounds what clients that stop reading may hold (a watch stream is bounded by its connection's
 * budget when that is the smaller).
 */
import type { Logger } from 'pino';
import type { ApiRegistry } from '../api/registry/api-registry.js';
import type { ServerConfig } from '../config/server-config.js';
import { OutputBudget } from '../http/output-budget.js';
import { ChangeLog } from '../watch/change-log.js';
import { WatchHub } from '../watch/watch-hub.js';
import type { Storage } from './storage.js';

const watchBufferBytes = 8 * 1024 * 1024;
const bookmarkIntervalMs = 60_000;

export interface Watching {
  output: OutputBudget;
  changeLog: ChangeLog;
  hub: WatchHub;
}

export function assembleWatching(config: ServerConfig, { writer, encoders }: Storage, kinds: ApiRegistry, log: Logger): Watching {
  const output = new OutputBudget({
    perConnection: config.maxUnsentBytesPerConnection,
    total: config.maxUnsentBytes,
    onCut: ({ reason, unsentBytes }) => log.warn({ reason, unsentBytes }, 'cut a response whose client is not reading'),
  });
  encoders.useKinds((table) => kinds.storageKind(table));
  const changeLog = new ChangeLog(writer.readModel.revision, config.watchHistoryMs);
  const maxBufferedBytes = config.maxUnsentBytesPerConnection > 0 ? Math.min(watchBufferBytes, config.maxUnsentBytesPerConnection) : watchBufferBytes;
  const hub = new WatchHub(writer.readModel, changeLog, encoders, { maxBufferedBytes, bookmarkIntervalMs });
  return { output, changeLog, hub };
}
