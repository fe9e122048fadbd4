/** The controllers' work queue: deduplication, one run per key at a time, retries, idleness. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RetryLater, WorkQueue } from '../../src/controllers/work-queue.js';

const tick = () => new Promise((r) => setImmediate(r));

describe('WorkQueue', () => {
  it('works a key added twice before it runs once, and never inside add', async () => {
    const runs: string[] = [];
    const q = new WorkQueue(async (key) => { runs.push(key); }, { workers: 4, onError: assert.fail });
    q.add('a');
    q.add('a');
    q.add('b');
    assert.deepEqual(runs, [], 'nothing runs synchronously');
    await q.idle();
    assert.deepEqual(runs, ['a', 'b']);
  });

  it('never works one key twice at once; a key added while worked runs again after', async () => {
    let running = 0;
    let maxRunning = 0;
    let runs = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    const q = new WorkQueue(async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      runs++;
      if (runs === 1) await gate;
      running--;
    }, { workers: 4, onError: assert.fail });
    q.add('k');
    await tick();
    q.add('k');
    q.add('k');
    await tick();
    assert.equal(runs, 1, 'the second run waits for the first');
    release();
    await q.idle();
    assert.equal(runs, 2, 'added twice while worked: one more run');
    assert.equal(maxRunning, 1);
  });

  it('retries a failed key after a delay, reporting errors but not RetryLater', async () => {
    const errors: unknown[] = [];
    let attempts = 0;
    const q = new WorkQueue(async () => {
      attempts++;
      if (attempts === 1) throw new Error('boom');
      if (attempts === 2) throw new RetryLater('not yet');
    }, { workers: 1, onError: (err) => errors.push(err), baseDelayMs: 1 });
    q.add('k');
    await q.idle();
    assert.equal(attempts, 3);
    assert.deepEqual(errors.map((e) => (e as Error).message), ['boom']);
  });

  it('stops taking keys and drops pending retries', async () => {
    let attempts = 0;
    const q = new WorkQueue(async () => { attempts++; throw new RetryLater('again'); }, { workers: 1, onError: assert.fail, baseDelayMs: 1 });
    q.add('k');
    await tick();
    await tick();
    q.stop();
    const seen = attempts;
    q.add('k');
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(attempts, seen);
  });
});
