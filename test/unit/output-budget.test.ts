import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { slices, writeBody, writeSizes } from '../../src/http/body-writer.js';
import { OutputBudget, SlotSet, type CutReason, type Outlet } from '../../src/http/output-budget.js';

interface FakeStream {
  outlet: Outlet;
  cut: boolean;
  send(bytes: number): boolean;
  /** the socket takes the oldest `n` writes (all by default) */
  take(n?: number): void;
}

/** A stream whose socket takes its writes only when the test says so. */
function fakeStream(budget: OutputBudget, connection: object): FakeStream {
  const callbacks: Array<() => void> = [];
  const s: FakeStream = {
    outlet: budget.outlet(connection, () => { s.cut = true; }),
    cut: false,
    send: (bytes) => s.outlet.write(bytes, (taken) => { callbacks.push(taken); }),
    take: (n = callbacks.length) => { for (const cb of callbacks.splice(0, n)) cb(); },
  };
  return s;
}

function budgetOf(perConnection: number, total: number) {
  const cuts: Array<{ reason: CutReason; unsentBytes: number }> = [];
  return { cuts, budget: new OutputBudget({ perConnection, total, onCut: (c) => cuts.push(c) }) };
}

describe('SlotSet', () => {
  it('holds what a Set would under any sequence of adds and deletes', () => {
    fc.assert(fc.property(fc.array(fc.record({ member: fc.nat(9), add: fc.boolean() }), { maxLength: 80 }), (ops) => {
      const members = Array.from({ length: 10 }, (_, id) => ({ id, slot: -1 }));
      const set = new SlotSet<(typeof members)[number]>();
      const model = new Set<number>();
      for (const { member, add } of ops) {
        if (add) { set.add(members[member]); model.add(member); } else { set.delete(members[member]); model.delete(member); }
        assert.deepEqual(set.members.map((m) => m.id).sort(), [...model].sort());
        set.members.forEach((m, i) => assert.equal(m.slot, i));
      }
    }), { numRuns: 300 });
  });
});

describe('OutputBudget', () => {
  it('under any interleaving of writes and takes, a total over budget cuts the largest holder first and the counts stay exact', () => {
    const op = fc.record({ stream: fc.nat(7), bytes: fc.integer({ min: 1, max: 400 }), take: fc.boolean() });
    fc.assert(fc.property(fc.array(op, { maxLength: 120 }), (ops) => {
      const { budget } = budgetOf(0, 1000);
      const connections = [{}, {}, {}];
      // stream i travels on connection i % 3
      const streams = Array.from({ length: 8 }, (_, i) => fakeStream(budget, connections[i % 3]));
      const held = (k: number) => streams.reduce((n, x, i) => n + (i % 3 === k && !x.cut ? x.outlet.unsent : 0), 0);
      for (const { stream, bytes, take } of ops) {
        if (take) { streams[stream].take(1); continue; }
        const before = [0, 1, 2].map(held);
        const wasCut = streams.map((x) => x.cut);
        // a cut stream writes nothing and judges nothing
        const overBudget = budget.total > 1000 && !streams[stream].cut;
        streams[stream].send(bytes);
        const cutNow = streams.flatMap((x, i) => (x.cut && !wasCut[i] ? [i % 3] : []));
        if (overBudget && before.some((b) => b > 0)) {
          assert.ok(cutNow.some((k) => before[k] === Math.max(...before)), 'the connection holding the most is cut first');
          assert.ok(budget.total - (streams[stream].cut ? 0 : bytes) <= 1000, 'cut until within the budget before the write');
        }
        assert.equal(budget.total, [0, 1, 2].map(held).reduce((a, b) => a + b), 'the total is what live streams hold');
      }
      for (const x of streams) x.take();
      assert.equal(budget.total, 0);
    }), { numRuns: 300 });
  });

  it('counts bytes until the socket takes them, per stream, per connection and in total', () => {
    const { budget } = budgetOf(0, 0);
    const conn = {};
    const a = fakeStream(budget, conn);
    const b = fakeStream(budget, conn);
    const c = fakeStream(budget, {});
    a.send(100); a.send(50); b.send(10); c.send(7);
    assert.deepEqual([a.outlet.unsent, b.outlet.unsent, c.outlet.unsent, a.outlet.connection.unsent, budget.total], [150, 10, 7, 160, 167]);
    a.take(1);
    assert.deepEqual([a.outlet.unsent, a.outlet.connection.unsent, budget.total], [50, 60, 67]);
    a.take(); b.take(); c.take();
    assert.equal(budget.total, 0);
  });

  it('past a connection budget, its next write cuts its streams holding the most; its other streams live', () => {
    const { budget, cuts } = budgetOf(1000, 0);
    const session = {};
    const stalled = fakeStream(budget, session);
    const reader = fakeStream(budget, session);
    const other = fakeStream(budget, {});
    for (let i = 0; i < 9; i++) stalled.send(100);
    reader.send(150); // 1050 now held, but judged before the next write
    assert.equal(stalled.cut, false);
    reader.take();
    assert.equal(reader.send(100), true, 'within the budget again: no cut');
    stalled.send(300);
    other.send(5000); // another connection: its own budget, judged at its next write
    assert.equal(stalled.cut, false);
    assert.equal(reader.send(10), true, 'the reader writes on: the stalled stream is the one cut');
    assert.equal(stalled.cut, true);
    assert.equal(stalled.outlet.closed, true);
    assert.equal(reader.cut, false);
    assert.deepEqual(cuts, [{ reason: 'connection budget', unsentBytes: 1300 }]);
    assert.equal(stalled.send(1), false, 'a cut stream takes no more writes');
    assert.equal(budget.total, 5110, 'what the cut stream held is no longer counted');
    stalled.take();
    assert.equal(budget.total, 5110, 'its late callbacks are ignored');
  });

  it('never cuts for one write, however large: a client that reads is judged by what it left unread', () => {
    const { budget } = budgetOf(1000, 2000);
    const reader = fakeStream(budget, {});
    for (let i = 0; i < 5; i++) {
      assert.equal(reader.send(10_000), true);
      reader.take();
    }
    assert.equal(reader.cut, false);
  });

  it('past the total budget, cuts the connections holding the most first, until within it', () => {
    const { budget, cuts } = budgetOf(0, 1000);
    const small = fakeStream(budget, {});
    const large = fakeStream(budget, {});
    const middle = fakeStream(budget, {});
    small.send(200); large.send(600); middle.send(300);
    assert.equal(budget.total, 1100);
    small.send(1);
    assert.deepEqual([large.cut, middle.cut, small.cut], [true, false, false]);
    assert.deepEqual(cuts, [{ reason: 'total budget', unsentBytes: 600 }]);
    assert.equal(budget.total, 501);
  });

  it('forgets what a closed stream held', () => {
    const { budget } = budgetOf(0, 0);
    const a = fakeStream(budget, {});
    a.send(500);
    a.outlet.release();
    assert.equal(budget.total, 0);
    a.take();
    assert.equal(budget.total, 0);
  });

  it('counts bytes held in user space ahead of the writes as unsent, but not as pending in the socket', () => {
    const { budget } = budgetOf(1000, 0);
    const a = fakeStream(budget, {});
    a.send(100);
    a.outlet.hold(950);
    assert.deepEqual([a.outlet.unsent, a.outlet.pending, budget.total], [1050, 100, 1050]);
    assert.equal(a.send(1), false, 'held bytes count against the budget');
    assert.equal(budget.total, 0);
    const b = fakeStream(budget, {});
    b.outlet.hold(500);
    b.outlet.hold(-500);
    assert.deepEqual([b.outlet.unsent, budget.total], [0, 0]);
  });

  it('tells a writer when the socket has taken enough, or that the stream was cut', async () => {
    const { budget } = budgetOf(0, 0);
    const a = fakeStream(budget, {});
    a.send(100); a.send(100);
    const below = a.outlet.whenBelow(100);
    a.take(1);
    assert.equal(await below, true);
    const never = a.outlet.whenBelow(0);
    a.outlet.cut('deadline');
    assert.equal(await never, false);
    assert.equal(a.cut, true);
  });
});

