/**
 * The garbage collection flows on etcd: the same owner/dependent chains as on SQLite, the read
 * model fed by etcd's watch, and restarts that rebuild the collector's graph from etcd.
 */
import { before } from 'node:test';
import { describeGarbageCollection } from '../support/garbage-collection.js';
import { startEtcd, type EtcdCluster } from '../support/etcd.js';
import { startServer } from '../support/server.js';

let etcd: EtcdCluster;
before(async () => { etcd = await startEtcd(); });

describeGarbageCollection('etcd', {
  start(state, args = []) {
    return startServer({ args: ['--etcd-servers', etcd.servers, '--etcd-prefix', `/gc-${state}-${process.pid}`, '--log-level', 'warn', ...args] });
  },
  async cleanup() { await etcd?.dispose(); },
});
