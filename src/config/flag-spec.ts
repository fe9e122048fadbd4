/**
 * What a flag is: its value types (parsed and printed as pflag does) and the typed table entry
 * that ties a flag's name, type, default and validation to its ServerConfig key.
 */
import { isIP } from 'node:net';
import { formatDuration, parseDuration } from './duration.js';
import { type FeatureGates, parseBool, parseFeatureGates } from './feature-gates.js';
import { parseRuntimeConfig, type RuntimeConfig } from './runtime-config.js';
import { LOG_LEVELS, type LogLevel, type ServerConfig } from './server-config.js';

/** A command-line (or environment) error; the message names the flag. */
export class FlagError extends Error {
  override name = 'FlagError';
}

/** What each flag type parses to. */
export interface FlagValues {
  string: string;
  int: number;
  /** Go's float32 flags (rates) */
  float: number;
  bool: boolean;
  /** Milliseconds. */
  duration: number;
  stringList: string[];
  /** Repeated to add values; commas are part of a value (pflag's StringArray). */
  stringArray: string[];
  /** Repeated `key=value` pairs, a comma being part of the value (NewMapStringStringNoSplit). */
  stringMap: Record<string, string>;
  /** A literal IPv4 or IPv6 address. */
  ip: string;
  level: LogLevel;
  featureGates: FeatureGates;
  /** Comma-separated `key[=value]` pairs, repeats merging (cliflag.ConfigurationMap). */
  runtimeConfig: RuntimeConfig;
}
export type FlagType = keyof FlagValues;

export interface Kind<V> {
  /** Shown after the flag name in help, as pflag names its types; empty for bools, which take no value. */
  readonly typeName: string;
  /**
   * Parses one occurrence; throws an Error whose message becomes the tail of
   * pflag's `invalid argument` message. `previous` is the value so far;
   * `fresh` is true until the command line first sets the flag: lists append
   * on repeats but replace their default, as pflag's string slices do.
   */
  parse(text: string, previous: V | undefined, fresh: boolean): V;
  /** The default as help prints it; undefined for the zero value, which pflag leaves out. */
  show(value: V): string | undefined;
}

/** Go's %q; JSON quoting agrees with it for the printable text flags carry. */
export const quote = (text: string): string => JSON.stringify(text);

export const KINDS: { readonly [T in FlagType]: Kind<FlagValues[T]> } = {
  string: {
    typeName: 'string',
    parse: (text) => text,
    show: (value) => (value === '' ? undefined : quote(value)),
  },
  int: {
    typeName: 'int',
    parse: parseInt64,
    show: (value) => (value === 0 ? undefined : String(value)),
  },
  float: {
    typeName: 'float32',
    parse: parseFloatFlag,
    show: (value) => (value === 0 ? undefined : String(value)),
  },
  bool: {
    typeName: '',
    parse: parseBool,
    show: (value) => (value ? 'true' : undefined),
  },
  duration: {
    typeName: 'duration',
    parse: parseDuration,
    show: (value) => (value === 0 ? undefined : formatDuration(value)),
  },
  stringList: {
    typeName: 'strings',
    parse: (text, previous, fresh) => {
      const items = text === '' ? [] : text.split(',');
      return fresh || previous === undefined ? items : [...previous, ...items];
    },
    show: (value) => (value.length === 0 ? undefined : `[${value.join(',')}]`),
  },
  stringArray: {
    typeName: 'stringArray',
    parse: (text, previous, fresh) => (fresh || previous === undefined ? [text] : [...previous, text]),
    show: (value) => (value.length === 0 ? undefined : `[${value.join(',')}]`),
  },
  stringMap: {
    typeName: 'mapStringString',
    parse: (text, previous, fresh) => {
      const eq = text.indexOf('=');
      if (eq < 0) throw new Error(`${text} must be formatted as key=value`);
      return { ...(fresh || previous === undefined ? {} : previous), [text.slice(0, eq).trim()]: text.slice(eq + 1).trim() };
    },
    show: () => undefined,
  },
  ip: {
    typeName: 'ip',
    parse: (text) => {
      const address = text.trim();
      if (isIP(address) === 0) throw new Error(`failed to parse IP: ${quote(text)}`);
      return address;
    },
    show: (value) => value,
  },
  level: {
    typeName: 'level',
    parse: parseLevel,
    show: (value) => value,
  },
  featureGates: {
    typeName: 'mapStringBool',
    parse: (text, previous) => parseFeatureGates(text, previous),
    show: () => undefined,
  },
  runtimeConfig: {
    typeName: 'mapStringString',
    parse: (text, previous) => parseRuntimeConfig(text, previous),
    show: () => undefined,
  },
};

