import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FREE, SlabPins, SlabTable, SlabWriter } from '../../src/watch/slabs.js';

/** Writes frames of `size` bytes until the writer moves to another slab; returns the frames' Buffers. */
function fill(writer: SlabWriter, table: SlabTable, size: number, count: number): Buffer[] {
  const frames: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const [slab, offset, length] = writer.put(Buffer.alloc(size, i & 0xff));
    const news = writer.takeNews();
    table.learn(news.created);
    frames.push(table.frame(slab, offset, length));
    table.seal(news.sealed);
  }
  return frames;
}

describe('shared slabs', () => {
  it('wraps frames as Buffers over the shared memory, without copying', () => {
    const writer = new SlabWriter(1024);
    const table = new SlabTable(1 << 20);
    const [frame] = fill(writer, table, 10, 1);
    assert.ok(frame.buffer instanceof SharedArrayBuffer);
    assert.deepEqual([...frame], Array(10).fill(0));
    const [slab, offset] = writer.put('{"type":"ADDED"}\n');
    assert.equal(table.frame(slab, offset, 17).toString(), '{"type":"ADDED"}\n');
  });

  it('reuses a sealed slab once no stream holds its frames, with a new generation', () => {
    const writer = new SlabWriter(256);
    const table = new SlabTable(1 << 20);
    const holder = { cut: () => assert.fail('not cut'), slabPins: new SlabPins() };
    const first = fill(writer, table, 100, 2); // both in slab 0
    table.retain(first, holder);
    fill(writer, table, 100, 4); // slab 0 sealed (held), slabs 1 and 2 used
    const slab0 = new Int32Array(first[0].buffer, 0, 2);
    assert.notEqual(Atomics.load(slab0, 0), FREE, 'held: not free');
    table.release(first, holder);
    assert.equal(Atomics.load(slab0, 0), FREE, 'free once released');
    const generation = Atomics.load(slab0, 1);
    const later = fill(writer, table, 100, 6);
    assert.ok(later.some((f) => f.buffer === first[0].buffer), 'slab 0 is written again');
    assert.ok(Atomics.load(slab0, 1) > generation, 'a new generation');
    assert.equal(table.stats().slabs, 3, 'no slab created while one was free');
  });

  it('cuts the streams pinning the oldest slab once pinned slabs pass the bound', () => {
    const writer = new SlabWriter(256);
    const table = new SlabTable(600);
    let cut = 0;
    const slow = { cut: () => { cut++; table.releaseAll(slow); }, slabPins: new SlabPins() };
    const frames = fill(writer, table, 200, 1);
    table.retain(frames, slow);
    for (let i = 0; i < 4; i++) table.retain(fill(writer, table, 200, 1), slow);
    assert.equal(cut, 1, 'cut once the pinned bytes passed 600');
    assert.ok(table.stats().pinnedBytes <= 600, 'what it held was freed');
    assert.equal(table.counters.cutHolders, 1);
  });

  it('lists a holder while it pins, and lets go of it once finished and released', () => {
    const writer = new SlabWriter(256);
    const table = new SlabTable(1 << 20);
    const stream = { cut: () => assert.fail('not cut'), slabPins: new SlabPins() };
    const frames = fill(writer, table, 100, 2);
    table.retain(frames.slice(0, 1), stream);
    table.retain(frames.slice(1), stream);
    assert.equal(stream.slabPins.countOf(stream.slabPins.slabs[0]), 2, 'two frames of one slab');
    table.release(frames.slice(0, 1), stream);
    table.release(frames.slice(1), stream);
    assert.equal(table.stats().holders, 1, 'a live stream stays listed between writes');
    table.retain(frames, stream);
    table.finish(stream);
    assert.equal(table.stats().holders, 1, 'finished, but a write still holds frames');
    table.release(frames, stream);
    assert.equal(table.stats().holders, 0, 'gone once its last write was taken');
    table.release(frames, stream); // a late callback changes nothing
    assert.equal(table.stats().holders, 0);
    fill(writer, table, 100, 4);
    assert.equal(table.counters.freed > 0, true, 'its slab was freed');
  });

  it('never frees a slab while a result is being delivered (pinned by id)', () => {
    const writer = new SlabWriter(256);
    const table = new SlabTable(1 << 20);
    const [slab, offset, length] = writer.put(Buffer.alloc(200, 1));
    table.learn(writer.takeNews().created);
    table.pin([slab]);
    writer.put(Buffer.alloc(200, 2)); // seals the slab
    table.seal(writer.takeNews().sealed);
    writer.put(Buffer.alloc(200, 3));
    table.seal(writer.takeNews().sealed);
    assert.deepEqual([...table.frame(slab, offset, length)], Array(200).fill(1), 'its bytes untouched');
    table.unpin([slab]);
    assert.equal(table.counters.freed, 1);
  });
});
