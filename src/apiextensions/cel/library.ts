/**
 * Kubernetes' CEL libraries for validation rules, registered on @bufbuild/cel (which brings the
 * standard library, RE2 `matches` and the strings extension): lists (isSorted, sum, min, max,
 * indexOf, lastIndexOf), regex (find, findAll), url, ip and cidr, quantity, format (format-library.ts),
 * and the optional type's hasValue/value/orValue for `optionalOldSelf`. URLs, IPs, CIDRs and quantities are carried
 * as their strings (the functions parse them), a simplification of Kubernetes' opaque types.
 */
import { isIP } from 'node:net';
import type { CelFunc } from '@bufbuild/cel';
import { cel, celExtensions } from '../../cel/engine.js';
import { optionalKey } from './values.js';
import { formatLibrary } from './format-library.js';

function items(list: unknown): unknown[] {
  return [...(list as Iterable<unknown>)];
}

function compare(a: unknown, b: unknown): number {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  if ((typeof a === 'number' || typeof a === 'bigint') && (typeof b === 'number' || typeof b === 'bigint')) return Number(a) - Number(b);
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  throw new Error(`no such overload: comparing ${typeof a} and ${typeof b}`);
}

function equal(a: unknown, b: unknown): boolean {
  if ((typeof a === 'number' || typeof a === 'bigint') && (typeof b === 'number' || typeof b === 'bigint')) return Number(a) === Number(b);
  return a === b;
}

const regexCache = new Map<string, RegExp>();
function regex(pattern: string): RegExp {
  let re = regexCache.get(pattern);
  if (!re) {
    re = new RegExp(pattern, 'g');
    if (regexCache.size > 1000) regexCache.clear();
    regexCache.set(pattern, re);
  }
  re.lastIndex = 0;
  return re;
}

function parseUrl(text: string): URL {
  try {
    return new URL(text);
  } catch {
    throw new Error(`URL parse error during conversion from string: parse "${text}": invalid URI for request`);
  }
}

function parseCidr(text: string): { address: string; bits: number; family: number } {
  const slash = text.indexOf('/');
  const address = slash < 0 ? '' : text.slice(0, slash);
  const family = isIP(address);
  const bits = Number(text.slice(slash + 1));
  if (!family || !/^\d{1,3}$/.test(text.slice(slash + 1)) || bits > (family === 4 ? 32 : 128)) throw new Error(`network address parse error during conversion from string: ${text}`);
  return { address, bits, family };
}

function ipBits(address: string): bigint {
  if (isIP(address) === 4) return address.split('.').reduce((acc, p) => (acc << 8n) + BigInt(p), 0n);
  const [head, tail = ''] = address.split('::');
  const parts = (s: string) => (s ? s.split(':') : []);
  const h = parts(head);
  const t = parts(tail);
  const groups = address.includes('::') ? [...h, ...Array(8 - h.length - t.length).fill('0'), ...t] : h;
  return groups.reduce((acc, g) => (acc << 16n) + BigInt(parseInt(g || '0', 16)), 0n);
}

const quantityPattern = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$/;
const suffixes: Readonly<Record<string, number>> = {
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
  n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
};

function quantityValue(text: string): number {
  const m = quantityPattern.exec(text);
  if (!m) throw new Error(`quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`);
  const suffix = m[2] ?? '';
  const factor = /^[eE]/.test(suffix) ? 10 ** Number(suffix.slice(1)) : suffixes[suffix];
  return Number(m[1]) * factor;
}

function optionalState(target: unknown): { present: boolean; value?: unknown } | undefined {
  if (!cel().isCelMap(target)) return undefined;
  const map = target as unknown as { has(k: string): boolean; get(k: string): unknown };
  if (!map.has(optionalKey)) return undefined;
  return { present: map.get(optionalKey) === true, value: map.get('value') };
}

let libraries: readonly CelFunc[] | undefined;

/** Every function of Kubernetes' libraries, built once, on first use (src/cel/engine.ts says why). */
export function kubernetesLibraries(): readonly CelFunc[] {
  return libraries ??= buildLibraries();
}

