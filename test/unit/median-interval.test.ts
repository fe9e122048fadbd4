/**
 * The benchmarks' confidence interval for a median (the sign test's): the order statistics that
 * published tables give, whatever order the values come in.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { medianInterval } from '../../bench/harness.js';

/** 1 … n, shuffled deterministically, so the function has to sort */
function shuffled(n: number): number[] {
  const values = Array.from({ length: n }, (_, i) => i + 1);
  for (let i = n - 1; i > 0; i--) {
    const j = (i * 7919) % (i + 1);
    [values[i], values[j]] = [values[j], values[i]];
  }
  return values;
}

describe('medianInterval', () => {
  it('gives the order statistics of the sign-test tables', () => {
    // n → [j-th smallest, j-th largest] at 95%
    const table: Array<[number, [number, number]]> = [[6, [1, 6]], [10, [2, 9]], [20, [6, 15]], [30, [10, 21]], [40, [14, 27]], [100, [40, 61]]];
    for (const [n, expected] of table) assert.deepEqual(medianInterval(shuffled(n)), expected, `n = ${n}`);
  });

  it('has no interval for fewer than 6 values', () => {
    assert.equal(medianInterval([1, 2, 3, 4, 5]), undefined);
    assert.equal(medianInterval([]), undefined);
  });

  it('brackets the median of ratios around 1', () => {
    const ratios = [0.91, 1.04, 0.97, 1.12, 0.99, 1.01, 0.95, 1.08, 1.0, 0.93];
    const [low, high] = medianInterval(ratios) as [number, number];
    assert.equal(low, 0.93);
    assert.equal(high, 1.08);
  });
});
