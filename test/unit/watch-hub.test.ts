import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { serviceAccountKind } from '../../src/api/core/service-account.js';
import type { KObject } from '../../src/api/meta.js';
import { decodeEnvelope } from '../../src/codec/proto/decode.js';
import { encodeEnvelope } from '../../src/codec/proto/encode.js';
import { runtimeTypes } from '../../src/codec/proto/message-types.js';
import { ReadModel, StoredObject } from '../../src/store/read-model.js';
import { encodeBatch } from '../../src/watch/encode-batch.js';
import type { EncodeTask } from '../../src/watch/encode-task.js';
import { receiveBatch, type EncoderPool } from '../../src/watch/encoder-pool.js';
import { ChangeLog } from '../../src/watch/change-log.js';
import type { Frame } from '../../src/watch/frames.js';
import { shapeOf, watchEncoders, type WatchRepresentation } from '../../src/watch/shape.js';
import { SlabPins, SlabTable, SlabWriter } from '../../src/watch/slabs.js';
import { WatchHub } from '../../src/watch/watch-hub.js';
import type { WatchSink, WatchSpec } from '../../src/watch/watcher.js';

/** An encoder pool that encodes in-process (the workers' code, into slabs) and counts what it was asked to encode. */
function countingPool(delay?: (task: EncodeTask) => Promise<void>) {
  const writer = new SlabWriter(1 << 16);
  const pool = {
    calls: 0,
    objects: 0,
    slabs: new SlabTable(1 << 30),
    kindData: () => ({ group: '', version: 'v1', kind: 'ServiceAccount', schema: serviceAccountKind.schema }),
    async encode(task: EncodeTask) {
      pool.calls++;
      pool.objects += task.changes.length;
      const result = encodeBatch(task, writer);
      await delay?.(task);
      return receiveBatch(pool.slabs, task, result);
    },
  };
  return pool;
}

function recordingSink() {
  const writes: Array<readonly Frame[]> = [];
  const sink: WatchSink & { writes: typeof writes; ended: boolean; aborted: boolean } = {
    writes, ended: false, aborted: false,
    write: (frames) => { writes.push(frames); },
    bufferedBytes: () => 0,
    end: () => { sink.ended = true; },
    abort: () => { sink.aborted = true; },
  };
  return sink;
}

const typeMeta = { kind: 'ServiceAccount', apiVersion: 'v1' };
function spec(encoding: 'json' | 'protobuf', matches: WatchSpec['matches'] = () => true, filtered = false): WatchSpec {
  return {
    resource: 'serviceaccounts', matches, filtered, startRevision: 1, bookmarks: false, typeMeta, encoding,
    envelope: (o) => encodeEnvelope(o as Record<string, unknown>, serviceAccountKind.schema, typeMeta),
    shape: shapeOf(serviceAccountKind, encoding, undefined, false),
  };
}
/** A watch of a view, as planWatch makes it. */
function viewSpec(encoding: 'json' | 'protobuf', representation: WatchRepresentation): WatchSpec {
  return { ...spec(encoding), ...watchEncoders(serviceAccountKind, encoding, representation), shape: shapeOf(serviceAccountKind, encoding, representation, false) };
}
/** Lets the hub's delivery rounds (setImmediate) run: an immediate first, since on a loaded machine a due timer can run before them. */
const settle = () => new Promise((r) => setImmediate(() => setTimeout(r, 10)));
/** Waits until `delivered` holds (rounds run on immediates and the pool's promises; a loaded machine may need more than one settle). */
async function until(delivered: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !delivered(); i++) await settle();
  assert.ok(delivered(), `never delivered: ${what}`);
}
const sa = (name: string, labels?: Record<string, string>) => JSON.stringify({ kind: 'ServiceAccount', apiVersion: 'v1', metadata: { name, namespace: 'ns', resourceVersion: '', labels } });

