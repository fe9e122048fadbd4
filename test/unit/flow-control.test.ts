/**
 * The algorithms of priority and fairness on their own: shuffle sharding (Kubernetes' hash and
 * dealer), fair queuing by seat-time on a fake clock, queue limits, Reject levels, wide requests,
 * the division of the server's concurrency and the width of lists.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { allocate, nominalLimits } from '../../src/flowcontrol/concurrency.js';
import { Flow, QueueSet, type Admission, type Ticket } from '../../src/flowcontrol/queue-set.js';
import { deal, flowHash } from '../../src/flowcontrol/shuffle-shard.js';
import { estimateWidth } from '../../src/flowcontrol/width.js';
import { requestInfo } from '../../src/http/request-info.js';

describe('shuffle sharding', () => {
  it('hashes a flow with 64-bit FNV-1a over schema name and distinguisher', () => {
    assert.equal(flowHash('', ''), 0xcbf29ce484222325n);
    assert.equal(flowHash('a', ''), 0xaf63dc4c8601ec8cn);
    assert.equal(flowHash('', 'a'), flowHash('a', ''), 'the bytes are hashed in sequence');
  });

  it('deals a hand of distinct cards from the deck, the same for the same hash', () => {
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), fc.integer({ min: 1, max: 128 }), fc.integer({ min: 1, max: 8 }), (hash, deck, want) => {
      const handSize = Math.min(want, deck);
      const hand = deal(hash, deck, handSize);
      assert.equal(hand.length, handSize);
      assert.equal(new Set(hand).size, handSize, `distinct: ${hand}`);
      for (const card of hand) assert.ok(card >= 0 && card < deck);
      assert.deepEqual(deal(hash, deck, handSize), hand);
    }));
  });

  it('spreads hands evenly over the deck', () => {
    const counts = new Array<number>(16).fill(0);
    for (let i = 0; i < 16_000; i++) for (const card of deal(flowHash('fs', `user-${i}`), 16, 2)) counts[card]++;
    for (const c of counts) assert.ok(c > 1600 && c < 2400, `each queue in about 2000 hands: ${counts}`);
  });
});

/** A queue set on a clock the test moves. */
function fakeClock(): { now: () => number; advance(seconds: number): void } {
  let t = 0;
  return { now: () => t, advance: (s) => { t += s; } };
}

async function ticketOf(a: Admission): Promise<Ticket> {
  const outcome = await a;
  assert.ok(typeof outcome !== 'string', `dispatched, not ${String(outcome)}`);
  return outcome;
}

describe('fair queuing', () => {
  // flows whose one-card hands (deck 8) are queues 0 and 1
  const alice = new Flow(0n);
  const bob = new Flow(1n);

  it('gives the seat to the flow that used less seat-time, whatever the arrival order', async () => {
    const clock = fakeClock();
    const qs = new QueueSet({ queues: 8, handSize: 1, queueLengthLimit: 50 }, 1, 60_000, clock.now);
    const first = await ticketOf(qs.admit(alice, 1));
    const order: string[] = [];
    const waiting: Array<Promise<void>> = [];
    const enqueue = (who: string, flow: Flow) => {
      const a = qs.admit(flow, 1);
      assert.ok(a instanceof Promise, 'waits: the one seat is taken');
      waiting.push(a.then((t) => { order.push(who); pending.push(t as Ticket); }));
    };
    const pending: Ticket[] = [];
    for (let i = 0; i < 10; i++) enqueue('alice', alice);
    for (let i = 0; i < 5; i++) enqueue('bob', bob);
    // alice's first request holds the seat for 2 s: her queue has used 2 seat-seconds
    clock.advance(2);
    first.finish();
    for (let i = 0; i < 15; i++) {
      await new Promise((r) => setImmediate(r));
      clock.advance(0.01);
      (pending.shift() as Ticket).finish();
    }
    await Promise.all(waiting);
    assert.deepEqual(order.slice(0, 5), ['bob', 'bob', 'bob', 'bob', 'bob'], order.join(' '));
  });

  it('alternates between two flows that arrived together and use equal seat-time', async () => {
    const clock = fakeClock();
    const qs = new QueueSet({ queues: 8, handSize: 1, queueLengthLimit: 50 }, 1, 60_000, clock.now);
    const blocker = await ticketOf(qs.admit(new Flow(7n), 1));
    const order: string[] = [];
    const pending: Ticket[] = [];
    const all: Array<Promise<void>> = [];
    for (let i = 0; i < 6; i++) all.push((qs.admit(alice, 1) as Promise<Ticket>).then((t) => { order.push('a'); pending.push(t); }));
    for (let i = 0; i < 3; i++) all.push((qs.admit(bob, 1) as Promise<Ticket>).then((t) => { order.push('b'); pending.push(t); }));
    blocker.finish();
    for (let i = 0; i < 9; i++) {
      await new Promise((r) => setImmediate(r));
      clock.advance(0.01);
      (pending.shift() as Ticket).finish();
    }
    await Promise.all(all);
    assert.equal(order.slice(0, 6).filter((w) => w === 'b').length, 3, order.join(''));
  });

  it('deals a flow its hand again when it meets another deck', async () => {
    const flow = new Flow(5n); // deck 8, hand 1: queue 5; deck 4: queue 1
    const qs = new QueueSet({ queues: 8, handSize: 1, queueLengthLimit: 5 }, 1, 60_000);
    const first = await ticketOf(qs.admit(flow, 1));
    assert.deepEqual(flow.hand, [5]);
    first.finish();
    qs.configure({ queues: 4, handSize: 1, queueLengthLimit: 5 }, 1);
    (await ticketOf(qs.admit(flow, 1))).finish();
    assert.deepEqual(flow.hand, deal(5n, 4, 1));
    const other = new QueueSet({ queues: 8, handSize: 1, queueLengthLimit: 5 }, 1, 60_000);
    (await ticketOf(other.admit(flow, 1))).finish();
    assert.deepEqual(flow.hand, [5]);
  });

  it('rejects beyond the queue length limit, and after the wait limit', async () => {
    const qs = new QueueSet({ queues: 1, handSize: 1, queueLengthLimit: 2 }, 1, 50);
    await ticketOf(qs.admit(alice, 1));
    const waiting = [qs.admit(alice, 1), qs.admit(alice, 1)];
    assert.equal(qs.admit(alice, 1), 'queue-full');
    assert.deepEqual(await Promise.all(waiting), ['time-out', 'time-out']);
    assert.equal(qs.waitingRequests, 0);
  });

  it('rejects at once on a Reject level, and a request whose client left stops waiting', async () => {
    const reject = new QueueSet(undefined, 2, 1000);
    await ticketOf(reject.admit(alice, 1));
    await ticketOf(reject.admit(bob, 1));
    assert.equal(reject.admit(alice, 1), 'concurrency-limit');
    const queued = new QueueSet({ queues: 4, handSize: 1, queueLengthLimit: 5 }, 1, 60_000);
    await ticketOf(queued.admit(alice, 1));
    let leave!: () => void;
    const left = new Promise<void>((r) => { leave = r; });
    const waiting = queued.admit(bob, 1, { whenHandedOff: (drop) => void left.then(drop) });
    leave();
    assert.equal(await waiting, 'cancelled');
  });

  it('holds a wide request until its seats are free, and runs one wider than the limit alone', async () => {
    const qs = new QueueSet({ queues: 4, handSize: 1, queueLengthLimit: 5 }, 3, 60_000);
    const narrow = await ticketOf(qs.admit(alice, 2));
    const wide = qs.admit(bob, 3);
    assert.ok(wide instanceof Promise);
    narrow.finish();
    const t = await ticketOf(wide);
    assert.equal(qs.seatsInUse, 3);
    t.finish();
    const wider = await ticketOf(qs.admit(bob, 10));
    assert.equal(qs.seatsInUse, 10);
    wider.finish();
  });
});

