/**
 * Bytes written to clients and not yet taken by their sockets, counted per response stream, per
 * connection and in total, each count kept up to date by the writes' callbacks (O(1) per write).
 * Two budgets bound them: a connection that stops reading may hold at most `perConnection` (past
 * it, its next write cuts its streams holding the most), and all connections together at most
 * `total` (past it, the next write anywhere cuts the connections holding the most first). A
 * string counts its length, as Node's streams count it; frames shared by many watchers count once
 * per stream, so the figures are an upper bound of the memory they pin.
 */

export interface OutputBudgetOptions {
  /** bytes one connection (all its streams together) may hold unsent; 0: no limit */
  perConnection: number;
  /** bytes all connections together may hold unsent; 0: no limit */
  total: number;
  /** told each time a stream is cut, with why and what its connection held then */
  onCut?(cut: { reason: CutReason; unsentBytes: number }): void;
}

/** Why a stream was cut: a budget, the hub's bound on a watch's backlog, a body past its deadline, a failed write. */
export type CutReason = 'connection budget' | 'total budget' | 'watch backlog' | 'deadline' | 'write failed';

/**
 * A set whose members keep their own slot in it: add and delete in O(1) without hashing, which
 * matters because every response joins its connection's set when it writes and leaves it when
 * the socket took the bytes. A member belongs to one such set at a time.
 */
export class SlotSet<T extends { slot: number }> {
  readonly members: T[] = [];

  get size(): number { return this.members.length; }

  add(member: T): void {
    if (member.slot >= 0) return;
    member.slot = this.members.length;
    this.members.push(member);
  }

  delete(member: T): void {
    if (member.slot < 0) return;
    const last = this.members.pop() as T;
    if (last !== member) {
      this.members[member.slot] = last;
      last.slot = member.slot;
    }
    member.slot = -1;
  }
}

/** One connection: an HTTP/1.1 or WebSocket socket, or an HTTP/2 session with its streams. */
class ConnectionOutput {
  unsent = 0;
  /** @internal its place among the budget's holding connections */
  slot = -1;
  /** its streams that hold unsent bytes */
  readonly holding = new SlotSet<Outlet>();
}

/** The writes of one response stream (an HTTP response, an HTTP/2 stream, a WebSocket). */
export class Outlet {
  /** bytes written and not yet taken by the socket, plus those held (below) */
  unsent = 0;
  /** of those, bytes waiting in user space ahead of the writes */
  private held = 0;
  /** cut, or its stream closed: nothing more is written or counted */
  closed = false;
  /** bytes handed to write so far (apiserver_response_sizes) */
  written = 0;
  /** @internal its place among its connection's holding streams */
  slot = -1;
  private waiter: { bytes: number; resolve: (open: boolean) => void } | undefined;

  constructor(private readonly budget: OutputBudget, readonly connection: ConnectionOutput, private readonly cutStream: () => void) {}

  /**
   * Holds the connection and the total to their budgets, then (unless that cut this stream)
   * counts `bytes` and calls `write` with the callback that uncounts them: the write's own
   * callback, called once the socket took its bytes. A backlog is judged before it grows, so one
   * write (a watch's batch, a body's chunk) never cuts a client that reads; what a connection
   * holds stays under its budget plus one write. Returns false when the stream is cut or closed.
   */
  write(bytes: number, write: (taken: () => void) => void): boolean {
    if (!this.closed) this.budget.enforce(this);
    if (this.closed) return false;
    this.count(bytes);
    this.written += bytes;
    write(() => this.taken(bytes));
    return true;
  }

  /**
   * Counts (negative: uncounts) bytes waiting for this stream in user space, ahead of its writes
   * (a watch's live events queued while its socket lags): unsent too, though not yet written.
   */
  hold(bytes: number): void {
    if (this.closed) return;
    this.held += bytes;
    if (bytes > 0) this.count(bytes);
    else this.budget.uncount(this, -bytes);
  }