describe('writeBody', () => {
  function target(budget: OutputBudget, deadline = Number.POSITIVE_INFINITY) {
    const chunks: Buffer[] = [];
    const callbacks: Array<() => void> = [];
    let ended = false;
    let cut = false;
    const stream = {
      get writableEnded() { return ended; },
      write(chunk: string | Buffer, taken: () => void) { chunks.push(Buffer.from(chunk)); callbacks.push(taken); },
      end() { ended = true; },
    };
    const outlet = budget.outlet({}, () => { cut = true; });
    return {
      t: { stream, outlet, sizes: writeSizes(budget.options.perConnection), deadline },
      chunks, take: () => { for (const cb of callbacks.splice(0)) cb(); },
      ended: () => ended, cut: () => cut, outlet,
    };
  }
  const settle = () => new Promise((r) => setImmediate(r));

  it('keeps at most a window unsent, writes on as the socket takes it, then ends', async () => {
    const budget = new OutputBudget({ perConnection: 64 * 1024, total: 0 });
    const sizes = writeSizes(64 * 1024);
    assert.deepEqual(sizes, { window: 32 * 1024, chunk: 16 * 1024 });
    const body = Buffer.alloc(200 * 1024, 7);
    const x = target(budget);
    const done = writeBody(x.t, slices(body, sizes.chunk), false);
    let maxUnsent = 0;
    while (!x.ended()) {
      await settle();
      maxUnsent = Math.max(maxUnsent, x.outlet.unsent);
      assert.ok(x.outlet.unsent <= sizes.window, `unsent ${x.outlet.unsent}`);
      x.take();
    }
    await done;
    assert.equal(maxUnsent, sizes.window, 'it writes ahead up to the window');
    assert.deepEqual(Buffer.concat(x.chunks), body);
    assert.equal(x.cut(), false);
  });

  it('cuts a body the socket has not taken by its deadline', async () => {
    const budget = new OutputBudget({ perConnection: 64 * 1024, total: 0 });
    const x = target(budget, Date.now() - 1);
    await writeBody(x.t, slices(Buffer.alloc(200 * 1024), 16 * 1024), false);
    assert.equal(x.cut(), true);
    assert.equal(x.ended(), false, 'not ended as if complete');
    assert.equal(x.chunks.length, 2, 'what fitted in the window was written, nothing after the deadline');
  });
});
