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
});
