import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { coreEventKind } from '../../src/api/core/event.js';
import { serviceAccountKind } from '../../src/api/core/service-account.js';
import { eventKind } from '../../src/api/events/event.js';
import type { KindDeclaration } from '../../src/api/kind.js';
import type { KObject } from '../../src/api/meta.js';
import { aliasOf } from '../../src/api/registry/alias.js';
import { StoredObject } from '../../src/store/read-model.js';
import { encodeBatch, poolEncodes } from '../../src/watch/encode-batch.js';
import { entryAt, indexBases, type EncodeTask, type FrameSlot } from '../../src/watch/encode-task.js';
import { coalesceFrames, inlineFrame } from '../../src/watch/frames.js';
import { shapeOf, watchEncoders, type WatchRepresentation } from '../../src/watch/shape.js';
import { SlabTable, SlabWriter } from '../../src/watch/slabs.js';

const representations: (WatchRepresentation | undefined)[] = [
  undefined,
  { as: 'PartialObjectMetadata', gv: { group: 'meta.k8s.io', version: 'v1' } },
  { as: 'Table', table: { group: 'meta.k8s.io', version: 'v1', includeObject: 'Metadata' } },
];

/** The served declarations to try: a storage version, an alias group, another version converted from storage. */
const served: Array<{ kind: KindDeclaration; converted: boolean; stored: KObject }> = [
  { kind: serviceAccountKind, converted: false, stored: { kind: 'ServiceAccount', apiVersion: 'v1', metadata: { name: 'sa', namespace: 'ns', resourceVersion: '7', labels: { app: 'web' } }, secrets: [{ name: 's' }] } },
  ...[aliasOf(eventKind, 'events.k8s.io'), coreEventKind].map((kind) => ({
    kind, converted: true,
    stored: { kind: 'Event', apiVersion: 'events.orch.io/v1', metadata: { name: 'e', namespace: 'ns', resourceVersion: '7' }, eventTime: '2026-11-25T20:00:00.000000Z', reportingController: 'c', reportingInstance: 'i', action: 'A', reason: 'R', regarding: { kind: 'Pod', name: 'p' }, type: 'Normal', note: 'n' } as KObject,
  })),
];