describe('WatchHub fan-out', () => {
  it('encodes each event once per encoding, whatever the number of watchers, and shares the frames', async () => {
    const readModel = new ReadModel({ revision: 1, compactRevision: 0, items: [] });
    const pool = countingPool();
    const hub = new WatchHub(readModel, new ChangeLog(1, 60_000), pool as unknown as EncoderPool, { maxBufferedBytes: 1 << 20, bookmarkIntervalMs: 60_000 });
    const json = Array.from({ length: 50 }, () => recordingSink());
    const proto = Array.from({ length: 50 }, () => recordingSink());
    for (const s of json) hub.add(spec('json'), s);
    for (const s of proto) hub.add(spec('protobuf'), s);

    readModel.apply([
      { revision: 2, type: 'ADDED', key: 'serviceaccounts/ns/a', value: sa('a') },
      { revision: 3, type: 'ADDED', key: 'serviceaccounts/ns/b', value: sa('b') },
    ]);
    await until(() => [...json, ...proto].every((s) => s.writes.length === 1), 'the first round');
    readModel.apply([{ revision: 4, type: 'MODIFIED', key: 'serviceaccounts/ns/a', value: sa('a', { x: 'y' }) }]);
    await hub.closeAll();

    assert.equal(pool.objects, 3, 'three events, each encoded once for 50 JSON and 50 protobuf watchers');
    assert.equal(pool.calls, 2, 'one pool task per delivery round');
    for (const s of [...json, ...proto]) assert.equal(s.writes.length, 2, 'one write per round per stream');
    // every watcher received the very same frame objects: nothing was serialized per watcher (the
    // first round's two events lie side by side in the slab and go out as one view of both)
    assert.equal(json[0].writes[0].length, 1, 'the first round\'s two events in one frame');
    assert.equal(String(json[0].writes[0][0]).split('\n').length, 3);
    for (let b = 0; b < 2; b++) {
      for (let f = 0; f < json[0].writes[b].length; f++) {
        assert.ok(json.every((s) => s.writes[b][f] === json[0].writes[b][f]));
        assert.ok(proto.every((s) => s.writes[b][f] === proto[0].writes[b][f]));
      }
    }
    assert.match(String(json[0].writes[0][0]), /^\{"type":"ADDED","object":\{"kind":"ServiceAccount".*"resourceVersion":"2"/);
    assert.match(String(json[0].writes[1][0]), /^\{"type":"MODIFIED"/);
    const frame = proto[0].writes[1][0] as Uint8Array;
    assert.equal(new DataView(frame.buffer, frame.byteOffset).getUint32(0), frame.length - 4, 'length-prefixed');
    assert.equal(Buffer.from(frame.subarray(6, 14)).toString(), 'MODIFIED');
  });

  it('delivers protobuf batches in commit order even when the pool finishes out of order', async () => {
    const readModel = new ReadModel({ revision: 1, compactRevision: 0, items: [] });
    let first = true;
    // the first batch takes longer than the second
    const pool = countingPool(async () => { if (first) { first = false; await new Promise((r) => setTimeout(r, 50)); } });
    const hub = new WatchHub(readModel, new ChangeLog(1, 60_000), pool as unknown as EncoderPool, { maxBufferedBytes: 1 << 20, bookmarkIntervalMs: 60_000 });
    const sink = recordingSink();
    hub.add(spec('protobuf'), sink);
    readModel.apply([{ revision: 2, type: 'ADDED', key: 'serviceaccounts/ns/first', value: sa('first') }]);
    // the hub's round was queued with setImmediate by apply: this one runs after it, so the second
    // change cannot join the first batch (a timer could fire first after a busy loop turn)
    await new Promise((r) => setImmediate(r));
    readModel.apply([{ revision: 3, type: 'ADDED', key: 'serviceaccounts/ns/second', value: sa('second') }]);
    await hub.closeAll();
    // the frames as written (adjacent ones may share a write), split at their length prefixes
    const bytes = Buffer.concat(sink.writes.flat().map((f) => Buffer.from(f)));
    const names: string[] = [];
    for (let at = 0; at < bytes.length; at += 4 + bytes.readUInt32BE(at)) names.push(bytes.subarray(at, at + 4 + bytes.readUInt32BE(at)).includes('first') ? 'first' : 'second');
    assert.deepEqual(names, ['first', 'second']);
  });

  it('coalesces changes committed while a round is busy into one write per stream', async () => {
    const readModel = new ReadModel({ revision: 1, compactRevision: 0, items: [] });
    const hub = new WatchHub(readModel, new ChangeLog(1, 60_000), countingPool() as unknown as EncoderPool, { maxBufferedBytes: 1 << 20, bookmarkIntervalMs: 60_000 });
    const sink = recordingSink();
    hub.add(spec('json'), sink);
    for (let i = 0; i < 20; i++) readModel.apply([{ revision: 2 + i, type: 'ADDED', key: `serviceaccounts/ns/s${i}`, value: sa(`s${i}`) }]);
    const lineCount = () => sink.writes.flat().reduce((n, f) => n + String(f).split('\n').filter(Boolean).length, 0);
    await until(() => lineCount() === 20, 'twenty events');
    assert.equal(sink.writes.length, 1, 'twenty commits in one tick, one write');
    assert.equal(sink.writes[0].length, 1, 'of one view over the slab');
    const lines = String(sink.writes[0][0]).split('\n').filter(Boolean);
    assert.equal(lines.length, 20);
    const revisions = lines.map((l) => Number(JSON.parse(l).object.metadata.resourceVersion));
    assert.deepEqual(revisions, Array.from({ length: 20 }, (_, i) => 2 + i), 'in commit order');
  });

  it('queues a bookmark behind undelivered changes, carrying the revision they complete', async () => {
    const readModel = new ReadModel({ revision: 1, compactRevision: 0, items: [] });
    const hub = new WatchHub(readModel, new ChangeLog(1, 60_000), countingPool() as unknown as EncoderPool, { maxBufferedBytes: 1 << 20, bookmarkIntervalMs: 60_000 });
    const sink = recordingSink();
    const w = hub.add({ ...spec('json'), bookmarks: true }, sink);
    readModel.apply([{ revision: 2, type: 'ADDED', key: 'serviceaccounts/ns/a', value: sa('a') }]);
    hub.inOrder((revision) => w.sendBookmark(revision));
    assert.equal(sink.writes.length, 0, 'nothing before the round');
    await until(() => sink.writes.flat().length === 2, 'the event and the bookmark');
    const types = sink.writes.flat().map((f) => JSON.parse(f as string));
    assert.deepEqual(types.map((e) => e.type), ['ADDED', 'BOOKMARK']);
    assert.equal(types[1].object.metadata.resourceVersion, '2');
  });

  it('sends DELETED with the previous content when an object stops matching, ADDED when it starts', async () => {
    const readModel = new ReadModel({ revision: 1, compactRevision: 0, items: [] });
    const hub = new WatchHub(readModel, new ChangeLog(1, 60_000), countingPool() as unknown as EncoderPool, { maxBufferedBytes: 1 << 20, bookmarkIntervalMs: 60_000 });
    const sink = recordingSink();
    hub.add(spec('json', (o) => o.metadata.labels?.app === 'web', true), sink);
    readModel.apply([{ revision: 2, type: 'ADDED', key: 'serviceaccounts/ns/a', value: sa('a', { app: 'db' }) }]);
    readModel.apply([{ revision: 3, type: 'MODIFIED', key: 'serviceaccounts/ns/a', value: sa('a', { app: 'web' }) }]);
    readModel.apply([{ revision: 4, type: 'MODIFIED', key: 'serviceaccounts/ns/a', value: sa('a', { app: 'api' }) }]);
    await until(() => sink.writes.flat().join('').split('\n').filter(Boolean).length >= 2, 'two events');
    const events = sink.writes.flat().map((f) => JSON.parse(f as string));
    assert.deepEqual(events.map((e) => e.type), ['ADDED', 'DELETED']);
    assert.equal(events[1].object.metadata.labels.app, 'web', 'the content it last matched with');
    assert.equal(events[1].object.metadata.resourceVersion, '4', 'at the revision of the change');
  });

  it('cuts a stream whose client stops reading, dropping its backlog, instead of buffering without bound', async () => {
    const readModel = new ReadModel({ revision: 1, compactRevision: 0, items: [] });
    const hub = new WatchHub(readModel, new ChangeLog(1, 60_000), countingPool() as unknown as EncoderPool, { maxBufferedBytes: 1000, bookmarkIntervalMs: 60_000 });
    const slow = recordingSink();
    slow.bufferedBytes = () => 5000; // its client has not read 5000 bytes
    const fast = recordingSink();
    hub.add(spec('json'), slow);
    hub.add(spec('json'), fast);
    readModel.apply([{ revision: 2, type: 'ADDED', key: 'serviceaccounts/ns/a', value: sa('a') }]);
    await until(() => fast.writes.length === 1, 'the fast stream\'s event');
    assert.equal(slow.aborted, true, 'cut at once');
    assert.equal(slow.ended, false, 'not ended gracefully: that would flush its backlog first');
    assert.equal(slow.writes.length, 0);
    assert.equal(fast.writes.length, 1);
    assert.equal(fast.aborted, false);
    assert.equal(hub.counters.endedSlow, 1);
    assert.equal(hub.watchers().get('serviceaccounts'), 1);
  });
  it('gives watchers that select nothing one shared write per round, each from its own start and namespace', async () => {
    const readModel = new ReadModel({ revision: 1, compactRevision: 0, items: [] });
    const hub = new WatchHub(readModel, new ChangeLog(1, 60_000), countingPool() as unknown as EncoderPool, { maxBufferedBytes: 1 << 20, bookmarkIntervalMs: 60_000 });
    const all = Array.from({ length: 20 }, () => recordingSink());
    for (const s of all) hub.add(spec('json'), s);
    const inNs = recordingSink();
    hub.add({ ...spec('json'), pathPrefix: 'ns/' }, inNs);
    const inOther = recordingSink();
    hub.add({ ...spec('json'), pathPrefix: 'other/' }, inOther);
    // a watch that started at revision 3 (its catch-up covered 2 and 3), registered before either was offered
    const late = recordingSink();
    hub.add({ ...spec('json'), startRevision: 3 }, late);
    readModel.apply([
      { revision: 2, type: 'ADDED', key: 'serviceaccounts/ns/a', value: sa('a') },
      { revision: 3, type: 'ADDED', key: 'serviceaccounts/ns/b', value: sa('b') },
      { revision: 4, type: 'DELETED', key: 'serviceaccounts/ns/a', value: sa('a') },
    ]);
    await hub.closeAll();
    const events = (s: ReturnType<typeof recordingSink>) => s.writes.flat().join('').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    for (const s of [...all, inNs]) {
      assert.equal(s.writes.length, 1, 'one write for the round');
      assert.deepEqual(events(s).map((e) => `${e.type} ${e.object.metadata.name} ${e.object.metadata.resourceVersion}`), ['ADDED a 2', 'ADDED b 3', 'DELETED a 4']);
    }
    assert.ok(all.every((s) => s.writes[0] === all[0].writes[0]), 'the very same merged frames for every member');
    assert.equal(inOther.writes.length, 0, 'nothing of another namespace');
    assert.deepEqual(events(late).map((e) => `${e.type} ${e.object.metadata.name}`), ['DELETED a'], 'only what came after its start');
  });

  it('joins a round\'s frames into one for streams that take them merged, and keeps one event per frame for those that do not', async () => {
    const readModel = new ReadModel({ revision: 1, compactRevision: 0, items: [] });
    let first = true;
    // the first batch is encoded slowly: the second lands elsewhere in the slab, so the frames are not adjacent
    const pool = countingPool(async () => { if (first) { first = false; await new Promise((r) => setTimeout(r, 30)); } });
    const hub = new WatchHub(readModel, new ChangeLog(1, 60_000), pool as unknown as EncoderPool, { maxBufferedBytes: 1 << 20, bookmarkIntervalMs: 60_000 });
    const merged = [recordingSink(), recordingSink()];
    const apart = { ...recordingSink(), eventPerFrame: true };
    apart.write = (frames) => { apart.writes.push(frames); };
    const selectingApart = { ...recordingSink(), eventPerFrame: true };
    selectingApart.write = (frames) => { selectingApart.writes.push(frames); };
    for (const s of merged) hub.add(spec('protobuf'), s);
    hub.add(spec('protobuf'), apart);
    hub.add(spec('protobuf', (o) => o.metadata.name !== 'x', true), selectingApart);
    // three rounds before the first write: the group gives them in one write
    readModel.apply([{ revision: 2, type: 'ADDED', key: 'serviceaccounts/ns/a', value: sa('a') }]);
    await new Promise((r) => setImmediate(r));
    readModel.apply([{ revision: 3, type: 'ADDED', key: 'serviceaccounts/ns/b', value: sa('b') }, { revision: 4, type: 'ADDED', key: 'serviceaccounts/ns/c', value: sa('c') }]);
    await hub.closeAll();
    /** the length-prefixed frames a written frame holds */
    const events = (f: Frame) => { const b = Buffer.from(f as Uint8Array); let n = 0; for (let at = 0; at < b.length; at += 4 + b.readUInt32BE(at)) n++; return n; };
    for (const s of merged) {
      assert.equal(s.writes.length, 1, 'one write');
      assert.deepEqual(s.writes[0].map(events), [3], 'of one frame holding the three events');
    }
    assert.equal(merged[0].writes[0], merged[1].writes[0], 'the same joined frame for both');
    for (const s of [apart, selectingApart]) assert.deepEqual(s.writes.flat().map(events), [1, 1, 1], 'one event per frame');
  });

  it('delivers every change once and in order to a group whose pass spans slices while changes keep coming', async () => {
    const readModel = new ReadModel({ revision: 1, compactRevision: 0, items: [] });
    const hub = new WatchHub(readModel, new ChangeLog(1, 60_000), countingPool() as unknown as EncoderPool, { maxBufferedBytes: 1 << 20, bookmarkIntervalMs: 60_000 });
    // each write takes 20 µs: a pass over 300 members is several slices long
    const sinks = Array.from({ length: 300 }, () => {
      const s = recordingSink();
      s.write = (frames) => { s.writes.push(frames); const until = performance.now() + 0.02; while (performance.now() < until); };
      return s;
    });
    const watchers = sinks.map((s) => hub.add(spec('json'), s));
    for (let i = 0; i < 30; i++) {
      readModel.apply([{ revision: 2 + i, type: 'ADDED', key: `serviceaccounts/ns/s${i}`, value: sa(`s${i}`) }]);
      // a member leaves mid-way (its watch ends), another joins from here on
      if (i === 10) {
        watchers[150].close();
        const joined = recordingSink();
        hub.add({ ...spec('json'), startRevision: 2 + i }, joined);
        sinks.push(joined);
      }
      await new Promise((r) => setImmediate(r));
    }
    let delivered = false;
    hub.inOrder(() => { delivered = true; });
    await until(() => delivered, 'every change');
    const names = (s: ReturnType<typeof recordingSink>) => s.writes.flat().join('').split('\n').filter(Boolean).map((l) => JSON.parse(l).object.metadata.name);
    const every = Array.from({ length: 30 }, (_, i) => `s${i}`);
    for (const s of sinks.slice(0, 300)) if (s !== sinks[150]) assert.deepEqual(names(s), every, 'each change once, in commit order');
    assert.ok(sinks[150].ended, 'the member that left was ended');
    assert.deepEqual(names(sinks[150]), every.slice(0, names(sinks[150]).length), 'and got a prefix, nothing after it left');
    assert.ok(names(sinks[150]).length <= 11);
    assert.deepEqual(names(sinks[300]), every.slice(11), 'the member that joined: the changes after its start');
    assert.ok(sinks[0].writes.length < 30, `changes that came during a pass joined its writes (${sinks[0].writes.length} writes)`);
    assert.equal(hub.watchers().get('serviceaccounts'), 300);
    await hub.closeAll();
  });

  it('encodes a PartialObjectMetadata view in the pool, once per event for all its watchers, beside plain protobuf', async () => {
    const readModel = new ReadModel({ revision: 1, compactRevision: 0, items: [] });
    const pool = countingPool();
    const hub = new WatchHub(readModel, new ChangeLog(1, 60_000), pool as unknown as EncoderPool, { maxBufferedBytes: 1 << 20, bookmarkIntervalMs: 60_000 });
    const partial = viewSpec('protobuf', { as: 'PartialObjectMetadata', gv: { group: 'meta.k8s.io', version: 'v1' } });
    const views = Array.from({ length: 3 }, () => recordingSink());
    for (const s of views) hub.add(partial, s);
    const plain = recordingSink();
    hub.add(spec('protobuf'), plain);
    readModel.apply([{ revision: 2, type: 'ADDED', key: 'serviceaccounts/ns/a', value: sa('a') }]);
    await hub.closeAll();
    assert.equal(pool.objects, 1, 'one task, one change, both shapes');
    assert.equal(pool.calls, 1);
    const frame = views[0].writes[0][0] as Uint8Array;
    assert.ok(views.every((s) => s.writes[0][0] === frame), 'one shared frame');
    assert.ok(Buffer.from(frame).includes('PartialObjectMetadata'));
    assert.ok(!Buffer.from(plain.writes[0][0] as Uint8Array).includes('PartialObjectMetadata'));
  });

  it('builds catch-up frames of a PartialObjectMetadata view once per object version, Table frames per watcher', () => {
    const readModel = new ReadModel({ revision: 1, compactRevision: 0, items: [] });
    const hub = new WatchHub(readModel, new ChangeLog(1, 60_000), countingPool() as unknown as EncoderPool, { maxBufferedBytes: 1 << 20, bookmarkIntervalMs: 60_000 });
    const stored = new StoredObject(JSON.parse(sa('a')), 2);
    const partial = viewSpec('json', { as: 'PartialObjectMetadata', gv: { group: 'meta.k8s.io', version: 'v1' } });
    const first = hub.catchUpFrame('ADDED', stored, partial);
    assert.equal(hub.catchUpFrame('ADDED', stored, partial), first);
    assert.equal(JSON.parse(first as string).object.kind, 'PartialObjectMetadata');
    const table = viewSpec('json', { as: 'Table', table: { group: 'meta.k8s.io', version: 'v1', includeObject: 'None' } });
    assert.equal(JSON.parse(hub.catchUpFrame('ADDED', stored, table) as string).object.kind, 'Table');
  });

  it('encodes catch-up frames in the pool once per object version and shape, shared by watchers starting together', async () => {
    const readModel = new ReadModel({ revision: 1, compactRevision: 0, items: [] });
    const pool = countingPool();
    const hub = new WatchHub(readModel, new ChangeLog(1, 60_000), pool as unknown as EncoderPool, { maxBufferedBytes: 1 << 20, bookmarkIntervalMs: 60_000 });
    const objects = ['a', 'b', 'c'].map((n, i) => new StoredObject(JSON.parse(sa(n)), 2 + i));
    const items = objects.map((stored) => ({ type: 'ADDED' as const, stored }));
    const holder = { cut: () => assert.fail('not cut'), slabPins: new SlabPins() };
    const [first, second] = await Promise.all([hub.catchUpPooled(items, spec('protobuf'), holder), hub.catchUpPooled(items, spec('protobuf'), holder)]);
    assert.equal(pool.calls, 1, 'the second watcher waited for the first one\'s encoding');
    assert.equal(pool.objects, 3);
    first.forEach((f, i) => assert.equal(second[i], f, 'the same bytes, shared'));
    const third = await hub.catchUpPooled(items, spec('protobuf'), holder);
    assert.equal(pool.calls, 1, 'kept for watchers that start later');
    assert.deepEqual(third.map((f) => Buffer.from(f)), objects.map((o) => Buffer.from(hub.catchUpFrame('ADDED', o, { ...spec('protobuf'), shape: undefined }) as Uint8Array)),
      'the bytes the front thread would have written');
    await hub.closeAll();
  });

  it('never sends a bookmark older than the watch\'s start (a watch from a future version)', async () => {
    const readModel = new ReadModel({ revision: 1, compactRevision: 0, items: [] });
    const hub = new WatchHub(readModel, new ChangeLog(1, 60_000), countingPool() as unknown as EncoderPool, { maxBufferedBytes: 1 << 20, bookmarkIntervalMs: 60_000 });
    const sink = recordingSink();
    const w = hub.add({ ...spec('json'), bookmarks: true, startRevision: 100 }, sink);
    w.sendBookmark(5);
    assert.equal(sink.writes.length, 0);
    w.sendBookmark(100);
    assert.equal(JSON.parse(sink.writes[0][0] as string).object.metadata.resourceVersion, '100');
    await hub.closeAll();
  });
});

describe('WatchHub fan-out, property', () => {
  /** One step of a scenario: a commit (objects, in or out of the watched namespace), a watch starting or ending, or a loop turn. */
  type Step = { op: 'commit'; names: string[]; ns: 'ns' | 'other' } | { op: 'start'; encoding: 'json' | 'protobuf'; inNs: boolean; selects: boolean } | { op: 'stop'; which: number } | { op: 'turn' };
  const step: fc.Arbitrary<Step> = fc.oneof(
    fc.record({ op: fc.constant('commit' as const), names: fc.array(fc.constantFrom('a', 'b', 'c', 'd'), { minLength: 1, maxLength: 3 }), ns: fc.constantFrom('ns' as const, 'other' as const) }),
    fc.record({ op: fc.constant('start' as const), encoding: fc.constantFrom('json' as const, 'protobuf' as const), inNs: fc.boolean(), selects: fc.boolean() }),
    fc.record({ op: fc.constant('stop' as const), which: fc.nat(20) }),
    fc.constant({ op: 'turn' as const }),
  );

  it('gives every watcher each change after its start that it selects, once and in commit order, however starts, stops and commits interleave', async () => {
    await fc.assert(fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 30 }), async (steps) => {
      const readModel = new ReadModel({ revision: 1, compactRevision: 0, items: [] });
      const hub = new WatchHub(readModel, new ChangeLog(1, 60_000), countingPool() as unknown as EncoderPool, { maxBufferedBytes: 1 << 30, bookmarkIntervalMs: 60_000 });
      const live = new Set<string>();
      const commits: Array<{ revision: number; type: string; key: string }> = [];
      const watches: Array<{ w: ReturnType<WatchHub['add']>; sink: ReturnType<typeof recordingSink>; start: number; prefix?: string; selects: boolean; stoppedAt?: number; encoding: 'json' | 'protobuf' }> = [];
      let revision = 1;
      for (const s of steps) {
        if (s.op === 'commit') {
          const events = s.names.map((name) => {
            const key = `${s.ns}/${name}`;
            const type = live.has(key) ? (revision % 3 === 0 ? 'DELETED' : 'MODIFIED') : 'ADDED';
            if (type === 'DELETED') live.delete(key); else live.add(key);
            commits.push({ revision: ++revision, type, key });
            return { revision, type, key: `serviceaccounts/${key}`, value: JSON.stringify({ kind: 'ServiceAccount', apiVersion: 'v1', metadata: { name, namespace: s.ns, resourceVersion: '' } }) } as const;
          });
          readModel.apply(events);
        } else if (s.op === 'start') {
          const sink = recordingSink();
          const prefix = s.inNs ? 'ns/' : undefined;
          // a selecting watch takes objects whose name is not "b"
          const matches = (o: Readonly<KObject>) => (!prefix || o.metadata.namespace === 'ns') && (!s.selects || o.metadata.name !== 'b');
          const w = hub.add({ ...spec(s.encoding, matches, s.selects), pathPrefix: prefix, startRevision: revision }, sink);
          watches.push({ w, sink, start: revision, prefix, selects: s.selects, encoding: s.encoding });
        } else if (s.op === 'stop') {
          const x = watches.filter((x) => x.stoppedAt === undefined)[s.which];
          if (x) { x.stoppedAt = revision; x.w.close(); }
        } else {
          await new Promise((r) => setImmediate(r));
        }
      }
      let delivered = false;
      hub.inOrder(() => { delivered = true; });
      for (let i = 0; i < 200 && !delivered; i++) await new Promise((r) => setImmediate(r));
      assert.ok(delivered);
      for (const x of watches) {
        const got = x.sink.writes.flat().flatMap((f) => eventsOf(f, x.encoding));
        const expected = commits.filter((c) => c.revision > x.start && (!x.prefix || c.key.startsWith(x.prefix)))
          .filter((c) => !x.selects || !c.key.endsWith('/b'))
          .map((c) => `${c.type} ${c.key} ${c.revision}`);
        if (x.stoppedAt === undefined) assert.deepEqual(got, expected, 'a watch still open got exactly its changes');
        else assert.deepEqual(got, expected.slice(0, got.length), 'a watch that ended got a prefix of its changes');
      }
      await hub.closeAll();
    }), { numRuns: 60 });
  });
});

