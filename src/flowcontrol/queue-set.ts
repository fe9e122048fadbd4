/**
 * One priority level's seats and queues (k8s.io/apiserver/pkg/util/flowcontrol/fairqueuing/queueset):
 * a request that finds no free seat waits in the shortest queue of its flow's shuffle-sharded hand,
 * and when seats free up the queue whose head would finish first in virtual time (fair queuing by
 * seat-seconds) goes next, so each active flow gets an equal share of the level's seat-time
 * whatever its request rate. A level without queuing (Reject) answers at once.
 */
import type { FlowRequest } from './flow-control.js';
import { deal } from './shuffle-shard.js';

export interface QueuingParams { queues: number; handSize: number; queueLengthLimit: number }

export type RejectReason = 'queue-full' | 'concurrency-limit' | 'time-out' | 'cancelled';

/** Kubernetes' initial estimate of a request's service time (G), corrected when it finishes */
const estimatedServiceSeconds = 0.003;

interface Queue {
  index: number;
  waiting: Waiter[];
  /** virtual time (seat-seconds) at which the queue's next request may start */
  nextDispatchR: number;
  seatsInUse: number;
  waitingSeats: number;
}

interface Waiter {
  width: number;
  queue: Queue;
  resolve(outcome: Ticket | RejectReason): void;
  timer: NodeJS.Timeout;
}

const isActive = (q: Queue): boolean => q.waiting.length > 0 || q.seatsInUse > 0;

/**
 * A flow (a flow schema and a distinguisher) as queue sets see it: its 64-bit hash, and the hand
 * last dealt from it with the deck it was dealt from. Flows repeat, the hash arithmetic need not:
 * the hand is dealt again only when the flow meets another deck (a reconfigured or another level).
 */
export class Flow {
  hand: number[] = [];
  deck: readonly unknown[] | undefined;
  constructor(readonly hash: bigint) {}
}

/** A dispatched request: its seats, until finish(). */
export interface Ticket { finish(): void }

export type Admission = Ticket | RejectReason | Promise<Ticket | RejectReason>;

export class QueueSet {
  private queues: Queue[] = [];
  private params: QueuingParams | undefined;
  private currentR = 0;
  private lastRealSeconds: number;
  /** seats held by executing requests */
  seatsInUse = 0;
  executing = 0;
  waitingRequests = 0;
  private waitingSeats = 0;
  /** queues with requests waiting or executing (kept as they change, not counted per request) */
  private activeQueues = 0;

  constructor(
    /** undefined: Reject instead of queuing */
    params: QueuingParams | undefined,
    /** the level's current concurrency limit in seats */
    private limit: number,
    private readonly waitLimitMs: number,
    private readonly nowSeconds: () => number = () => performance.now() / 1000,
  ) {
    this.lastRealSeconds = nowSeconds();
    this.configure(params, limit);
  }

  get concurrencyLimit(): number { return this.limit; }

  /** New queuing parameters or limit; waiting requests move to the new queues, in order. */
  configure(params: QueuingParams | undefined, limit: number): void {
    this.limit = limit;
    const same = params && this.params && params.queues === this.params.queues && params.handSize === this.params.handSize;
    this.params = params;
    if (!same) {
      const waiting = this.queues.flatMap((q) => q.waiting);
      this.queues = params ? Array.from({ length: params.queues }, (_, index) => ({ index, waiting: [], nextDispatchR: this.currentR, seatsInUse: 0, waitingSeats: 0 })) : [];
      for (const w of waiting) {
        if (!params) { this.dropWaiter(w, 'concurrency-limit'); continue; }
        const to = this.queues[w.queue.index % params.queues];
        w.queue.waitingSeats -= w.width;
        w.queue = to;
        to.waiting.push(w);
        to.waitingSeats += w.width;
      }
      this.activeQueues = this.queues.filter(isActive).length;
    }
    this.dispatchAsMuchAsPossible();
  }

  /**
   * Asks for `width` seats for a request of `flow`. A request that has to wait is dropped if
   * `request` tells of its hand-off first (its client left).
   */
  admit(flow: Flow, width: number, request?: Pick<FlowRequest, 'whenHandedOff'>): Admission {
    this.advanceR();
    if (!this.params) return this.fits(width) ? this.start(width, undefined) : 'concurrency-limit';
    const queue = this.shortestQueueOf(this.handOf(flow));
    if (queue.waiting.length >= this.params.queueLengthLimit) return 'queue-full';
    if (this.waitingRequests === 0 && this.fits(width)) {
      // nothing waits anywhere: the fair order has nothing to arbitrate
      if (queue.waiting.length === 0 && queue.seatsInUse === 0) queue.nextDispatchR = this.currentR;
      queue.nextDispatchR += width * estimatedServiceSeconds;
      return this.start(width, queue);
    }
    return new Promise<Ticket | RejectReason>((resolve) => {
      if (queue.waiting.length === 0 && queue.seatsInUse === 0) queue.nextDispatchR = this.currentR;
      const waiter: Waiter = {
        width, queue, resolve,
        timer: setTimeout(() => this.dropWaiter(waiter, 'time-out'), this.waitLimitMs),
      };
      const was = isActive(queue);
      queue.waiting.push(waiter);
      this.recount(queue, was);
      queue.waitingSeats += width;
      this.waitingRequests++;
      this.waitingSeats += width;
      request?.whenHandedOff?.(() => this.dropWaiter(waiter, 'cancelled'));
      this.dispatchAsMuchAsPossible();
    });
  }

