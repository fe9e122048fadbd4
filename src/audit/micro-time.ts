/**
 * Audit timestamps are Kubernetes MicroTimes: microseconds, written RFC 3339 with exactly six
 * fractional digits in UTC. The clock is the wall clock refined by the monotonic one, so two
 * stages of one request never read as out of order within a millisecond.
 */
import { performance } from 'node:perf_hooks';

/** microseconds since the epoch, now */
export function microNow(): number {
  return Math.floor((performance.timeOrigin + performance.now()) * 1000);
}

/** the last second formatted: events come many per second, and the date part is the slow part */
let cachedSecond = -1;
let cachedPrefix = '';

/** `2026-11-22T10:11:12.123456Z` */
export function formatMicroTime(micros: number): string {
  const second = Math.floor(micros / 1_000_000);
  if (second !== cachedSecond) {
    cachedSecond = second;
    cachedPrefix = new Date(second * 1000).toISOString().slice(0, 20); // 2026-11-22T10:11:12.
  }
  return `${cachedPrefix}${String(micros - second * 1_000_000).padStart(6, '0')}Z`;
}

/** Go's time.RFC3339Nano: the fraction without trailing zeros, and none at all when it is zero */
export function formatRfc3339Nano(micros: number): string {
  const full = formatMicroTime(micros);
  const fraction = full.slice(20, 26).replace(/0+$/, '');
  return `${full.slice(0, 19)}${fraction ? `.${fraction}` : ''}Z`;
}
