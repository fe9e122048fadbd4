/**
 * API Priority and Fairness (--enable-priority-and-fairness, on by default): each request is
 * classified by the FlowSchemas into a priority level and a flow; Exempt levels run at once,
 * Limited ones get seats from their share of the server's concurrency or wait in their queues,
 * and beyond that get 429 with Retry-After. The configuration is the stored FlowSchemas and
 * PriorityLevelConfigurations, followed through the read model's change feed (the mandatory
 * objects stand in for missing ones), never read from storage per request.
 */
import { mandatoryFlowSchemas, mandatoryPriorityLevels } from '../api/flowcontrol/bootstrap.js';
import { flowSchemaKind } from '../api/flowcontrol/flow-schema.js';
import { priorityLevelConfigurationKind } from '../api/flowcontrol/priority-level-configuration.js';
import type { FlowSchemaObject, PriorityLevelConfigurationObject } from '../api/flowcontrol/types.js';
import { storageResourceOf } from '../api/kind.js';
import type { UserInfo } from '../auth/user.js';
import type { RequestInfo } from '../http/request-info.js';
import { flatString } from '../store/flat-string.js';
import type { ReadModel } from '../store/read-model.js';
import { errors, type StatusError } from '../status/status-error.js';
import { classify, compileSchema, distinguisherOf, sortSchemas, userRules, type CompiledSchema, type UserRule } from './classifier.js';
import { allocate, nominalLimits, smoothDemand, type LevelLimits, type LevelShares } from './concurrency.js';
import type { FlowController, FlowRequest, Seat } from './flow-control.js';
import { Flow, QueueSet, type QueuingParams, type RejectReason, type Ticket } from './queue-set.js';
import { flowHash } from './shuffle-shard.js';
import { estimateWidth } from './width.js';

const flowSchemas = storageResourceOf(flowSchemaKind);
const priorityLevels = storageResourceOf(priorityLevelConfigurationKind);
const maxCachedFlows = 10_000;
const retryAfterSeconds = 1;

/** Counters of one (priority level, flow schema) pair: what /metrics reports as apiserver_flowcontrol_*. */
export class FlowCounters {
  dispatched = 0;
  waiting = 0;
  executing = 0;
  /** seats held by the executing requests */
  seats = 0;
  readonly rejected: Record<RejectReason, number> = { 'queue-full': 0, 'concurrency-limit': 0, 'time-out': 0, cancelled: 0 };
  constructor(readonly priorityLevel: string, readonly flowSchema: string) {}
}

export class Level {
  /** undefined for Exempt levels */
  queues: QueueSet | undefined;
  limits: LevelLimits = { nominal: 0, lendable: 0, min: 0, max: 0 };
  /** executing requests of an Exempt level (they take no seats) */
  exemptExecuting = 0;
  smoothedDemand = 0;
  highWatermark = 0;

  constructor(readonly name: string, public uid: string, public spec: PriorityLevelConfigurationObject['spec']) {}

  get exempt(): boolean { return this.spec?.type === 'Exempt'; }
  get executing(): number { return this.queues?.executing ?? this.exemptExecuting; }
  get seatsInUse(): number { return this.queues?.seatsInUse ?? 0; }
  get waiting(): number { return this.queues?.waitingRequests ?? 0; }
  get currentLimit(): number { return this.queues?.concurrencyLimit ?? this.limits.nominal; }
}

export interface PriorityAndFairnessOptions {
  /** --max-requests-inflight + --max-mutating-requests-inflight */
  serverConcurrencyLimit: number;
  /** how long a request may wait in a queue (a quarter of --request-timeout, as Kubernetes) */
  requestWaitLimitMs: number;
  /** objects of the collection a request lists (for its width) */
  objectCount(info: RequestInfo): number;
  /** how often borrowing is re-balanced */
  adjustIntervalMs?: number;
}

function queuingOf(pl: PriorityLevelConfigurationObject['spec']): QueuingParams | undefined {
  const lr = pl?.limited?.limitResponse;
  if (lr?.type !== 'Queue' || !lr.queuing) return undefined;
  return { queues: lr.queuing.queues ?? 64, handSize: lr.queuing.handSize ?? 8, queueLengthLimit: lr.queuing.queueLengthLimit ?? 50 };
}

