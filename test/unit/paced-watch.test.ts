import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PacedWatch, type PacedSink } from '../../src/http/paced-watch.js';
import type { Frame } from '../../src/watch/frames.js';

/** A sink whose socket has room only when the test opens it. */
function pacedSink() {
  let open = true;
  let grant: ((open: boolean) => void) | undefined;
  const s = {
    writes: [] as Array<readonly Frame[]>,
    held: 0,
    aborted: false,
    /** the socket stops taking writes */
    lag: () => { open = false; },
    /** the socket takes everything and has room again */
    catchUp: () => { open = true; const g = grant; grant = undefined; g?.(true); },
    sink: {
      batchBytes: 10,
      hasRoom: () => open,
      room: () => new Promise<boolean>((resolve) => { grant = resolve; }),
      hold: (bytes: number) => { s.held += bytes; },
      write: (frames: readonly Frame[]) => { s.writes.push(frames); },
      bufferedBytes: () => 0,
      end: () => {},
      abort: () => { s.aborted = true; },
    } satisfies PacedSink,
  };
  return s;
}

const settle = () => new Promise((r) => setImmediate(r));

describe('PacedWatch', () => {
  it('builds the catch-up only as the socket has room, live batches following it in order', async () => {
    const s = pacedSink();
    let built = 0;
    function* frames(): Generator<Frame> { for (let i = 0; i < 10; i++) { built++; yield `c${i}-xxx`; } }
    const w = new PacedWatch(s.sink, frames());
    s.lag();
    w.start();
    w.write(['live-1']);
    assert.equal(built, 0, 'nothing built while the socket has no room');
    assert.equal(s.held, 6, 'the live batch waits, counted as unsent');
    assert.equal(w.bufferedBytes(), 6);
    s.catchUp();
    await settle();
    assert.equal(built, 10);
    assert.deepEqual(s.writes.flat(), [...Array.from({ length: 10 }, (_, i) => `c${i}-xxx`), 'live-1']);
    assert.equal(s.held, 0);
    w.write(['live-2']);
    assert.deepEqual(s.writes.at(-1), ['live-2'], 'with room, a live batch goes out at once');
  });

  it('queues live batches while the socket lags, then feeds them merged a batch at a time', async () => {
    const s = pacedSink();
    const w = new PacedWatch(s.sink, []);
    w.start();
    w.write(['a']);
    assert.deepEqual(s.writes, [['a']]);
    s.lag();
    for (const f of ['bbbb', 'cccc', 'dddd', 'eeee']) w.write([f]);
    assert.equal(s.writes.length, 1);
    assert.equal(w.bufferedBytes(), 16);
    s.catchUp();
    await settle();
    assert.deepEqual(s.writes.slice(1), [['bbbb', 'cccc', 'dddd'], ['eeee']], 'merged up to a batch (10 bytes)');
    assert.equal(s.held, 0);
  });

  it('drops what it holds when the watch is cut', async () => {
    const s = pacedSink();
    let built = 0;
    function* frames(): Generator<Frame> { for (let i = 0; i < 100; i++) { built++; yield `c${i}-xxx`; } }
    const w = new PacedWatch(s.sink, frames());
    s.lag();
    w.start();
    w.write(['live-1']);
    w.abort();
    await settle();
    assert.equal(s.aborted, true);
    assert.equal(built, 0);
    assert.equal(s.held, 0);
    assert.deepEqual(s.writes, []);
  });
});