function buildLibraries(): readonly CelFunc[] {
  const { CelScalar, celFunc, celMethod, listType, mapType } = cel();
  const { DYN, BOOL, STRING, INT, DOUBLE } = CelScalar;
  const DYN_LIST = listType(DYN);

  const lists: CelFunc[] = [
    celMethod('isSorted', DYN_LIST, [], BOOL, function () {
      const xs = items(this);
      return xs.every((x, i) => i === 0 || compare(xs[i - 1], x) <= 0);
    }),
    celMethod('sum', DYN_LIST, [], DYN, function () {
      const xs = items(this);
      if (xs.length === 0) return 0n;
      return xs.reduce((acc: unknown, x) => (typeof acc === 'bigint' && typeof x === 'bigint' ? acc + x : Number(acc) + Number(x))) as never;
    }),
    celMethod('min', DYN_LIST, [], DYN, function () {
      const xs = items(this);
      if (xs.length === 0) throw new Error('min called on empty list');
      return xs.reduce((a, b) => (compare(b, a) < 0 ? b : a)) as never;
    }),
    celMethod('max', DYN_LIST, [], DYN, function () {
      const xs = items(this);
      if (xs.length === 0) throw new Error('max called on empty list');
      return xs.reduce((a, b) => (compare(b, a) > 0 ? b : a)) as never;
    }),
    celMethod('indexOf', DYN_LIST, [DYN], INT, function (x) { return BigInt(items(this).findIndex((y) => equal(y, x))); }),
    celMethod('lastIndexOf', DYN_LIST, [DYN], INT, function (x) {
      const xs = items(this);
      for (let i = xs.length - 1; i >= 0; i--) if (equal(xs[i], x)) return BigInt(i);
      return -1n;
    }),
  ];

  const regexes: CelFunc[] = [
    celMethod('find', STRING, [STRING], STRING, function (pattern) { return regex(pattern).exec(this)?.[0] ?? ''; }),
    celMethod('findAll', STRING, [STRING], listType(STRING), function (pattern) { return [...this.matchAll(regex(pattern))].map((m) => m[0]); }),
    celMethod('findAll', STRING, [STRING, INT], listType(STRING), function (pattern, limit) {
      const all = [...this.matchAll(regex(pattern))].map((m) => m[0]);
      return limit < 0n ? all : all.slice(0, Number(limit));
    }),
  ];

  const urls: CelFunc[] = [
    celFunc('url', [STRING], STRING, (text) => { parseUrl(text); return text; }),
    celFunc('isURL', [STRING], BOOL, (text) => { try { new URL(text); return true; } catch { return false; } }),
    celMethod('getScheme', STRING, [], STRING, function () { return parseUrl(this).protocol.replace(/:$/, ''); }),
    celMethod('getHost', STRING, [], STRING, function () { return parseUrl(this).host; }),
    celMethod('getHostname', STRING, [], STRING, function () { return parseUrl(this).hostname.replace(/^\[|\]$/g, ''); }),
    celMethod('getPort', STRING, [], STRING, function () { return parseUrl(this).port; }),
    celMethod('getEscapedPath', STRING, [], STRING, function () { return parseUrl(this).pathname; }),
    celMethod('getQuery', STRING, [], mapType(STRING, listType(STRING)), function () {
      const out = new Map<string, string[]>();
      for (const [k, v] of parseUrl(this).searchParams) out.set(k, [...(out.get(k) ?? []), v]);
      return out as never;
    }),
  ];

  const networks: CelFunc[] = [
    celFunc('isIP', [STRING], BOOL, (text) => isIP(text) !== 0),
    celFunc('ip', [STRING], STRING, (text) => { if (!isIP(text)) throw new Error(`IP Address ${JSON.stringify(text)} parse error during conversion from string`); return text; }),
    celMethod('family', STRING, [], INT, function () { return BigInt(isIP(this)); }),
    celMethod('isLoopback', STRING, [], BOOL, function () { return isIP(this) === 4 ? this.startsWith('127.') : ipBits(this) === 1n; }),
    celFunc('isCIDR', [STRING], BOOL, (text) => { try { parseCidr(text); return true; } catch { return false; } }),
    celFunc('cidr', [STRING], STRING, (text) => { parseCidr(text); return text; }),
    celMethod('prefixLength', STRING, [], INT, function () { return BigInt(parseCidr(this).bits); }),
    celMethod('containsIP', STRING, [STRING], BOOL, function (ip) {
      const net = parseCidr(this);
      if (isIP(ip) !== net.family) return false;
      const width = BigInt(net.family === 4 ? 32 : 128);
      const shift = width - BigInt(net.bits);
      return ipBits(ip) >> shift === ipBits(net.address) >> shift;
    }),
  ];

  const quantities: CelFunc[] = [
    celFunc('isQuantity', [STRING], BOOL, (text) => quantityPattern.test(text)),
    celFunc('quantity', [STRING], STRING, (text) => { quantityValue(text); return text; }),
    celMethod('isGreaterThan', STRING, [STRING], BOOL, function (other) { return quantityValue(this) > quantityValue(other); }),
    celMethod('isLessThan', STRING, [STRING], BOOL, function (other) { return quantityValue(this) < quantityValue(other); }),
    celMethod('compareTo', STRING, [STRING], INT, function (other) { return BigInt(Math.sign(quantityValue(this) - quantityValue(other))); }),
    celMethod('asApproximateFloat', STRING, [], DOUBLE, function () { return quantityValue(this); }),
    celMethod('asInteger', STRING, [], INT, function () {
      const v = quantityValue(this);
      if (!Number.isSafeInteger(v)) throw new Error('cannot convert value to integer');
      return BigInt(v);
    }),
    celMethod('sign', STRING, [], INT, function () { return BigInt(Math.sign(quantityValue(this))); }),
  ];

  const optionals: CelFunc[] = [
    celMethod('hasValue', DYN, [], BOOL, function () { return optionalState(this)?.present ?? true; }),
    celMethod('value', DYN, [], DYN, function () {
      const state = optionalState(this);
      if (state && !state.present) throw new Error('optional.none() dereference');
      return (state ? state.value : this) as never;
    }),
    celMethod('orValue', DYN, [DYN], DYN, function (fallback) {
      const state = optionalState(this);
      return (state ? (state.present ? state.value : fallback) : this) as never;
    }),
  ];

  return [...celExtensions().strings, ...lists, ...regexes, ...urls, ...networks, ...quantities, ...optionals, ...formatLibrary()];
}