describe('the encoder pool\'s frames', () => {
  it('are the bytes the front thread\'s encoders write, for every encoding and view of built-in kinds', () => {
    let compared = 0;
    for (const { kind, converted, stored } of served) {
      const version = converted ? { object: (o: Readonly<KObject>) => (kind.conversion as NonNullable<KindDeclaration['conversion']>).fromStorage(o as KObject) } : undefined;
      for (const encoding of ['json', 'protobuf', 'cbor'] as const) {
        for (const representation of representations) {
          if (representation?.as === 'Table' && encoding !== 'json') continue; // Tables are served in JSON (and YAML)
          const shape = shapeOf(kind, encoding, representation, converted);
          assert.ok(poolEncodes(shape), `${shape.key} of ${kind.group}/${kind.kind} is the pool's to encode`);
          const previous = { ...stored, metadata: { ...stored.metadata, resourceVersion: '6' } };
          const task: EncodeTask = {
            changes: [{ resource: 'r', type: 'MODIFIED', revision: 7, object: JSON.stringify(stored), previous: JSON.stringify(previous) }],
            tables: { r: { shapes: [shape], filtered: true } },
          };
          const result = encodeBatch(task, new SlabWriter(1 << 16));
          const slabs = new SlabTable(1 << 30);
          slabs.learn(result.slabs.created);
          const front = watchEncoders(kind, encoding, representation, version);
          const left = new StoredObject({ ...previous, metadata: { ...previous.metadata, resourceVersion: '7' } }, 7);
          for (const slot of ['MODIFIED', 'ADDED', 'LEFT'] as FrameSlot[]) {
            const at = entryAt(0, 0, slot);
            const pooled = slabs.frame(result.index[at], result.index[at + 1], result.index[at + 2]);
            const expected = inlineFrame(front, slot === 'LEFT' ? 'DELETED' : slot, slot === 'LEFT' ? left : new StoredObject(stored, 7));
            if (representation?.as === 'Table') {
              // a Table row's age is the time of encoding: compare everything else
              const strip = (t: string) => t.replace(/"cells":\[[^\]]*\]/, '');
              assert.equal(strip(pooled.toString()), strip(String(expected)), `${shape.key} ${slot}`);
            } else {
              assert.deepEqual(pooled, Buffer.from(expected), `${shape.key} ${slot} of ${kind.group}/${kind.kind}`);
            }
            compared++;
          }
        }
      }
    }
    assert.equal(compared, 3 * 7 * 3);
  });

  it('leaves a view of a kind the workers do not hold to the front thread', () => {
    const runtimeKind = { ...serviceAccountKind, group: 'example.com', resource: 'widgets', kind: 'Widget' };
    assert.equal(poolEncodes(shapeOf(runtimeKind, 'json', undefined, false)), true, 'plain: the task carries its schema');
    assert.equal(poolEncodes(shapeOf(runtimeKind, 'json', representations[2], false)), false);
  });

  it('lays one shape\'s frames of a batch side by side, each change\'s own event first, so a watcher without selectors gets them in one write', () => {
    const objects = [1, 2, 3].map((n) => ({ kind: 'ServiceAccount', apiVersion: 'v1', metadata: { name: `sa-${n}`, namespace: 'ns', resourceVersion: String(10 + n) } }));
    const shapes = (['json', 'protobuf'] as const).map((encoding) => shapeOf(serviceAccountKind, encoding, undefined, false));
    const task: EncodeTask = {
      changes: objects.map((o, i) => ({ resource: 'r', type: i === 1 ? 'MODIFIED' : 'ADDED', revision: 11 + i, object: JSON.stringify(o), previous: i === 1 ? JSON.stringify(o) : undefined })),
      tables: { r: { shapes, filtered: true } },
    };
    const result = encodeBatch(task, new SlabWriter(1 << 16));
    const slabs = new SlabTable(1 << 30);
    slabs.learn(result.slabs.created);
    const bases = indexBases(task);
    shapes.forEach((shape, s) => {
      const own = task.changes.map((c, i) => {
        const at = entryAt(bases[i], s, c.type as FrameSlot);
        return slabs.frame(result.index[at], result.index[at + 1], result.index[at + 2]);
      });
      const merged = coalesceFrames(own);
      assert.equal(merged.length, 1, `${shape.key}: the three events are one run`);
      assert.deepEqual(Buffer.from(merged[0] as Uint8Array), Buffer.concat(own), `${shape.key}: the run is the events in order`);
      assert.equal((merged[0] as Uint8Array).buffer, own[0].buffer, 'a view of the slab, not a copy');
    });
  });

  it('merges only byte frames that are adjacent in one buffer', () => {
    const slab = Buffer.from('aaabbbcccddd');
    const other = Buffer.from('eee');
    const a = slab.subarray(0, 3), b = slab.subarray(3, 6), c = slab.subarray(6, 9), d = slab.subarray(9, 12);
    assert.deepEqual(coalesceFrames([a, b]).map(String), ['aaabbb']);
    assert.deepEqual(coalesceFrames([a, c, d]).map(String), ['aaa', 'cccddd'], 'a gap ends a run');
    assert.deepEqual(coalesceFrames([a, b, 'x\n', c, other, d]).map(String), ['aaabbb', 'x\n', 'ccc', 'eee', 'ddd'], 'strings and other buffers stay as they are');
    assert.deepEqual(coalesceFrames([b, a]).map(String), ['bbb', 'aaa'], 'out of order is not adjacent');
    const single = [a];
    const out = coalesceFrames(single);
    assert.notEqual(out, single, 'a new array: the caller reuses its own');
    assert.deepEqual(out, single);
    assert.deepEqual(coalesceFrames([a, b, c], 2).map(String), ['aaabbb'], 'only the first `count` frames');
  });
});
