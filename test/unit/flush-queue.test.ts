import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FlushQueue } from '../../src/watch/flush-queue.js';
import type { Watcher } from '../../src/watch/watcher.js';

/** A stand-in for a watcher: the queue reads and writes only its `queued` flag. */
const stream = (name: string) => ({ name, queued: false }) as unknown as Watcher & { name: string };
const turn = () => new Promise((r) => setImmediate(r));

describe('FlushQueue', () => {
  it('writes each waiting stream once however many deliveries reached it, in the order they first did', async () => {
    const written: string[] = [];
    const queue = new FlushQueue((w) => { written.push((w as Watcher & { name: string }).name); });
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
    const queue = new FlushQueue((w) => { order.push(`write ${(w as Watcher & { name: string }).name}`); });
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
    const queue = new FlushQueue(() => { const until = performance.now() + 0.05; while (performance.now() < until); writes++; });
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
    const queue = new FlushQueue((w) => {
      const name = (w as Watcher & { name: string }).name;
      written.push(name);
      // streams that get frames while the pass is under way queue behind it
      if (name === 's6000' && !added) { added = true; for (let i = 0; i < 100; i++) queue.add(stream(`late${i}`)); }
      const until = performance.now() + 0.002;
      while (performance.now() < until);
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
});
