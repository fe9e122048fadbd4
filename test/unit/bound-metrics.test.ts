/**
 * Bound metrics expose exactly what prom-client's own would for the same recordings: the same text
 * (line order, label order, bucket layout, values) and the same JSON, so that swapping one for the
 * other changes nothing a scraper or the worker aggregation sees.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AggregatorRegistry, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { BoundCounter, BoundGauge, BoundHistogram } from '../../src/metrics/bound-metrics.js';

const labelNames = ['verb', 'code'];
const buckets = [0.005, 0.025, 0.1, 1, 10];

/** JSON as it crosses to another thread, without the exemplars neither records */
async function json(registry: Registry): Promise<unknown> {
  return JSON.parse(JSON.stringify(await registry.getMetricsAsJSON(), (key, value: unknown) => (key === 'exemplar' && value === null ? undefined : value)));
}

/** recordings: a label tuple (from a small set, so tuples repeat) and a value */
const recordings = fc.array(fc.record({
  verb: fc.constantFrom('GET', 'LIST', 'a"b\\c\nd'),
  code: fc.constantFrom('200', '404'),
  value: fc.oneof(fc.double({ min: 0, max: 20, noNaN: true }), fc.constantFrom(0, 0.005, 0.1, 10, 11)),
}), { maxLength: 40 });

describe('bound metrics', () => {
  it('a histogram exposes what prom-client\'s exposes, as text and as JSON', async () => {
    await fc.assert(fc.asyncProperty(recordings, async (recs) => {
      const theirs = new Registry();
      const ours = new Registry();
      const h = new Histogram({ name: 'h_seconds', help: 'help "text"', labelNames, buckets, registers: [theirs] });
      const b = new BoundHistogram({ name: 'h_seconds', help: 'help "text"', labelNames, buckets, registers: [ours] });
      for (const r of recs) {
        h.labels(r.verb, r.code).observe(r.value);
        b.root.next(r.verb).leaf(r.code).observe(r.value);
      }
      assert.equal(await ours.metrics(), await theirs.metrics());
      assert.deepEqual(await json(ours), await json(theirs));
    }), { numRuns: 200 });
  });

  it('a counter and a gauge expose what prom-client\'s expose', async () => {
    await fc.assert(fc.asyncProperty(recordings, async (recs) => {
      const theirs = new Registry();
      const ours = new Registry();
      const c = new Counter({ name: 'c_total', help: 'c', labelNames, registers: [theirs] });
      const g = new Gauge({ name: 'g', help: 'g', labelNames, registers: [theirs] });
      const bc = new BoundCounter({ name: 'c_total', help: 'c', labelNames, registers: [ours] });
      const bg = new BoundGauge({ name: 'g', help: 'g', labelNames, registers: [ours] });
      for (const r of recs) {
        c.labels(r.verb, r.code).inc();
        bc.root.next(r.verb).leaf(r.code).inc();
        if (r.value > 5) { g.labels(r.verb, r.code).inc(); bg.root.next(r.verb).leaf(r.code).inc(); }
        else { g.labels(r.verb, r.code).dec(); bg.root.next(r.verb).leaf(r.code).dec(); }
      }
      assert.equal(await ours.metrics(), await theirs.metrics());
      assert.deepEqual(await json(ours), await json(theirs));
    }), { numRuns: 200 });
  });

  it('workers\' bound metrics aggregate as prom-client\'s do, and reset to nothing shown', async () => {
    const make = () => {
      const r = new Registry();
      return { r, h: new BoundHistogram({ name: 'w_seconds', help: 'w', labelNames: ['op'], buckets, registers: [r] }) };
    };
    const a = make();
    const b = make();
    a.h.root.leaf('create').observe(0.01);
    b.h.root.leaf('create').observe(2);
    b.h.root.leaf('delete').observe(0.001);
    const text = await AggregatorRegistry.aggregate([await a.r.getMetricsAsJSON(), await b.r.getMetricsAsJSON()] as never).metrics();
    assert.match(text, /^w_seconds_bucket\{le="0.025",op="create"\} 1$/m);
    assert.match(text, /^w_seconds_bucket\{le="\+Inf",op="create"\} 2$/m);
    assert.match(text, /^w_seconds_count\{op="delete"\} 1$/m);
    b.r.resetMetrics();
    assert.doesNotMatch(await b.r.metrics(), /w_seconds_count/);
  });
});