  /** Seats wanted right now: executing plus waiting (the level's seat demand). */
  get seatDemand(): number { return this.seatsInUse + this.waitingSeats; }

  private handOf(flow: Flow): number[] {
    // the queues are replaced whenever the deck changes, so they name the deck
    if (flow.deck !== this.queues) {
      const params = this.params as QueuingParams;
      flow.hand = deal(flow.hash, params.queues, params.handSize);
      flow.deck = this.queues;
    }
    return flow.hand;
  }

  /** The hand's queue with the fewest seats waiting and executing; the first such on ties. */
  private shortestQueueOf(hand: readonly number[]): Queue {
    let best = this.queues[hand[0]];
    for (let i = 1; i < hand.length; i++) {
      const q = this.queues[hand[i]];
      if (q.waitingSeats + q.seatsInUse < best.waitingSeats + best.seatsInUse) best = q;
    }
    return best;
  }

  private fits(width: number): boolean {
    if (this.limit <= 0) return false;
    // a request wider than the whole limit runs alone rather than never
    return this.seatsInUse + width <= this.limit || this.seatsInUse === 0;
  }

  /** Virtual time advances, per active queue, at the rate seats are shared among them. */
  private advanceR(): void {
    const now = this.nowSeconds();
    const elapsed = now - this.lastRealSeconds;
    this.lastRealSeconds = now;
    if (this.activeQueues === 0 || elapsed <= 0) return;
    this.currentR += elapsed * Math.min(this.seatDemand, this.limit) / this.activeQueues;
  }

  private start(width: number, queue: Queue | undefined): Ticket {
    this.seatsInUse += width;
    this.executing++;
    if (queue) {
      const was = isActive(queue);
      queue.seatsInUse += width;
      this.recount(queue, was);
    }
    const startedAt = this.nowSeconds();
    let finished = false;
    return {
      finish: () => {
        if (finished) return;
        finished = true;
        this.advanceR();
        this.seatsInUse -= width;
        this.executing--;
        if (queue) {
          const was = isActive(queue);
          queue.seatsInUse -= width;
          this.recount(queue, was);
          // the estimate charged at dispatch becomes the seat-time actually used
          const actual = width * (this.nowSeconds() - startedAt);
          queue.nextDispatchR -= width * estimatedServiceSeconds - actual;
        }
        this.dispatchAsMuchAsPossible();
      },
    };
  }

  /** Keeps the count of active queues after a queue changed (`was`: whether it was active before). */
  private recount(queue: Queue, was: boolean): void {
    const is = isActive(queue);
    if (was !== is) this.activeQueues += is ? 1 : -1;
  }

  private dropWaiter(w: Waiter, reason: RejectReason): void {
    const at = w.queue.waiting.indexOf(w);
    if (at < 0) return;
    const was = isActive(w.queue);
    w.queue.waiting.splice(at, 1);
    this.recount(w.queue, was);
    this.unwait(w);
    w.resolve(reason);
  }

  private unwait(w: Waiter): void {
    clearTimeout(w.timer);
    w.queue.waitingSeats -= w.width;
    this.waitingRequests--;
    this.waitingSeats -= w.width;
  }

  /** Dispatches heads in order of virtual finish time while their seats fit. */
  private dispatchAsMuchAsPossible(): void {
    this.advanceR();
    while (this.waitingRequests > 0) {
      let best: Queue | undefined;
      let bestFinish = Infinity;
      for (const q of this.queues) {
        if (q.waiting.length === 0) continue;
        const finish = q.nextDispatchR + q.waiting[0].width * estimatedServiceSeconds;
        if (finish < bestFinish) { best = q; bestFinish = finish; }
      }
      if (!best) return;
      const head = best.waiting[0];
      // the fairest request waits for its seats rather than being overtaken by narrower ones
      if (!this.fits(head.width)) return;
      const was = isActive(best);
      best.waiting.shift();
      this.recount(best, was);
      this.unwait(head);
      best.nextDispatchR += head.width * estimatedServiceSeconds;
      head.resolve(this.start(head.width, best));
    }
  }
}
