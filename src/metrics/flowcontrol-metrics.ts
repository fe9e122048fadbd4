/**
 * apiserver_flowcontrol_*: Kubernetes 1.32's priority-and-fairness metrics. Counts and gauges are
 * read from the controller's per-flow counters and levels at each scrape; queue wait times are
 * observed as requests leave their queue (cells bound once per flow and outcome); the seat
 * utilization of each level is sampled every 100 ms (Kubernetes observes it continuously: its
 * counts are nanoseconds, ours samples; the distribution is the same).
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { BoundHistogram, type HistogramCell } from './bound-metrics.js';

export interface FlowCountersView {
  priorityLevel: string; flowSchema: string; dispatched: number; waiting: number; executing: number; seats: number;
  rejected: Readonly<Record<string, number>>;
}

export interface FlowControlSource {
  levelStates(): Iterable<{ name: string; exempt: boolean; limits: { nominal: number }; currentLimit: number; seatsInUse: number }>;
  flowCounters(): Iterable<FlowCountersView>;
  /** registers what is told of each request leaving a queue: executed or rejected, after waiting `seconds` */
  observeWaits(observer: (counters: FlowCountersView, executed: boolean, seconds: number) => void): void;
}

const waitBuckets = [0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30];
const utilizationBuckets = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1];
const samplingIntervalMs = 100;

export class FlowControlMetrics {
  private readonly sampler: NodeJS.Timeout;

  constructor(registry: Registry, apf: FlowControlSource) {
    const registers = [registry];
    const perFlow = (name: string, help: string, value: (c: FlowCountersView) => number, type: 'counter' | 'gauge') => {
      const options = {
        name, registers, help, labelNames: ['flow_schema', 'priority_level'],
        collect(this: Counter<string> | Gauge<string>) {
          this.reset();
          for (const c of apf.flowCounters()) {
            const labels = { flow_schema: c.flowSchema, priority_level: c.priorityLevel };
            if (this instanceof Counter) this.inc(labels, value(c)); else this.set(labels, value(c));
          }
        },
      };
      return type === 'counter' ? new Counter(options) : new Gauge(options);
    };
    perFlow('apiserver_flowcontrol_dispatched_requests_total', '[BETA] Number of requests executed by API Priority and Fairness subsystem', (c) => c.dispatched, 'counter');
    perFlow('apiserver_flowcontrol_current_inqueue_requests', '[BETA] Number of requests currently pending in queues of the API Priority and Fairness subsystem', (c) => c.waiting, 'gauge');
    perFlow('apiserver_flowcontrol_current_executing_requests', '[BETA] Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem', (c) => c.executing, 'gauge');
    perFlow('apiserver_flowcontrol_current_executing_seats', '[BETA] Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem', (c) => c.seats, 'gauge');
    new Counter({
      name: 'apiserver_flowcontrol_rejected_requests_total', registers, labelNames: ['flow_schema', 'priority_level', 'reason'],
      help: '[BETA] Number of requests rejected by API Priority and Fairness subsystem',
      collect() {
        this.reset();
        for (const c of apf.flowCounters()) {
          for (const [reason, n] of Object.entries(c.rejected)) if (n > 0) this.inc({ flow_schema: c.flowSchema, priority_level: c.priorityLevel, reason }, n);
        }
      },
    });
    new Gauge({
      name: 'apiserver_flowcontrol_nominal_limit_seats', registers, labelNames: ['priority_level'],
      help: '[BETA] Nominal number of execution seats configured for each priority level',
      collect() { this.reset(); for (const l of apf.levelStates()) this.set({ priority_level: l.name }, l.limits.nominal); },
    });
    new Gauge({
      name: 'apiserver_flowcontrol_current_limit_seats', registers, labelNames: ['priority_level'],
      help: '[ALPHA] current derived number of execution seats available to each priority level',
      collect() { this.reset(); for (const l of apf.levelStates()) this.set({ priority_level: l.name }, l.currentLimit); },
    });

    const waits = new BoundHistogram({
      name: 'apiserver_flowcontrol_request_wait_duration_seconds', registers, buckets: waitBuckets,
      help: '[BETA] Length of time a request spent waiting in its queue',
      labelNames: ['flow_schema', 'priority_level', 'execute'],
    });
    // every request of a Limited level is observed: its flow's two cells are found by one lookup
    // of the flow's counters (an object), not three of label strings
    const waitCells = new WeakMap<FlowCountersView, readonly [rejected: HistogramCell, executed: HistogramCell]>();
    apf.observeWaits((c, executed, seconds) => {
      let cells = waitCells.get(c);
      if (cells === undefined) {
        const flow = waits.root.next(c.flowSchema).next(c.priorityLevel);
        cells = [flow.leaf('false'), flow.leaf('true')];
        waitCells.set(c, cells);
      }
      cells[executed ? 1 : 0].observe(seconds);
    });

    const utilization = new BoundHistogram({
      name: 'apiserver_flowcontrol_priority_level_seat_utilization', registers, buckets: utilizationBuckets,
      help: '[ALPHA] Observations, at the end of every nanosecond, of utilization of seats for any stage of execution (but only initial stage for WATCHes)',
      labelNames: ['priority_level', 'phase'],
    });
    this.sampler = setInterval(() => {
      for (const l of apf.levelStates()) {
        if (l.exempt || l.currentLimit <= 0) continue;
        utilization.root.next(l.name).leaf('executing').observe(Math.min(1, l.seatsInUse / l.currentLimit));
      }
    }, samplingIntervalMs);
    this.sampler.unref();
  }

  stop(): void { clearInterval(this.sampler); }
}