/**
 * Go's strconv.ParseInt(text, 0, 64), as pflag's int flags use: decimal,
 * 0x/0o/0b prefixes, a leading 0 for octal, and `_` between digits.
 * The range is JavaScript's safe integers rather than int64.
 */
function parseInt64(text: string): number {
  const syntax =
    /^[+-]?(?:0[xX](?:_?[0-9a-fA-F])+|0[bB](?:_?[01])+|0[oO](?:_?[0-7])+|0(?:_?[0-7])*|[1-9](?:_?\d)*)$/;
  if (!syntax.test(text)) throw new Error(`strconv.ParseInt: parsing ${quote(text)}: invalid syntax`);
  let digits = text.replace(/^[+-]/, '').replaceAll('_', '');
  if (/^0\d/.test(digits)) digits = `0o${digits.slice(1)}`; // BigInt reads "017" as decimal
  const magnitude = BigInt(digits);
  if (magnitude > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new Error(`strconv.ParseInt: parsing ${quote(text)}: value out of range`);
  }
  return text.startsWith('-') ? -Number(magnitude) : Number(magnitude);
}

/** Go's strconv.ParseFloat syntax (decimal, with an optional exponent), as pflag's float flags read it. */
function parseFloatFlag(text: string): number {
  if (!/^[+-]?(?:\d+(?:_?\d)*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/.test(text)) {
    throw new Error(`strconv.ParseFloat: parsing ${quote(text)}: invalid syntax`);
  }
  return Number(text.replaceAll('_', ''));
}

/**
 * A log level, either as klog verbosity (what -v means to Kubernetes
 * operators) or as a pino level name.
 */
function parseLevel(text: string): LogLevel {
  if (/^\d+$/.test(text)) {
    const verbosity = Number(text);
    // kube-apiserver logs each request (httplog) at -v=3: here those lines are debug
    return verbosity >= 6 ? 'trace' : verbosity >= 3 ? 'debug' : 'info';
  }
  const level = LOG_LEVELS.find((name) => name === text);
  if (level === undefined) {
    throw new Error(`want a klog verbosity (0, 1, 2, ...) or one of ${LOG_LEVELS.join(', ')}`);
  }
  return level;
}

/** Config keys that can hold a value of flag type T. */
export type KeysFor<T extends FlagType> = {
  [K in keyof ServerConfig]-?: FlagValues[T] extends ServerConfig[K] ? K : never;
}[keyof ServerConfig];

export interface FlagSpec<T extends FlagType> {
  readonly name: string;
  readonly shorthand?: string;
  readonly type: T;
  /** Several flags may share a key (-v and --log-level); the last one given wins. */
  readonly key: KeysFor<T>;
  readonly default?: FlagValues[T];
  readonly help: string;
  /** Checks the final value; returns the problem, worded like kube-apiserver's validation. */
  readonly validate?: (value: FlagValues[T], flag: string) => string | undefined;
}
export type AnyFlagSpec = { [T in FlagType]: FlagSpec<T> }[FlagType];

export const nonNegative = (value: number, flag: string) =>
  value < 0 ? `${flag} can not be negative value` : undefined;
