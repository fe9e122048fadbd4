// Field selectors, parsed and matched the way k8s.io/apimachinery
// pkg/fields/selector.go (fields.ParseSelector) does it, error texts included.

import { SelectorParseError } from './label-selector.js';

export interface FieldRequirement {
  field: string;
  operator: '=' | '!=';
  value: string;
}

/** Split on commas that are not backslash-escaped; escapes stay in the terms. */
function splitTerms(text: string): string[] {
  if (text.length === 0) return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inSlash) inSlash = false;
    else if (c === 0x5c) inSlash = true;
    else if (c === 0x2c) {
      terms.push(text.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(text.slice(start));
  return terms;
}

/** Tried in this order at each position, so "a==b" never leaves "=" in the value. */
const TERM_OPERATORS = ['!=', '==', '='] as const;

/** The field is everything before the first operator: fields have no escaping. */
function splitTerm(term: string): { field: string; op: '!=' | '==' | '='; rest: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of TERM_OPERATORS) {
      if (term.startsWith(op, i)) return { field: term.slice(0, i), op, rest: term.slice(i + op.length) };
    }
  }
  return undefined;
}

/** fields.UnescapeValue: only `\\`, `\,` and `\=` are escapes; bare `,` or `=` is an error. */
function unescapeValue(s: string): string {
  let out = '';
  let inSlash = false;
  for (const ch of s) {
    if (inSlash) {
      if (ch !== '\\' && ch !== ',' && ch !== '=') {
        throw new SelectorParseError(`invalid field selector: invalid escape sequence: \\${ch}`);
      }
      out += ch;
      inSlash = false;
    } else if (ch === '\\') {
      inSlash = true;
    } else if (ch === ',' || ch === '=') {
      // Go formats the rune with %v, i.e. as its code point number.
      throw new SelectorParseError(`invalid field selector: unescaped character in value: ${ch.codePointAt(0)}`);
    } else {
      out += ch;
    }
  }
  if (inSlash) throw new SelectorParseError('invalid field selector: invalid escape sequence: \\');
  return out;
}

const escapeValue = (s: string): string => s.replace(/[\\,=]/g, (c) => `\\${c}`);

export class FieldSelector {
  readonly requirements: readonly FieldRequirement[];
  readonly empty: boolean;

  private constructor(requirements: FieldRequirement[]) {
    this.requirements = requirements;
    this.empty = requirements.length === 0;
  }

  static parse(text: string): FieldSelector {
    const requirements: FieldRequirement[] = [];
    // Upstream sorts the raw terms, so both the canonical order and which bad term is reported follow it.
    for (const term of splitTerms(text).sort()) {
      if (term === '') continue;
      const parts = splitTerm(term);
      if (parts === undefined) throw new SelectorParseError(`invalid selector: '${text}'; can't understand '${term}'`);
      const value = unescapeValue(parts.rest);
      // Upstream's identity Transform turns a term with empty field and value ("=", "!=") into Everything.
      if (parts.field === '' && value === '') continue;
      requirements.push({ field: parts.field, operator: parts.op === '!=' ? '!=' : '=', value });
    }
    return new FieldSelector(requirements);
  }

  matches(fields: (field: string) => string | undefined): boolean {
    const reqs = this.requirements;
    for (let i = 0; i < reqs.length; i++) {
      const r = reqs[i]!;
      const actual = fields(r.field) ?? '';
      if ((actual === r.value) !== (r.operator === '=')) return false;
    }
    return true;
  }

  exactValue(field: string): string | undefined {
    for (const r of this.requirements) {
      if (r.field === field && r.operator === '=') return r.value;
    }
    return undefined;
  }

  checkFields(allowed: ReadonlySet<string>, unknownFieldMessage: (field: string) => string): void {
    for (const r of this.requirements) {
      if (!allowed.has(r.field)) throw new SelectorParseError(unknownFieldMessage(r.field));
    }
  }

  /** "==" prints as "="; values are re-escaped. */
  toString(): string {
    return this.requirements.map((r) => `${r.field}${r.operator}${escapeValue(r.value)}`).join(',');
  }
}
