import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FlushQueue, writesPerSlice } from '../../src/watch/flush-queue.js';

/** A stand-in for a watcher: the queue reads and writes only its `queued` flag. */
interface Stream { name: string; queued: boolean }
const stream = (name: string): Stream => ({ name, queued: false });
const turn = () => new Promise((r) => setImmediate(r));

describe('FlushQueue', () => {
  it('writes each waiting stream once however many deliveries reached it, in the order they first did', async () => {
    const written: string[] = [];
    const queue = new FlushQueue<Stream>((w) => { written.push(w.name); return true; });
    const [a, b, c] = ['a', 'b', 'c'].map(stream);
    queue.add(a); queue.add(b); queue.add(a); queue.add(c); queue.add(b);
    assert.equal(queue.idle, false);
    await turn();
    assert.deepEqual(written, ['a', 'b', 'c']);
    assert.equal(queue.idle, true);
    queue.add(a);
    await turn();
    assert.deepEqual(written, ['a', 'b', 'c', 'a'], 'queued again once written');
  });

  it('runs whenFlushed callbacks once the streams queued before them are written, in order, and at once when idle', async () => {
    const order: string[] = [];
    const queue = new FlushQueue<Stream>((w) => { order.push(`write ${w.name}`); return true; });
    queue.whenFlushed(() => order.push('idle callback'));
    queue.add(stream('a'));
    queue.whenFlushed(() => order.push('after a'));
    queue.add(stream('b'));
    queue.whenFlushed(() => order.push('after b'));
    assert.deepEqual(order, ['idle callback']);
    await turn();
    assert.deepEqual(order, ['idle callback', 'write a', 'write b', 'after a', 'after b']);
  });

  it('serves the event loop between slices of a long pass', async () => {
    let writes = 0;
    // each write takes a while: a pass over 400 streams cannot fit one slice
    const queue = new FlushQueue<Stream>(() => { const until = performance.now() + 0.05; while (performance.now() < until); writes++; return true; });
    for (let i = 0; i < 400; i++) queue.add(stream(`s${i}`));
    let done = false;
    queue.whenFlushed(() => { done = true; });
    await turn();
    assert.ok(writes > 0 && writes < 400, `a slice wrote part of the pass (${writes})`);
    while (!done) await turn();
    assert.equal(writes, 400);
  });

  it('keeps the order through a long pass that moves its waiting part to the front, with streams joining during it', async () => {
    const written: string[] = [];
    let added = false;
    const queue = new FlushQueue<Stream>((w) => {
      const name = w.name;
      written.push(name);
      // streams that get frames while the pass is under way queue behind it
      if (name === 's6000' && !added) { added = true; for (let i = 0; i < 100; i++) queue.add(stream(`late${i}`)); }
      const until = performance.now() + 0.002;
      while (performance.now() < until);
      return true;
    });
    const streams = Array.from({ length: 10_000 }, (_, i) => stream(`s${i}`));
    for (const w of streams) queue.add(w);
    // the late streams are queued during the pass: wait for the queue to be idle, not for a callback registered before them
    for (let turns = 0; !queue.idle && turns < 100_000; turns++) await turn();
    assert.ok(queue.idle, 'every stream written');
    assert.deepEqual(written, [...streams.map((w) => w.name), ...Array.from({ length: 100 }, (_, i) => `late${i}`)]);
    queue.add(streams[0]);
    await turn();
    assert.equal(written.at(-1), 's0', 'written again once queued again');
  });

  it('resumes an entry whose time ran out first in line, counting it written once its pass is over', async () => {
    const log: string[] = [];
    let steps = 0;
    const group = stream('group');
    // a group of three members, one member per slice
    const queue = new FlushQueue<Stream>((w) => {
      if (w !== group) { log.push(w.name); return true; }
      log.push(`group ${++steps}`);
      if (steps === 1) queue.add(group); // given frames while its pass is under way: another turn, behind the others
      return steps >= 3;
    });
    queue.add(group);
    queue.add(stream('b'));
    queue.whenFlushed(() => log.push('flushed'));
    for (let turns = 0; !queue.idle && turns < 100; turns++) await turn();
    assert.deepEqual(log, ['group 1', 'group 2', 'group 3', 'b', 'group 4', 'flushed']);
    assert.equal(group.queued, false);
  });

  it('starts at most writesPerSlice writes a slice, however cheap they are to start (their cost comes after it)', async () => {
    const perTurn: number[] = [];
    let written = 0;
    let turnWrites = 0;
    const queue = new FlushQueue<Stream>((w, _runs, slice) => {
      written++;
      // a stream with nothing new starts no write and costs the slice nothing
      if (!w.name.startsWith('idle')) { slice.writes--; turnWrites++; }
      return true;
    });
    for (let i = 0; i < 100; i++) queue.add(stream(i % 5 === 0 ? `idle${i}` : `s${i}`));
    while (!queue.idle) {
      turnWrites = 0;
      await turn();
      perTurn.push(turnWrites);
    }
    assert.equal(written, 100);
    assert.equal(perTurn.reduce((a, b) => a + b, 0), 80);
    assert.equal(Math.max(...perTurn), writesPerSlice, `writes started per turn: ${perTurn.join(', ')}`);
  });
});
