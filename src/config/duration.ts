/**
 * Durations in Go's syntax, because kube-apiserver's duration flags are Go
 * time.Duration values: operators write `--request-timeout=1m0s` and expect the
 * same spelling back in help and logs.
 *
 * Arithmetic is done in BigInt nanoseconds, as Go does in int64, so parsing and
 * the int64 range check are exact; the public unit is milliseconds (a double),
 * which is what Node's timers take.
 */

const NANOSECOND = 1n;
const MICROSECOND = 1_000n * NANOSECOND;
const MILLISECOND = 1_000n * MICROSECOND;
const SECOND = 1_000n * MILLISECOND;
const MINUTE = 60n * SECOND;
const HOUR = 60n * MINUTE;

const UNITS: ReadonlyMap<string, bigint> = new Map([
  ['ns', NANOSECOND],
  ['us', MICROSECOND],
  ['\u00b5s', MICROSECOND], // µ, MICRO SIGN
  ['\u03bcs', MICROSECOND], // μ, GREEK SMALL LETTER MU
  ['ms', MILLISECOND],
  ['s', SECOND],
  ['m', MINUTE],
  ['h', HOUR],
]);

/** Go's Duration is an int64 count of nanoseconds. */
const INT64_LIMIT = 1n << 63n;

/** Go's %q; JSON quoting agrees with it for the printable text flags carry. */
const quote = (text: string): string => JSON.stringify(text);

/**
 * Parses Go's time.ParseDuration syntax (`1h30m`, `1.5h`, `300ms`, `-5s`, `0`)
 * into milliseconds. Throws an Error worded as Go's, because flag errors quote it.
 */
export function parseDuration(text: string): number {
  const invalid = () => new Error(`time: invalid duration ${quote(text)}`);
  let rest = text;
  let negative = false;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    negative = rest.startsWith('-');
    rest = rest.slice(1);
  }
  // A bare zero is the only number allowed without a unit.
  if (rest === '0') return 0;
  if (rest === '') throw invalid();

  let total = 0n;
  while (rest !== '') {
    // Always matches, possibly empty: digits, then an optional fraction.
    const number = /^(\d*)(?:\.(\d*))?/.exec(rest)!;
    const [consumed, whole, fraction = ''] = number;
    if (whole === '' && fraction === '') throw invalid();
    rest = rest.slice(consumed.length);

    // The unit runs up to the next number, as in Go.
    const unitText = /^[^\d.]*/.exec(rest)![0];
    if (unitText === '') throw new Error(`time: missing unit in duration ${quote(text)}`);
    const unit = UNITS.get(unitText);
    if (unit === undefined) {
      throw new Error(`time: unknown unit ${quote(unitText)} in duration ${quote(text)}`);
    }
    rest = rest.slice(unitText.length);

    total += BigInt(whole || '0') * unit;
    if (fraction !== '') total += (BigInt(fraction) * unit) / 10n ** BigInt(fraction.length);
    if (total > INT64_LIMIT) throw invalid();
  }
  // int64 holds one more negative value than positive.
  if (total > (negative ? INT64_LIMIT : INT64_LIMIT - 1n)) throw invalid();
  const nanoseconds = negative ? -total : total;
  return Number(nanoseconds) / 1e6;
}

/**
 * Formats milliseconds as Go's Duration.String() does: `1h0m0s`, `1m30s`,
 * `1.5s`, `500ms`, `1.5µs`, `0s`.
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) throw new RangeError(`not a finite duration: ${ms} ms`);
  const signed = BigInt(Math.round(ms * 1e6));
  const sign = signed < 0n ? '-' : '';
  const ns = signed < 0n ? -signed : signed;
  if (ns === 0n) return '0s';

  // Under a second Go switches to the largest unit below it, with a fraction.
  if (ns < SECOND) {
    const [unit, digits] =
      ns < MICROSECOND ? ['ns', 0] : ns < MILLISECOND ? ['\u00b5s', 3] : ['ms', 6];
    const [whole, fraction] = splitFraction(ns, digits);
    return `${sign}${whole}${fraction}${unit}`;
  }
  const [seconds, fraction] = splitFraction(ns, 9);
  const minutes = seconds / 60n;
  const hours = minutes / 60n;
  const s = `${seconds % 60n}${fraction}s`;
  if (minutes === 0n) return sign + s;
  const m = `${minutes % 60n}m`;
  return sign + (hours === 0n ? '' : `${hours}h`) + m + s;
}

/** Splits off the low `digits` decimal digits as `.ddd` without trailing zeros (Go's fmtFrac). */
function splitFraction(value: bigint, digits: number): [whole: bigint, fraction: string] {
  const scale = 10n ** BigInt(digits);
  const fraction = (value % scale).toString().padStart(digits, '0').replace(/0+$/, '');
  return [value / scale, fraction === '' ? '' : `.${fraction}`];
}
