/**
 * The writer worker: the only code that writes storage. It takes every mutation queued since its
 * last commit, commits them as one batch (one durable transaction on SQLite), and publishes the
 * committed events to the front thread in revision order. Housekeeping (lease expiry,
 * compaction) runs between batches, never concurrently with one.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { StorageEngine } from '../src/store/engine.js';
import { StorageMetrics } from '../src/metrics/storage-metrics.js';
import type { Mutation, WriterMessage, WriterOptions, WriterRequest } from '../src/store/storage.js';

if (!parentPort) throw new Error('workers/writer.js must run as a worker thread');
const port = parentPort;
const options = workerData as WriterOptions;
const post = (m: WriterMessage): void => port.postMessage(m);

/** Lease expiry is checked this often: an Event outlives its TTL by at most this much. */
const maintenanceIntervalMs = 1000;
const queue: Mutation[] = [];
let busy = false;
let scheduled = false;
let closing: (() => void) | undefined;
let lastMaintenance = 0;

/**
 * Only the configured engine's module is loaded: etcd's client (etcd3, gRPC and its proto loader)
 * is ~5.5 MiB of this thread's heap, which a server on SQLite never needs.
 */
async function createEngine(): Promise<StorageEngine> {
  if (options.engine === 'etcd') return new (await import('../src/store/etcd-engine.js')).EtcdEngine(options.etcd);
  return new (await import('../src/store/sqlite-engine.js')).SqliteEngine(options.dataDir);
}

// mutations the front thread sends meanwhile wait in the port until its listener is added below
const engine = await createEngine();
const metrics = new StorageMetrics();
engine.onChanges?.((events, revision) => post({ t: 'commit', events, results: [], revision }));
engine.onFailure?.((message) => post({ t: 'fatal', message }));

/** One turn: commit what is queued, else maintain. Turns never overlap, so batches stay ordered. */
async function turn(): Promise<void> {
  scheduled = false;
  if (busy) return;
  busy = true;
  try {
    if (queue.length > 0) {
      const batch = queue.splice(0, queue.length);
      try {
        const started = performance.now();
        const { events, results } = await engine.apply(batch, Date.now());
        post({ t: 'commit', events, results });
        const seconds = (performance.now() - started) / 1000;
        for (const m of batch) metrics.observe(m.op, m.key, seconds);
        // an engine that fails mutations one by one (etcd) says so here: storage is not serving
        for (const r of results) {
          if (r.ok || r.failure !== 'unavailable') continue;
          post({ t: 'health', ok: false, message: r.message });
          break;
        }
      } catch (err) {
        // nothing of this batch was committed: every mutation fails, none is acknowledged
        const message = (err as Error).message;
        post({ t: 'commit', events: [], results: batch.map((m) => ({ id: m.id, ok: false as const, failure: 'unavailable' as const, message })) });
        post({ t: 'health', ok: false, message });
      }
    } else if (Date.now() - lastMaintenance >= maintenanceIntervalMs) {
      lastMaintenance = Date.now();
      try {
        const { events, compactRevision } = await engine.maintain(Date.now(), options.historyMs);
        if (events.length > 0) post({ t: 'commit', events, results: [] });
        post({ t: 'compacted', compactRevision });
        await engine.ping();
        post({ t: 'health', ok: true });
      } catch (err) {
        post({ t: 'health', ok: false, message: (err as Error).message });
      }
    }
  } finally {
    busy = false;
  }
  if (queue.length > 0) schedule();
  else if (closing) closing();
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  // setImmediate lets every message already in the port's queue arrive first: group commit
  setImmediate(() => { void turn(); });
}

const maintenance = setInterval(schedule, maintenanceIntervalMs);

port.on('message', (msg: WriterRequest) => {
  switch (msg.t) {
    case 'mutate':
      for (const m of msg.batch) queue.push(m);
      schedule();
      break;
    case 'readAt':
      engine.readAt(msg.prefix, msg.revision).then(
        (items) => post(items ? { t: 'readAtResult', id: msg.id, items } : { t: 'readAtResult', id: msg.id, compacted: true }),
        (err: Error) => post({ t: 'readAtResult', id: msg.id, error: err.message }));
      break;
    case 'currentRevision': {
      const { id } = msg;
      if (!engine.currentRevision) {
        post({ t: 'currentRevisionResult', id, error: 'this storage engine has no shared revision' });
        break;
      }
      engine.currentRevision(msg.prefix).then(
        (current) => post({ t: 'currentRevisionResult', id, current }),
        (err: Error) => post({ t: 'currentRevisionResult', id, error: err.message }));
      break;
    }
    case 'metrics':
      void metrics.json().then((json) => post({ t: 'metricsResult', id: msg.id, metrics: json }));
      break;
    case 'close':
      clearInterval(maintenance);
      void new Promise<void>((resolve) => {
        closing = resolve;
        if (!busy && queue.length === 0) resolve(); else schedule();
      }).then(() => engine.close()).then(() => {
        post({ t: 'closed' });
        port.close();
      });
      break;
  }
});

engine.load().then(
  (state) => post({ t: 'ready', state }),
  (err: Error) => {
    post({ t: 'fatal', message: err.message });
    process.exit(1);
  });
