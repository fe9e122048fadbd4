/**
 * The writer worker: the only code that writes storage. It takes every mutation queued since its
 * last turn, commits them in one durable transaction, and publishes the committed events to the
 * front thread in revision order. Between batches it expires leases and compacts history.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { SqliteEngine } from '../src/store/sqlite-engine.js';
import type { Mutation, WriterMessage, WriterOptions, WriterRequest } from '../src/store/storage.js';

if (!parentPort) throw new Error('workers/writer.js must run as a worker thread');
const port = parentPort;
const options = workerData as WriterOptions;
const post = (m: WriterMessage): void => port.postMessage(m);

const compactionIntervalMs = Math.min(60_000, Math.max(1_000, options.historyMs / 5));
const queue: Mutation[] = [];
let flushScheduled = false;
let closing = false;
let leaseTimer: NodeJS.Timeout | undefined;

let engine: SqliteEngine;
try {
  engine = new SqliteEngine(options.dataDir);
  post({ t: 'ready', state: engine.load() });
} catch (err) {
  post({ t: 'fatal', message: (err as Error).message });
  process.exit(1);
}

function flush(): void {
  flushScheduled = false;
  if (queue.length === 0) return;
  const batch = queue.splice(0, queue.length);
  try {
    const { events, results } = engine.apply(batch, Date.now());
    post({ t: 'commit', events, results });
  } catch (err) {
    // nothing of this batch was committed: every mutation fails, none is acknowledged
    const message = (err as Error).message;
    post({ t: 'commit', events: [], results: batch.map((m) => ({ id: m.id, ok: false as const, failure: 'unavailable' as const, message })) });
    post({ t: 'health', ok: false, message });
  }
  scheduleLeaseExpiry();
}

function expireLeases(): void {
  leaseTimer = undefined;
  try {
    const events = engine.expireLeases(Date.now());
    if (events.length > 0) post({ t: 'commit', events, results: [] });
  } catch (err) {
    post({ t: 'health', ok: false, message: (err as Error).message });
  }
  scheduleLeaseExpiry();
}

function scheduleLeaseExpiry(): void {
  const next = engine.nextLeaseExpiry();
  if (next === undefined || closing) return;
  if (leaseTimer) clearTimeout(leaseTimer);
  // capped so that a far-away lease never overflows the timer, re-armed when it fires
  leaseTimer = setTimeout(expireLeases, Math.min(Math.max(next - Date.now(), 0) + 5, 60_000));
}

const compactor = setInterval(() => {
  try {
    const compactRevision = engine.compact(Date.now() - options.historyMs);
    post({ t: 'compacted', compactRevision });
    engine.ping();
    post({ t: 'health', ok: true });
  } catch (err) {
    post({ t: 'health', ok: false, message: (err as Error).message });
  }
}, compactionIntervalMs);

scheduleLeaseExpiry();

port.on('message', (msg: WriterRequest) => {
  if (msg.t === 'mutate') {
    for (const m of msg.batch) queue.push(m);
    if (!flushScheduled) {
      flushScheduled = true;
      // setImmediate lets every message already in the port's queue arrive first: group commit
      setImmediate(flush);
    }
  } else if (msg.t === 'readAt') {
    // history reads wait behind queued writes so they never see less than was acknowledged
    flush();
    try {
      const items = engine.readAt(msg.prefix, msg.revision);
      post(items ? { t: 'readAtResult', id: msg.id, items } : { t: 'readAtResult', id: msg.id, compacted: true });
    } catch (err) {
      post({ t: 'readAtResult', id: msg.id, error: (err as Error).message });
    }
  } else if (msg.t === 'close') {
    closing = true;
    flush();
    clearInterval(compactor);
    if (leaseTimer) clearTimeout(leaseTimer);
    engine.close();
    post({ t: 'closed' });
    port.close();
  }
});
