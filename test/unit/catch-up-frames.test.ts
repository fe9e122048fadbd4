import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StoredObject } from '../../src/store/read-model.js';
import { CatchUpFrames } from '../../src/watch/catch-up-frames.js';

const object = (name: string) => new StoredObject({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name } }, 2);

describe('CatchUpFrames', () => {
  it('builds a frame once per object version and key, as bytes shared by every caller', () => {
    const cache = new CatchUpFrames(1 << 20);
    const stored = object('a');
    let builds = 0;
    const build = () => { builds++; return '{"type":"ADDED"}\n'; };
    const first = cache.get(stored, 'json||ADDED', build);
    assert.ok(Buffer.isBuffer(first));
    assert.equal(cache.get(stored, 'json||ADDED', build), first);
    cache.get(stored, 'json||DELETED', build);
    cache.get(object('a'), 'json||ADDED', build); // another version: another entry
    assert.equal(builds, 3);
  });

  it('drops the oldest object versions past its bound in bytes', () => {
    const cache = new CatchUpFrames(100);
    const objects = Array.from({ length: 10 }, (_, i) => object(`o${i}`));
    for (const o of objects) cache.get(o, 'k', () => 'x'.repeat(30));
    assert.ok(cache.size.bytes <= 100);
    assert.equal(cache.size.objects, 3);
    let rebuilt = false;
    cache.get(objects[0], 'k', () => { rebuilt = true; return 'y'; });
    assert.ok(rebuilt, 'the oldest was dropped');
  });
});
