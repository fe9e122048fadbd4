/**
 * The metrics kube-apiserver 1.32 exports that operators dashboard, with its names, types,
 * labels, help text (stability prefix included) and buckets, in one prom-client registry beside
 * prom-client's process and Node runtime metrics. What is recorded per request or per watch event
 * goes to cells bound once per label set (bound-metrics.ts), allocation-free; gauges of state the
 * server already keeps (stored objects, APF levels, audit counters) are read when /metrics is scraped.
 */
import { AggregatorRegistry, Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { BoundCounter, BoundGauge, BoundHistogram, type CounterCell, type GaugeCell, type HistogramCell } from './bound-metrics.js';
import { LabelNode } from './label-cache.js';
import { FlowControlMetrics, type FlowControlSource } from './flowcontrol-metrics.js';
import { latencyBuckets, type MetricsJson } from './storage-metrics.js';

/** ExponentialBuckets(1000, 10, 8) */
const responseSizeBuckets = Array.from({ length: 8 }, (_, i) => 1000 * 10 ** i);

/** how often prom-client's nodejs_eventloop_lag_* histogram samples the loop's delay */
const eventLoopSamplingMs = 100;
const requestLabels = ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const;

export interface MetricSources {
  /** stored objects per resource (apiserver_storage_objects) */
  storageObjects(): Iterable<[resource: string, count: number]>;
  flowControl?: FlowControlSource;
  audit?: { eventTotal: number; errorTotal: ReadonlyMap<string, number> };
  /** watch events sent, per (group, version, resource) */
  watchEvents?(): Iterable<[group: string, version: string, resource: string, sent: number]>;
  /** the watch encoder pool's utilisation, 0 to 1 (this server's own metric: Kubernetes has no pool) */
  encoderPoolUtilization?(): number;
}

export const component = 'apiserver';
/** status codes as label values, made once */
const codes: readonly string[] = Array.from({ length: 600 }, (_, i) => String(i));

/** One request label tuple's cells (see `ApiServerMetrics.requestCells`). */
export class RequestCells {
  /** the counter of the last code counted, which is the next one's almost always */
  private lastCode = -1;
  private lastTotal: CounterCell | undefined;

  constructor(private readonly totals: LabelNode<CounterCell>, private readonly duration: HistogramCell, private readonly sizes: HistogramCell | undefined) {}

  /** Records a finished request; `responseBytes` < 0 when its size is not known. */
  finished(code: number, seconds: number, responseBytes: number): void {
    if (code !== this.lastCode || this.lastTotal === undefined) {
      this.lastTotal = this.totals.leaf(codes[code] ?? String(code));
      this.lastCode = code;
    }
    this.lastTotal.inc();
    this.duration.observe(seconds);
    if (this.sizes !== undefined && responseBytes >= 0) this.sizes.observe(responseBytes);
  }
}

export class ApiServerMetrics {
  readonly registry = new Registry();
  private readonly totals: BoundCounter;
  private readonly durations: BoundHistogram;
  private readonly sizes: BoundHistogram;
  private readonly longRunning: BoundGauge;
  private readonly watchEventSizes: BoundHistogram;
  private readonly deprecated: Gauge<string>;
  private readonly tlsErrors: Counter<string>;
  private sources: MetricSources | undefined;
  private flowControl: FlowControlMetrics | undefined;
  /** requests executing now, by kind (for apiserver_current_inflight_requests) */
  private readonly current = { readOnly: 0, mutating: 0 };
  private readonly peak = { readOnly: 0, mutating: 0 };
  /** each request label tuple's cells, bound on first use */
  private readonly requests = new LabelNode<RequestCells>(([verb, dryRun, group, version, resource, subresource, scope]) => {
    const totals = this.totals.root.next(verb).next(dryRun).next(group).next(version).next(resource).next(subresource).next(scope).next(component);
    const duration = this.durations.root.next(verb).next(dryRun).next(group).next(version).next(resource).next(subresource).next(scope).leaf(component);
    const sizes = verb === 'GET' || verb === 'LIST'
      ? this.sizes.root.next(verb).next(group).next(version).next(resource).next(subresource).next(scope).leaf(component)
      : undefined;
    return new RequestCells(totals, duration, sizes);
  });

  constructor() {
    const registers = [this.registry];
    // the event-loop delay histogram samples every 100 ms, not prom-client's 10: its libuv timer
    // woke an idle front thread 100 times a second, 14 ms of CPU a second (docs/decisions.md)
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: eventLoopSamplingMs });
    this.totals = new BoundCounter({
      name: 'apiserver_request_total', registers,
      help: '[STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
      labelNames: [...requestLabels, 'code'],
    });
    this.durations = new BoundHistogram({
      name: 'apiserver_request_duration_seconds', registers, buckets: latencyBuckets,
      help: '[STABLE] Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
      labelNames: [...requestLabels],
    });
    this.sizes = new BoundHistogram({
      name: 'apiserver_response_sizes', registers, buckets: responseSizeBuckets,
      help: '[STABLE] Response size distribution in bytes for each group, version, verb, resource, subresource, scope and component.',
      labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'],
    });
    const current = this.current;
    const peak = this.peak;
    new Gauge({
      name: 'apiserver_current_inflight_requests', registers,
      help: '[STABLE] Maximal number of currently used inflight request limit of this apiserver per request kind in last second.',
      labelNames: ['request_kind'],
      collect() {
        // the peak since the last scrape, as Kubernetes reports the maximum of its last window
        this.set({ request_kind: 'readOnly' }, peak.readOnly);
        this.set({ request_kind: 'mutating' }, peak.mutating);
        peak.readOnly = current.readOnly;
        peak.mutating = current.mutating;
      },
    });
    this.longRunning = new BoundGauge({
      name: 'apiserver_longrunning_requests', registers,
      help: '[STABLE] Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.',
      labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'],
    });
    this.deprecated = new Gauge({
      name: 'apiserver_requested_deprecated_apis', registers,
      help: '[STABLE] Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.',
      labelNames: ['group', 'version', 'resource', 'subresource', 'removed_release'],
    });
    this.tlsErrors = new Counter({
      name: 'apiserver_tls_handshake_errors_total', registers,
      help: '[ALPHA] Number of requests dropped with \'TLS handshake error from\' error',
    });
    this.watchEventSizes = new BoundHistogram({
      name: 'apiserver_watch_events_sizes', registers, labelNames: ['group', 'version', 'resource'],
      // prometheus.ExponentialBuckets(1024, 2.0, 8)
      buckets: [1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072],
      help: '[ALPHA] Watch event size distribution in bytes',
    });
  }

  /** Metrics of state kept elsewhere, read at each scrape. */
  useSources(sources: MetricSources): void {
    this.sources = sources;
    const registers = [this.registry];
    const self = this;
    new Gauge({
      name: 'apiserver_storage_objects', registers, labelNames: ['resource'],
      help: '[STABLE] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.',
      collect() { for (const [resource, count] of self.sources?.storageObjects() ?? []) this.set({ resource }, count); },
    });
    if (sources.watchEvents) {
      const watchEvents = sources.watchEvents;
      new Counter({
        name: 'apiserver_watch_events_total', registers, labelNames: ['group', 'version', 'resource'],
        help: '[ALPHA] Number of events sent in watch clients',
        collect() {
          this.reset();
          for (const [group, version, resource, sent] of watchEvents()) this.inc({ group, version, resource }, sent);
        },
      });
    }
    if (sources.encoderPoolUtilization) {
      const utilization = sources.encoderPoolUtilization;
      new Gauge({
        name: 'orch_watch_encoder_pool_utilization', registers,
        help: '[ALPHA] Share of the watch encoder pool threads\' time spent encoding since the server started (0 to 1)',
        collect() { this.set(utilization()); },
      });
    }
    if (sources.audit) this.auditMetrics(sources.audit);
    if (sources.flowControl) this.flowControl = new FlowControlMetrics(this.registry, sources.flowControl);
  }

  private auditMetrics(audit: NonNullable<MetricSources['audit']>): void {
    const registers = [this.registry];
    new Counter({
      name: 'apiserver_audit_event_total', registers,
      help: '[ALPHA] Counter of audit events generated and sent to the audit backend.',
      collect() { this.reset(); this.inc(audit.eventTotal); },
    });
    new Counter({
      name: 'apiserver_audit_error_total', registers, labelNames: ['plugin'],
      help: '[ALPHA] Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.',
      collect() { this.reset(); for (const [plugin, n] of audit.errorTotal) this.inc({ plugin }, n); },
    });
  }

  /** A request starts executing (after authentication, before flow control) */
  started(mutating: boolean): void {
    if (mutating) { if (++this.current.mutating > this.peak.mutating) this.peak.mutating = this.current.mutating; }
    else if (++this.current.readOnly > this.peak.readOnly) this.peak.readOnly = this.current.readOnly;
  }

  finished(mutating: boolean): void {
    if (mutating) this.current.mutating--; else this.current.readOnly--;
  }

  /**
   * The cells a request of these labels records into (apiserver_request_total by code,
   * _duration_seconds, and for GET and LIST response sizes), found by one walk of its labels: a
   * request knows them when it starts, and walking three metrics' trees once each per request cost
   * a few percent of a GET (profiled).
   */
  requestCells(verb: string, dryRun: string, group: string, version: string, resource: string, subresource: string, scope: string): RequestCells {
    return this.requests.next(verb).next(dryRun).next(group).next(version).next(resource).next(subresource).leaf(scope);
  }

  /** A finished request, for callers without its cells (tests): `requestCells(...).finished(...)`. */
  observe(verb: string, dryRun: string, group: string, version: string, resource: string, subresource: string, scope: string,
    code: number, seconds: number, responseBytes: number): void {
    this.requestCells(verb, dryRun, group, version, resource, subresource, scope).finished(code, seconds, responseBytes);
  }

  /** apiserver_watch_events_sizes of one watched resource and version: a watcher binds it once, then observes each event it sends. */
  watchEventSizesOf(group: string, version: string, resource: string): HistogramCell {
    return this.watchEventSizes.root.next(group).next(version).leaf(resource);
  }

  /** The gauge of a long-running request (a watch) of these labels: inc() at start, dec() at end. */
  longRunningGauge(verb: string, group: string, version: string, resource: string, subresource: string, scope: string): GaugeCell {
    return this.longRunning.root.next(verb).next(group).next(version).next(resource).next(subresource).next(scope).leaf(component);
  }

  /**
   * The hook a deprecated API's handler calls (apiserver_requested_deprecated_apis = 1 for the
   * group, version, resource and subresource, with the release that removes it, or "").
   */
  requestedDeprecatedApi(group: string, version: string, resource: string, subresource: string, removedRelease: string): void {
    this.deprecated.set({ group, version, resource, subresource, removed_release: removedRelease }, 1);
  }

  tlsHandshakeError(): void { this.tlsErrors.inc(); }

  /** Stops sampling (the seat utilization of priority levels). */
  stop(): void { this.flowControl?.stop(); }

  /**
   * The exposition: this thread's metrics and the workers' (the writer's storage latencies). The
   * workers' JSON is combined with prom-client's AggregatorRegistry (Node 20 workers cannot share
   * a registry) and merged with this thread's registry, whose own metrics stay as they are.
   */
  async exposition(workers: ReadonlyArray<() => Promise<unknown[]>>): Promise<{ contentType: string; text: string }> {
    const parts = (await Promise.all(workers.map((w) => w()))).filter((p) => p.length > 0) as MetricsJson[];
    if (parts.length === 0) return { contentType: this.registry.contentType, text: await this.registry.metrics() };
    const merged = Registry.merge([this.registry, AggregatorRegistry.aggregate(parts)]);
    return { contentType: this.registry.contentType, text: await merged.metrics() };
  }
}
