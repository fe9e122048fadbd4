/**
 * metav1.Time and MicroTime as Kubernetes converts them between their JSON text (RFC 3339, UTC)
 * and their protobuf message {int64 seconds = 1; int32 nanos = 2}, by integer arithmetic: a
 * fraction of the cost of Date parsing and formatting, on the watch path's hottest loop.
 */

/** Go's zero time.Time (0001-01-01T00:00:00Z), which Kubernetes serializes as null */
export const goZeroTimeSeconds = -62135596800;
/** The value of `count` decimal digits at `at`, NaN if any is not a digit. */
function digitsAt(text: string, at: number, count: number): number {
  let v = 0;
  for (let i = at; i < at + count; i++) {
    const d = text.charCodeAt(i) - 48;
    if (!(d >= 0 && d <= 9)) return NaN;
    v = v * 10 + d;
  }
  return v;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  return era * 146097 + yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear - 719468;
}

/**
 * Unix seconds of an RFC 3339 time, NaN if it is none. The UTC form stored objects hold
 * ("2006-01-02T15:04:05Z", with a fraction for MicroTime) is read by hand; others go to Date.parse.
 */
export function timeSeconds(text: string): number {
  if (text.charCodeAt(text.length - 1) === 90 /* Z */ && text[10] === 'T' && text[4] === '-' && text[7] === '-' && text[13] === ':' && text[16] === ':') {
    const month = digitsAt(text, 5, 2);
    const day = digitsAt(text, 8, 2);
    const hour = digitsAt(text, 11, 2);
    const minute = digitsAt(text, 14, 2);
    const second = digitsAt(text, 17, 2);
    if (month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour < 24 && minute < 60 && second < 60) {
      const days = daysFromCivil(digitsAt(text, 0, 4), month, day);
      if (!Number.isNaN(days)) return days * 86400 + hour * 3600 + minute * 60 + second;
    }
  }
  return Math.floor(Date.parse(text) / 1000);
}

/** Microseconds of an RFC 3339 time's fraction, which always starts at index 19 (further digits truncated). */
export function microsOf(text: string): number {
  if (text[19] !== '.') return 0;
  let micros = 0;
  let i = 20;
  for (; i < 26; i++) {
    const d = text.charCodeAt(i) - 48;
    if (!(d >= 0 && d <= 9)) break;
    micros = micros * 10 + d;
  }
  for (; i < 26; i++) micros *= 10; // ".5" is 500000µs
  return micros;
}

/** 9999-12-31T23:59:59Z, the last time Go's JSON encoding can write */
export const maxTimeSeconds = 253402300799;
const pad2 = (n: number): string => (n < 10 ? `0${n}` : `${n}`);

/**
 * "YYYY-MM-DDTHH:MM:SS" (UTC) of Unix seconds by integer arithmetic (Hinnant's civil_from_days),
 * a fraction of the cost of Date#toISOString.
 */
export function civilTime(seconds: number): string {
  const days = Math.floor(seconds / 86400);
  const secondOfDay = seconds - days * 86400;
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const dayOfEra = z - era * 146097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36524) - Math.floor(dayOfEra / 146096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const mp = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const hour = Math.floor(secondOfDay / 3600);
  const minute = Math.floor((secondOfDay - hour * 3600) / 60);
  return `${String(year).padStart(4, '0')}-${pad2(month)}-${pad2(day)}T${pad2(hour)}:${pad2(minute)}:${pad2(secondOfDay % 60)}`;
}

