/**
 * Counters, gauges and histograms whose label sets are bound once and then recorded without
 * allocating: a cell per label set holds plain numbers. prom-client's own children hash their
 * labels into a key string on every call (0.6–0.7 µs and several objects per inc or observe,
 * measured in docs/decisions.md), which the per-request and per-watch-event paths cannot afford.
 * These metrics register in a prom-client Registry like its own and hand it their values in its
 * format, so exposition, Registry.merge and the worker aggregation stay prom-client's.
 */
import type { Metric, Registry } from 'prom-client';
import { LabelNode } from './label-cache.js';

type Labels = Readonly<Record<string, string>>;
type MetricType = 'counter' | 'gauge' | 'histogram';

/** one exposed line in prom-client's format: `sharedLabels` are the cell's, `labels` the line's own (le) */
interface ValuePair { value: number; labels: Record<string, string | number>; sharedLabels?: Labels; metricName?: string }
interface MetricData { name: string; help: string; type: MetricType; aggregator: 'sum'; values: ValuePair[] }

export interface BoundMetricOptions {
  name: string;
  help: string;
  labelNames: readonly string[];
  registers: readonly Registry[];
}

abstract class BoundMetric<Cell extends { readonly labels: Labels }> {
  readonly name: string;
  readonly help: string;
  readonly aggregator = 'sum';
  abstract readonly type: MetricType;
  /** cells by label values: `root.next(a).next(b).leaf(c)` walks maps keyed by the values themselves */
  readonly root: LabelNode<Cell>;
  protected readonly cells: Cell[] = [];

  constructor(options: BoundMetricOptions) {
    this.name = options.name;
    this.help = options.help;
    const names = options.labelNames;
    this.root = new LabelNode((values) => {
      const labels: Record<string, string> = {};
      for (let i = 0; i < names.length; i++) labels[names[i]] = values[i];
      const cell = this.cell(labels);
      this.cells.push(cell);
      return cell;
    });
    // a Registry takes any metric with a name and get(); prom-client's Metric type names its own classes only
    for (const registry of options.registers) registry.registerMetric(this as unknown as Metric);
  }

  protected abstract cell(labels: Labels): Cell;
  protected abstract lines(cell: Cell, out: ValuePair[]): void;
  abstract reset(): void;

  /** The values for the text exposition: the cell's labels shared by its lines (prom-client caches their text). */
  getForPromString(): Promise<MetricData> {
    const values: ValuePair[] = [];
    for (const cell of this.cells) this.lines(cell, values);
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values });
  }

  /** The values as JSON (what workers send for aggregation): each line's labels in full. */
  async get(): Promise<MetricData> {
    const data = await this.getForPromString();
    for (const v of data.values) {
      v.labels = { ...v.labels, ...v.sharedLabels };
      delete v.sharedLabels;
    }
    return data;
  }
}

export class CounterCell {
  value = 0;
  constructor(readonly labels: Labels) {}
  inc(by = 1): void { this.value += by; }
}

export class BoundCounter extends BoundMetric<CounterCell> {
  readonly type = 'counter';
  protected cell(labels: Labels): CounterCell { return new CounterCell(labels); }
  protected lines(cell: CounterCell, out: ValuePair[]): void {
    if (cell.value > 0) out.push({ value: cell.value, labels: {}, sharedLabels: cell.labels });
  }
  reset(): void { for (const c of this.cells) c.value = 0; }
}

export class GaugeCell {
  value = 0;
  constructor(readonly labels: Labels) {}
  inc(): void { this.value++; }
  dec(): void { this.value--; }
  set(value: number): void { this.value = value; }
}

/** A gauge shows every label set once bound, at zero too (prom-client's shows a set it has seen). */
export class BoundGauge extends BoundMetric<GaugeCell> {
  readonly type = 'gauge';
  protected cell(labels: Labels): GaugeCell { return new GaugeCell(labels); }
  protected lines(cell: GaugeCell, out: ValuePair[]): void {
    out.push({ value: cell.value, labels: {}, sharedLabels: cell.labels });
  }
  reset(): void { for (const c of this.cells) c.value = 0; }
}

export class HistogramCell {
  /** observations per bucket (not cumulative); those above the last bound count only in `count` */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(readonly labels: Labels, private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    // linear, as prom-client's: at most a few dozen compares, and most values land in the first buckets
    let i = 0;
    while (i < bounds.length && value > bounds[i]) i++;
    if (i < bounds.length) this.counts[i]++;
    this.sum += value;
    this.count++;
  }
}

export class BoundHistogram extends BoundMetric<HistogramCell> {
  readonly type = 'histogram';
  private readonly bounds: readonly number[];

  constructor(options: BoundMetricOptions & { buckets: readonly number[] }) {
    super(options);
    this.bounds = [...options.buckets].sort((a, b) => a - b);
  }

  protected cell(labels: Labels): HistogramCell { return new HistogramCell(labels, this.bounds); }

  /** prom-client's layout: cumulative buckets, +Inf, then _sum and _count; series never observed are not shown */
  protected lines(cell: HistogramCell, out: ValuePair[]): void {
    if (cell.count === 0) return;
    const bucket = `${this.name}_bucket`;
    let cumulative = 0;
    for (let i = 0; i < this.bounds.length; i++) {
      cumulative += cell.counts[i];
      out.push({ value: cumulative, labels: { le: this.bounds[i] }, sharedLabels: cell.labels, metricName: bucket });
    }
    out.push({ value: cell.count, labels: { le: '+Inf' }, sharedLabels: cell.labels, metricName: bucket });
    out.push({ value: cell.sum, labels: {}, sharedLabels: cell.labels, metricName: `${this.name}_sum` });
    out.push({ value: cell.count, labels: {}, sharedLabels: cell.labels, metricName: `${this.name}_count` });
  }

  reset(): void {
    for (const c of this.cells) { c.counts.fill(0); c.sum = 0; c.count = 0; }
  }
}
