/**
 * Storage: the one writer worker (SQLite in the data dir, or etcd) and the read model it feeds,
 * and the encoder pool. Both load their code now, never lazily, so a build rewriting dist/ later
 * cannot reach them. A storage failure the read model cannot follow ends the process.
 */
import { availableParallelism } from 'node:os';
import type { Logger } from 'pino';
import type { ServerConfig } from '../config/server-config.js';
import { WriterClient } from '../store/writer-client.js';
import { EncoderPool } from '../watch/encoder-pool.js';

/** the encoder pool's shared slabs, and how much of them lagging streams may keep pinned before the laggards are cut */
const encoderSlabBytes = 1024 * 1024;
const maxPinnedSlabBytes = 128 * 1024 * 1024;

export interface Storage {
  writer: WriterClient;
  encoders: EncoderPool;
}

function startWriter(config: ServerConfig): Promise<WriterClient> {
  const onEtcd = config.etcdServers.length > 0;
  return WriterClient.start(new URL('../../workers/writer.js', import.meta.url), onEtcd
    ? {
      engine: 'etcd',
      historyMs: config.watchHistoryMs,
      etcd: {
        servers: config.etcdServers, prefix: config.etcdPrefix, caFile: config.etcdCaFile, certFile: config.etcdCertFile,
        keyFile: config.etcdKeyFile, compactionIntervalMs: config.etcdCompactionIntervalMs,
      },
    }
    : { engine: 'sqlite', dataDir: config.dataDir, historyMs: config.watchHistoryMs });
}

export async function startStorage(config: ServerConfig, log: Logger): Promise<Storage> {
  const [writer, encoders] = await Promise.all([
    startWriter(config),
    EncoderPool.start(new URL('../../workers/encoder.js', import.meta.url), {
      threads: config.watchEncoderThreads || Math.max(1, availableParallelism() - 1),
      slabBytes: encoderSlabBytes,
      maxPinnedBytes: maxPinnedSlabBytes,
    }),
  ]);
  writer.onFatal((message) => {
    // the read model can no longer follow storage; a restart reloads it
    log.fatal({ reason: message }, 'storage failed; exiting');
    log.flush();
    process.exit(1);
  });
  return { writer, encoders };
}
