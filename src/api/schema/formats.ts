/**
 * The string formats a CRD schema's `format` checks, as kube-openapi's strfmt registry (the
 * subset Kubernetes supports for CRDs); unknown formats are accepted as kube-openapi ignores them.
 * Messages name the format as the expected type: `spec.id in body must be of type uuid: "x"`.
 */
import { isIP } from 'node:net';

const uuid = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const uuidVersion = (v: string) => new RegExp(`^[0-9a-f]{8}-?[0-9a-f]{4}-?${v}[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$`, 'i');
const hostname = /^([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*\.?$/;
const email = /^[^@\s]+@[^@\s]+$/;
const mac = /^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$/;
const date = /^\d{4}-\d{2}-\d{2}$/;
const dateTime = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$/;
const duration = /^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h|d|w))+$/;
const base64 = /^[A-Za-z0-9+/]*={0,2}$/;
const hexcolor = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;

function isCidr(v: string): boolean {
  const slash = v.indexOf('/');
  if (slash < 0) return false;
  const family = isIP(v.slice(0, slash));
  const bits = v.slice(slash + 1);
  if (!family || !/^[0-9]{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

function isUri(v: string): boolean {
  try {
    return new URL(v).protocol.length > 1;
  } catch {
    return false;
  }
}

const checks: Readonly<Record<string, (v: string) => boolean>> = {
  uuid: (v) => uuid.test(v),
  uuid3: (v) => uuidVersion('3').test(v),
  uuid4: (v) => uuidVersion('4').test(v),
  uuid5: (v) => uuidVersion('5').test(v),
  hostname: (v) => v.length <= 255 && hostname.test(v),
  email: (v) => email.test(v),
  ipv4: (v) => isIP(v) === 4,
  ipv6: (v) => isIP(v) === 6,
  cidr: isCidr,
  mac: (v) => mac.test(v),
  date: (v) => date.test(v) && !Number.isNaN(Date.parse(v)),
  'date-time': (v) => dateTime.test(v) && !Number.isNaN(Date.parse(v.replace(' ', 'T'))),
  datetime: (v) => dateTime.test(v) && !Number.isNaN(Date.parse(v.replace(' ', 'T'))),
  duration: (v) => duration.test(v),
  byte: (v) => v.length % 4 === 0 && base64.test(v),
  uri: isUri,
  hexcolor: (v) => hexcolor.test(v),
};

/** False when `value` is not of the named format; true for formats not checked. */
export function matchesFormat(format: string, value: string): boolean {
  const check = Object.hasOwn(checks, format) ? checks[format] : undefined;
  return check ? check(value) : true;
}