  /** Bytes written to the stream and not yet taken by its socket. */
  get pending(): number {
    return this.unsent - this.held;
  }

  /** Resolves true once at most `bytes` are pending, false if the stream is cut or closed first. */
  whenBelow(bytes: number): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    if (this.pending <= bytes) return Promise.resolve(true);
    this.waiter?.resolve(false);
    return new Promise((resolve) => { this.waiter = { bytes, resolve }; });
  }

  /** Ends the stream at once, dropping what it holds. */
  cut(reason: CutReason): void {
    if (this.closed) return;
    this.budget.options.onCut?.({ reason, unsentBytes: this.connection.unsent });
    this.release();
    this.cutStream();
  }

  /** The stream closed: what it still held is no longer counted (the socket dropped it). */
  release(): void {
    if (this.closed) return;
    this.budget.uncount(this, this.unsent);
    this.held = 0;
    this.closed = true;
    this.waiter?.resolve(false);
    this.waiter = undefined;
  }

  private count(bytes: number): void {
    if (bytes === 0) return;
    if (this.unsent === 0) this.budget.holding(this, true);
    this.unsent += bytes;
    this.connection.unsent += bytes;
    this.budget.total += bytes;
  }

  private taken(bytes: number): void {
    if (this.closed) return;
    this.budget.uncount(this, bytes);
    const w = this.waiter;
    if (w && this.pending <= w.bytes) { this.waiter = undefined; w.resolve(true); }
  }
}

export class OutputBudget {
  /** unsent bytes of all connections */
  total = 0;
  private readonly connections = new WeakMap<object, ConnectionOutput>();
  /** connections holding unsent bytes: the only ones a cut can choose from */
  private readonly holdingConnections = new SlotSet<ConnectionOutput>();

  constructor(readonly options: OutputBudgetOptions) {}

  /**
   * The outlet of a new response stream on `connection` (the socket, the HTTP/2 session or the
   * WebSocket it travels on); `cut` ends that stream at once. Call `release` when the stream closes.
   */
  outlet(connection: object, cut: () => void): Outlet {
    let c = this.connections.get(connection);
    if (!c) this.connections.set(connection, (c = new ConnectionOutput()));
    return new Outlet(this, c, cut);
  }

  /** @internal an outlet starts or stops holding bytes */
  holding(outlet: Outlet, holds: boolean): void {
    const c = outlet.connection;
    if (holds) {
      c.holding.add(outlet);
      this.holdingConnections.add(c);
      return;
    }
    c.holding.delete(outlet);
    if (c.holding.size === 0) this.holdingConnections.delete(c);
  }

  /** @internal bytes of an outlet were taken by the socket or dropped with its stream */
  uncount(outlet: Outlet, bytes: number): void {
    if (bytes === 0) return;
    outlet.unsent -= bytes;
    outlet.connection.unsent -= bytes;
    this.total -= bytes;
    if (outlet.unsent === 0) this.holding(outlet, false);
  }

  /** @internal before a write: the connection's budget, then the total's */
  enforce(outlet: Outlet): void {
    const { perConnection, total } = this.options;
    const c = outlet.connection;
    if (perConnection > 0 && c.unsent > perConnection) {
      // an HTTP/2 session's other streams live on: only its largest holders go
      for (const o of [...c.holding.members].sort((a, b) => b.unsent - a.unsent)) {
        if (c.unsent <= perConnection) break;
        o.cut('connection budget');
      }
    }
    if (total > 0 && this.total > total) this.relieve(total);
  }

  /** Cuts the connections holding the most until the total is within its budget again. */
  private relieve(limit: number): void {
    for (const c of [...this.holdingConnections.members].sort((a, b) => b.unsent - a.unsent)) {
      if (this.total <= limit) return;
      for (const o of [...c.holding.members]) o.cut('total budget');
    }
  }
}