/** The events a written frame holds, as "TYPE namespace/name revision". */
function eventsOf(frame: Frame, encoding: 'json' | 'protobuf'): string[] {
  if (encoding === 'json') {
    return String(typeof frame === 'string' ? frame : Buffer.from(frame)).split('\n').filter(Boolean).map((line) => {
      const e = JSON.parse(line) as { type: string; object: KObject };
      return `${e.type} ${e.object.metadata.namespace}/${e.object.metadata.name} ${e.object.metadata.resourceVersion}`;
    });
  }
  const bytes = Buffer.from(frame as Uint8Array);
  const out: string[] = [];
  for (let at = 0; at < bytes.length; at += 4 + bytes.readUInt32BE(at)) {
    const event = runtimeTypes().WatchEvent.decode(bytes.subarray(at + 4, at + 4 + bytes.readUInt32BE(at))) as unknown as { type: string; object: { raw: Uint8Array } };
    const { object } = decodeEnvelope(event.object.raw, serviceAccountKind.schema as Parameters<typeof decodeEnvelope>[1]);
    const metadata = object.metadata as KObject['metadata'];
    out.push(`${event.type} ${metadata.namespace}/${metadata.name} ${metadata.resourceVersion}`);
  }
  return out;
}

describe('ChangeLog', () => {
  it('ages changes out on its own timer: a quiet log stops offering versions older than its window', async () => {
    const log = new ChangeLog(1, 20);
    const object = new StoredObject(JSON.parse(sa('a')), 2);
    log.append([{ type: 'ADDED', revision: 2, resource: 'serviceaccounts', path: 'ns/a', object }], Date.now());
    assert.equal(log.since(1, 'serviceaccounts')?.length, 1);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(log.since(1, 'serviceaccounts'), undefined, 'no write came, yet the change is gone');
    assert.deepEqual(log.since(2, 'serviceaccounts'), [], 'the latest version is still a valid start');
    log.close();
  });

  it('keeps the versions its changes superseded as JSON only once past the parsed window; a catch-up reads them back whole', () => {
    const log = new ChangeLog(1, 60_000, 100_000, 1_000);
    const a2 = new StoredObject(JSON.parse(sa('a', { v: '1' })), 2);
    const a3 = new StoredObject(JSON.parse(sa('a', { v: '2' })), 3);
    const b4 = new StoredObject(JSON.parse(sa('b')), 4);
    const b5 = new StoredObject(JSON.parse(sa('b')), 5);
    const before = [a2, b4, b5].map((o) => ({ object: structuredClone(o.object), json: o.json }));
    const t = 1_000_000;
    log.append([
      { type: 'ADDED', revision: 2, resource: 'serviceaccounts', path: 'ns/a', object: a2 },
      { type: 'MODIFIED', revision: 3, resource: 'serviceaccounts', path: 'ns/a', object: a3, previous: a2 },
      { type: 'ADDED', revision: 4, resource: 'serviceaccounts', path: 'ns/b', object: b4 },
      { type: 'DELETED', revision: 5, resource: 'serviceaccounts', path: 'ns/b', object: b5, previous: b4 },
    ], t);
    log.append([], t + 999);
    assert.deepEqual([a2, a3, b4, b5].map((o) => o.isParsed), [true, true, true, true], 'within the window every version stays parsed');
    log.append([], t + 1_000);
    assert.deepEqual([a2, a3, b4, b5].map((o) => o.isParsed), [false, true, false, false], 'superseded and deleted versions keep JSON only; the current version stays parsed');
    const replayed = log.since(1, 'serviceaccounts') ?? [];
    assert.deepEqual(replayed.map((c) => c.previous?.object.metadata.labels ?? null), [null, { v: '1' }, null, null]);
    assert.deepEqual([a2, b4, b5].map((o) => ({ object: o.object, json: o.json })), before, 'read again, each version is what was stored');
    log.close();
  });
});
