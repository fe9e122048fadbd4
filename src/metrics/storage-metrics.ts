/**
 * The storage engine's own metrics, recorded in the writer worker and aggregated into /metrics by
 * the front thread: etcd_request_duration_seconds per operation and type (the resource), on both
 * engines, the time of the batch's durable transaction each mutation was part of. The histogram
 * hands over its values in prom-client's JSON itself: a Registry here would load prom-client in the
 * writer thread (~1.2 MiB of its heap) for what `getMetricsAsJSON` does with no default labels.
 */
import type { MetricObjectWithValues, MetricValue } from 'prom-client';
import { BoundHistogram } from './bound-metrics.js';

/** Kubernetes' request-latency buckets (apiserver_request_duration_seconds, etcd_request_duration_seconds) */
export const latencyBuckets = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];

export type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

export class StorageMetrics {
  private readonly durations: BoundHistogram;

  constructor() {
    this.durations = new BoundHistogram({
      name: 'etcd_request_duration_seconds', registers: [], buckets: latencyBuckets,
      help: '[ALPHA] Etcd request latency in seconds for each operation and object type.',
      labelNames: ['operation', 'type'],
    });
  }

  /** One mutation: its operation (create, update, delete) and storage key (`resource/...`). */
  observe(operation: string, key: string, seconds: number): void {
    const slash = key.indexOf('/');
    this.durations.root.next(operation).leaf(slash < 0 ? key : key.slice(0, slash)).observe(seconds);
  }

  async json(): Promise<MetricsJson> {
    return [await this.durations.get()] as unknown as MetricsJson;
  }
}