export class PriorityAndFairness implements FlowController {
  private schemas: CompiledSchema[] = [];
  private catchAll!: CompiledSchema;
  private readonly levels = new Map<string, Level>();
  /**
   * Per user, the rules whose subjects match it. Authenticators answer the same UserInfo for a
   * connection's certificate or a cached token, so this is worked out once per client, not per
   * request; replaced whenever the configuration is.
   */
  private rulesByUser = new WeakMap<UserInfo, UserRule[]>();
  /** by priority level, then flow schema: nested maps, so that no key string is built per request */
  private readonly counters = new Map<string, Map<string, FlowCounters>>();
  /** flows (their shuffle-sharding hash and hand) by flow schema, then distinguisher */
  private readonly flows = new Map<string, Map<string, Flow>>();
  private flowCount = 0;
  private readonly unsubscribe: () => void;
  private readonly adjuster: NodeJS.Timeout;
  private refreshQueued = false;
  private waitObserver: ((counters: FlowCounters, executed: boolean, seconds: number) => void) | undefined;

  constructor(private readonly readModel: ReadModel, private readonly options: PriorityAndFairnessOptions) {
    this.unsubscribe = readModel.onChange((changes) => {
      if (this.refreshQueued || !changes.some((c) => c.resource === flowSchemas || c.resource === priorityLevels)) return;
      // one refresh per batch of commits
      this.refreshQueued = true;
      queueMicrotask(() => { this.refreshQueued = false; this.refresh(); });
    });
    this.refresh();
    this.adjuster = setInterval(() => this.adjustBorrowing(), options.adjustIntervalMs ?? 10_000);
    this.adjuster.unref();
  }

  stop(): void {
    this.unsubscribe();
    clearInterval(this.adjuster);
  }

  /** The levels and counters, for /metrics. */
  levelStates(): Iterable<Level> { return this.levels.values(); }
  *flowCounters(): Iterable<FlowCounters> { for (const bySchema of this.counters.values()) yield* bySchema.values(); }
  /** Tells `observer` of every request leaving a queue of a Limited level (apiserver_flowcontrol_request_wait_duration_seconds). */
  observeWaits(observer: (counters: FlowCounters, executed: boolean, seconds: number) => void): void { this.waitObserver = observer; }

  admit(request: FlowRequest): Seat | StatusError | Promise<Seat | StatusError> {
    const { info, user } = request;
    let rules = this.rulesByUser.get(user);
    if (!rules) this.rulesByUser.set(user, (rules = userRules(this.schemas, user)));
    const schema = classify(rules, info) ?? this.catchAll;
    const level = this.levels.get(schema.level) as Level;
    request.setResponseHeader?.('X-Kubernetes-PF-FlowSchema-UID', schema.uid);
    request.setResponseHeader?.('X-Kubernetes-PF-PriorityLevel-UID', level.uid);
    request.setResponseHeader?.('X-Orch-PF-FlowSchema-UID', schema.uid);
    request.setResponseHeader?.('X-Orch-PF-PriorityLevel-UID', level.uid);
    const counters = this.countersOf(level.name, schema.name);
    if (!level.queues) {
      counters.dispatched++;
      counters.executing++;
      level.exemptExecuting++;
      let released = false;
      return { release: () => { if (!released) { released = true; level.exemptExecuting--; counters.executing--; } } };
    }
    const width = estimateWidth(info, request.query, this.options.objectCount);
    const outcome = level.queues.admit(this.flowOf(schema.name, distinguisherOf(schema, info, user)), width, request);
    level.highWatermark = Math.max(level.highWatermark, level.queues.seatDemand);
    if (!(outcome instanceof Promise)) {
      this.waitObserver?.(counters, typeof outcome !== 'string', 0);
      return this.settle(outcome, counters, width);
    }
    counters.waiting++;
    const enqueued = performance.now();
    return outcome.then((o) => {
      counters.waiting--;
      this.waitObserver?.(counters, typeof o !== 'string', (performance.now() - enqueued) / 1000);
      return this.settle(o, counters, width);
    });
  }

