/**
 * Kubernetes' CEL format library (apiserver's cel/library/format.go, 1.32): `format.named(name)`
 * (an optional Format), `format.dns1123Label()` and the other named formats, and
 * `<Format>.validate(value)`: optional.none() when the value is valid, else an optional list of
 * the validation messages apimachinery gives. A Format is carried as a map under a reserved key
 * (as optionals are, values.ts), so that no rule can build one by hand.
 */
import type { CelFunc } from '@bufbuild/cel';
import { cel } from '../../cel/engine.js';
import { matchesFormat } from '../../api/schema/formats.js';
import { isDns1123Label, isDns1123Subdomain, isQualifiedName, isValidLabelValue } from '../../api/validation/names.js';
import { isDns1035Label } from '../dns-1035-label.js';
import { optionalOf } from './values.js';

/** The key that marks a map as a Format. */
const formatKey = '\u0000orch.format';

/** apimachinery's NameIs* with prefix: a trailing dash stands for what a generated suffix adds. */
function maskTrailingDash(s: string): string {
  return s.length > 1 && s.endsWith('-') ? `${s.slice(0, -1)}a` : s;
}

/** ParseRequestURI's outcome, in Go's words: an absolute URI or an absolute path. */
function parseRequestUri(s: string): string[] {
  if (s === '') return ['parse "": empty url'];
  if (s.startsWith('/') || /^[A-Za-z][A-Za-z0-9+.-]*:/.test(s)) return [];
  return [`parse ${JSON.stringify(s)}: invalid URI for request`];
}

interface Format {
  validate(s: string): string[];
  /** Kubernetes' MaxRegexSize: what validate is charged for, as a regex of that length */
  maxRegexSize: number;
}

const strfmt = (name: string, message: string) => (s: string) => (matchesFormat(name, s) ? [] : [message]);

/** The named formats (ConstantFormats); uri, uuid, byte and date sizes approximate the Go patterns' lengths. */
export const formats: Readonly<Record<string, Format>> = {
  dns1123Label: { validate: isDns1123Label, maxRegexSize: 30 },
  dns1123Subdomain: { validate: isDns1123Subdomain, maxRegexSize: 60 },
  dns1035Label: { validate: isDns1035Label, maxRegexSize: 30 },
  qualifiedName: { validate: isQualifiedName, maxRegexSize: 60 },
  dns1123LabelPrefix: { validate: (s) => isDns1123Label(maskTrailingDash(s)), maxRegexSize: 30 },
  dns1123SubdomainPrefix: { validate: (s) => isDns1123Subdomain(maskTrailingDash(s)), maxRegexSize: 60 },
  dns1035LabelPrefix: { validate: (s) => isDns1035Label(maskTrailingDash(s)), maxRegexSize: 30 },
  labelValue: { validate: isValidLabelValue, maxRegexSize: 40 },
  uri: { validate: parseRequestUri, maxRegexSize: 1000 },
  uuid: { validate: strfmt('uuid', 'does not match the UUID format'), maxRegexSize: 81 },
  byte: { validate: strfmt('byte', 'invalid base64'), maxRegexSize: 82 },
  date: { validate: strfmt('date', 'invalid date'), maxRegexSize: 70 },
  datetime: { validate: strfmt('datetime', 'invalid datetime'), maxRegexSize: 70 },
};

function formatValue(name: string): Map<string, string> {
  return new Map([[formatKey, name]]);
}

/** The Format a CEL value is, if it is one. */
export function formatOf(value: unknown): Format | undefined {
  if (!cel().isCelMap(value)) return undefined;
  const name = (value as unknown as ReadonlyMap<string, unknown>).get(formatKey);
  return typeof name === 'string' ? formats[name] : undefined;
}

/** The qualified names the library declares (their `format` namespace is not a variable). */
export const formatFunctionNames: ReadonlySet<string> = new Set(['format.named', ...Object.keys(formats).map((name) => `format.${name}`)]);

/** The library's functions (built by kubernetesLibraries, once). */
export function formatLibrary(): CelFunc[] {
  const { CelScalar, celFunc, celMethod } = cel();
  const { DYN, STRING } = CelScalar;
  return [
    celFunc('format.named', [STRING], DYN, (name) => optionalOf(Object.hasOwn(formats, name) ? formatValue(name) : undefined) as never),
    ...Object.keys(formats).map((name) => celFunc(`format.${name}`, [], DYN, () => formatValue(name) as never)),
    celMethod('validate', DYN, [STRING], DYN, function (value) {
      const format = formatOf(this);
      if (!format) throw new Error('no such overload: validate');
      const errs = format.validate(value);
      return optionalOf(errs.length ? errs : undefined) as never;
    }),
  ];
}
