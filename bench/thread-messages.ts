/**
 * The messages threads exchange on the watch path, sent through a real worker both ways: as
 * objects (structured clone, what postMessage does) and as msgpackr bytes with structured records
 * (packed, the buffer transferred, unpacked by the receiver). Part of the `codec` scenario: it
 * decides where msgpackr replaces structured clone (docs/watch-fanout.md).
 */
import { Worker } from 'node:worker_threads';
import { Packr } from 'msgpackr';
import { serviceAccountKind } from '../src/api/core/service-account.js';
import type { EncodeTask } from '../src/watch/encode-task.js';
import { shapeOf } from '../src/watch/shape.js';

export interface MessageFigures { message: string; bytes: number; cloneMs: number; msgpackrMs: number; packMs: number; ratio: number }

/** The receiving side: unpacks bytes when given bytes, and acknowledges every message. */
const receiver = `
const { parentPort } = require('node:worker_threads');
const { Packr } = require(${JSON.stringify(new URL('../../node_modules/msgpackr/dist/node.cjs', import.meta.url).pathname)});
const packr = new Packr({ useRecords: true, moreTypes: false });
let n = 0;
parentPort.on('message', (m) => {
  const value = m instanceof Uint8Array ? packr.unpack(m) : m;
  if (value.changes === undefined && value.events === undefined) throw new Error('bad message');
  if (++n % 100 === 0) parentPort.postMessage(n);
});`;

function sample(objects: readonly Record<string, unknown>[], perMessage: number) {
  const json = objects.slice(0, perMessage).map((o) => JSON.stringify(o));
  const commit = { t: 'commit', events: json.map((value, i) => ({ revision: 1000 + i, type: 'MODIFIED', key: `serviceaccounts/ns/sa-${i}`, value, mutationId: i })), results: json.map((_, i) => ({ id: i, ok: true, revision: 1000 + i })), revision: 1000 + json.length };
  const shapes = (['json', 'protobuf', 'cbor'] as const).map((e) => shapeOf(serviceAccountKind, e, undefined, false));
  const task: EncodeTask = {
    changes: json.map((object, i) => ({ resource: 'serviceaccounts', type: 'MODIFIED', revision: 1000 + i, object })),
    tables: { serviceaccounts: { shapes, filtered: false, kind: { group: '', version: 'v1', kind: 'ServiceAccount', schema: serviceAccountKind.schema } } },
  };
  return [[`writer → front: commit of ${perMessage} events`, commit], [`front → encoder: task of ${perMessage} changes × 3 shapes`, task]] as const;
}

async function timeThrough(worker: Worker, count: number, send: () => void): Promise<number> {
  const acked = new Promise<void>((resolve) => {
    const on = (n: number) => { if (n >= count) { worker.off('message', on); resolve(); } };
    worker.on('message', on);
  });
  const t = process.hrtime.bigint();
  for (let i = 0; i < count; i++) send();
  await acked;
  return Number(process.hrtime.bigint() - t) / 1e6;
}

export async function measureThreadMessages(objects: readonly Record<string, unknown>[], rounds: number): Promise<MessageFigures[]> {
  const packr = new Packr({ useRecords: true, moreTypes: false });
  const out: MessageFigures[] = [];
  for (const [message, value] of sample(objects, 64)) {
    const count = 1000;
    const clone: number[] = [];
    const packed: number[] = [];
    const packOnly: number[] = [];
    // a fresh receiver per message kind: its records table starts empty, as a real one would
    const worker = new Worker(receiver, { eval: true });
    for (let r = 0; r <= rounds; r++) {
      const c = await timeThrough(worker, count, () => worker.postMessage(value));
      const p = await timeThrough(worker, count, () => { const bytes = packr.pack(value); const copy = new Uint8Array(bytes); worker.postMessage(copy, [copy.buffer]); });
      const t = process.hrtime.bigint();
      for (let i = 0; i < count; i++) packr.pack(value);
      // round 0 warms up
      if (r > 0) { clone.push(c); packed.push(p); packOnly.push(Number(process.hrtime.bigint() - t) / 1e6); }
    }
    await worker.terminate();
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const cloneMs = median(clone) / count;
    const msgpackrMs = median(packed) / count;
    out.push({ message, bytes: packr.pack(value).length, cloneMs: +cloneMs.toFixed(4), msgpackrMs: +msgpackrMs.toFixed(4), packMs: +(median(packOnly) / count).toFixed(4), ratio: +(msgpackrMs / cloneMs).toFixed(2) });
  }
  return out;
}