describe('concurrency division', () => {
  it('divides the server limit by shares, rounding up, with lendable and borrowing bounds', () => {
    const limits = nominalLimits(600, [
      { name: 'exempt', exempt: true, shares: 0, lendablePercent: 0, borrowingLimitPercent: undefined },
      { name: 'a', exempt: false, shares: 30, lendablePercent: 33, borrowingLimitPercent: undefined },
      { name: 'b', exempt: false, shares: 0, lendablePercent: 0, borrowingLimitPercent: 0 },
      { name: 'c', exempt: false, shares: 1, lendablePercent: 0, borrowingLimitPercent: 100 },
    ]);
    assert.deepEqual(limits.get('a'), { nominal: 581, lendable: 192, min: 389, max: Infinity });
    assert.deepEqual(limits.get('b'), { nominal: 0, lendable: 0, min: 0, max: 0 });
    assert.deepEqual(limits.get('c'), { nominal: 20, lendable: 0, min: 20, max: 40 });
    assert.equal(limits.get('exempt')?.nominal, 0);
  });

  it('allocates the required total in proportion to targets within bounds', () => {
    assert.deepEqual(allocate(100, [{ lower: 10, upper: 100, target: 10 }, { lower: 10, upper: 100, target: 30 }]), [25, 75]);
    assert.deepEqual(allocate(100, [{ lower: 40, upper: 50, target: 1 }, { lower: 10, upper: Infinity, target: 1 }]), [50, 50]);
    assert.deepEqual(allocate(10, [{ lower: 20, upper: 30, target: 1 }]), [20]);
  });
});

describe('work estimation', () => {
  const count = () => 1234;
  const q = (s: string) => new URLSearchParams(s);
  it('gives lists one seat per 100 objects, 1 to 10, bounded by limit', () => {
    assert.equal(estimateWidth(requestInfo('GET', '/api/v1/namespaces/a/configmaps', q('')), q(''), count), 10);
    assert.equal(estimateWidth(requestInfo('GET', '/api/v1/namespaces/a/configmaps', q('limit=250')), q('limit=250'), count), 3);
    assert.equal(estimateWidth(requestInfo('GET', '/api/v1/namespaces/a/configmaps', q('')), q(''), () => 0), 1);
    assert.equal(estimateWidth(requestInfo('GET', '/api/v1/namespaces/a/configmaps/x', q('')), q(''), count), 1);
    assert.equal(estimateWidth(requestInfo('POST', '/api/v1/namespaces/a/configmaps', q('')), q(''), count), 1);
  });
  it('counts a watch\'s initial events only when it starts with the current objects', () => {
    assert.equal(estimateWidth(requestInfo('GET', '/api/v1/configmaps', q('watch=true')), q('watch=true'), count), 10);
    assert.equal(estimateWidth(requestInfo('GET', '/api/v1/configmaps', q('watch=true&resourceVersion=5')), q('watch=true&resourceVersion=5'), count), 1);
  });
});