  private settle(outcome: Ticket | RejectReason, counters: FlowCounters, width: number): Seat | StatusError {
    if (typeof outcome === 'string') {
      counters.rejected[outcome]++;
      return errors.tooManyRequests('Too many requests, please try again later.', retryAfterSeconds);
    }
    counters.dispatched++;
    counters.executing++;
    counters.seats += width;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        counters.executing--;
        counters.seats -= width;
        outcome.finish();
      },
    };
  }

  private countersOf(level: string, schema: string): FlowCounters {
    let bySchema = this.counters.get(level);
    if (!bySchema) this.counters.set(level, (bySchema = new Map()));
    let c = bySchema.get(schema);
    if (!c) bySchema.set(schema, (c = new FlowCounters(level, schema)));
    return c;
  }

  private flowOf(schema: string, distinguisher: string): Flow {
    let byDistinguisher = this.flows.get(schema);
    let flow = byDistinguisher?.get(distinguisher);
    if (flow === undefined) {
      if (this.flowCount >= maxCachedFlows) { this.flows.clear(); this.flowCount = 0; byDistinguisher = undefined; }
      if (!byDistinguisher) this.flows.set(schema, (byDistinguisher = new Map()));
      flow = new Flow(flowHash(schema, distinguisher));
      byDistinguisher.set(distinguisher, flow);
      this.flowCount++;
    }
    return flow;
  }

  /** Recompiles the configuration from the read model (a configuration change, not a request). */
  private refresh(): void {
    const storedLevels = new Map<string, PriorityLevelConfigurationObject>();
    this.readModel.table(priorityLevels).forEach((o) => { storedLevels.set(o.object.metadata.name as string, o.object as PriorityLevelConfigurationObject); });
    for (const m of mandatoryPriorityLevels) if (!storedLevels.has(m.metadata.name as string)) storedLevels.set(m.metadata.name as string, m);

    const seen = new Set<string>();
    for (const [name, pl] of storedLevels) {
      seen.add(name);
      let level = this.levels.get(name);
      // the UID is written in the X-*-PF-PriorityLevel-UID header of every response
      const uid = flatString(pl.metadata.uid ?? '');
      if (!level) { level = new Level(name, uid, pl.spec); this.levels.set(name, level); }
      level.uid = uid;
      level.spec = pl.spec;
    }
    // a removed level keeps serving what it already admitted, then goes
    for (const [name, level] of this.levels) if (!seen.has(name) && level.executing === 0 && level.waiting === 0) this.levels.delete(name);

    const shares: LevelShares[] = [...storedLevels.values()].map((pl) => {
      const c = pl.spec?.type === 'Exempt' ? pl.spec.exempt : pl.spec?.limited;
      return {
        name: pl.metadata.name as string, exempt: pl.spec?.type === 'Exempt',
        shares: c?.nominalConcurrencyShares ?? (pl.spec?.type === 'Exempt' ? 0 : 30),
        lendablePercent: c?.lendablePercent ?? 0,
        borrowingLimitPercent: pl.spec?.limited?.borrowingLimitPercent,
      };
    });
    const limits = nominalLimits(this.options.serverConcurrencyLimit, shares);
    for (const [name, l] of limits) {
      const level = this.levels.get(name) as Level;
      level.limits = l;
      if (level.exempt) { level.queues = undefined; continue; }
      const limit = level.queues ? Math.min(Math.max(level.queues.concurrencyLimit, l.min), l.max) : l.nominal;
      if (level.queues) level.queues.configure(queuingOf(level.spec), limit);
      else level.queues = new QueueSet(queuingOf(level.spec), limit, this.options.requestWaitLimitMs);
    }

    const storedSchemas = new Map<string, FlowSchemaObject>();
    this.readModel.table(flowSchemas).forEach((o) => { storedSchemas.set(o.object.metadata.name as string, o.object as FlowSchemaObject); });
    for (const m of mandatoryFlowSchemas) if (!storedSchemas.has(m.metadata.name as string)) storedSchemas.set(m.metadata.name as string, m);
    // a schema whose level is missing (Dangling) matches nothing
    const compiled = [...storedSchemas.values()].map(compileSchema).filter((s) => storedLevels.has(s.level));
    this.schemas = sortSchemas(compiled);
    this.rulesByUser = new WeakMap();
    // what a request nothing matches gets (the mandatory catch-all schema, stored or not)
    this.catchAll = this.schemas.find((s) => s.name === 'catch-all') ?? compileSchema(mandatoryFlowSchemas[1]);
  }

  /**
   * Borrowing: each Limited level's CurrentCL becomes its fair share of the server limit, bounded
   * by [MinCL, MaxCL] and proportional to its smoothed seat demand, so idle levels lend seats to
   * busy ones and take them back as their own demand returns.
   */
  private adjustBorrowing(): void {
    const limited = [...this.levels.values()].filter((l) => l.queues);
    const exemptMin = [...this.levels.values()].filter((l) => !l.queues).reduce((a, l) => a + l.limits.min, 0);
    for (const l of limited) {
      l.smoothedDemand = smoothDemand(l.smoothedDemand, l.highWatermark);
      l.highWatermark = (l.queues as QueueSet).seatDemand;
    }
    const allocation = allocate(this.options.serverConcurrencyLimit - exemptMin, limited.map((l) => ({
      lower: l.limits.min, upper: l.limits.max, target: Math.max(l.limits.min, l.smoothedDemand),
    })));
    limited.forEach((l, i) => {
      const q = l.queues as QueueSet;
      if (q.concurrencyLimit !== allocation[i]) q.configure(queuingOf(l.spec), allocation[i]);
    });
  }
}
