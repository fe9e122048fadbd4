// Label selectors, parsed, validated and matched the way k8s.io/apimachinery
// pkg/labels/selector.go (labels.Parse) does it. Error texts are reproduced
// byte for byte because the server returns them verbatim in a 400 Status.

import { goQuote } from '../go-quote.js';
import { isQualifiedName, isValidLabelValue } from '../validation/names.js';

export type LabelOperator = 'in' | 'notin' | 'exists' | '!' | '=' | '==' | '!=' | 'gt' | 'lt';

export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  values: string[];
}

export class SelectorParseError extends Error {
  override readonly name = 'SelectorParseError';
}

/** field.Invalid(path, value, detail).Error() */
const invalid = (path: string, value: string, detail: string): string =>
  `${path}: Invalid value: ${goQuote(value)}: ${detail}`;

// ---------------------------------------------------------------------------
// strconv.ParseInt(s, 10, 64) for the gt/lt operators.

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Optional sign then decimal digits, within int64; undefined where Go returns an error. Allocation-free below 2^53. */
function parseInt64(s: string): number | bigint | undefined {
  const len = s.length;
  const first = s.charCodeAt(0);
  const start = first === 0x2b || first === 0x2d ? 1 : 0;
  if (start === len) return undefined;
  let n = 0;
  for (let i = start; i < len; i++) {
    const d = s.charCodeAt(i) - 0x30;
    if (d < 0 || d > 9) return undefined;
    n = n * 10 + d;
  }
  // Exact while every partial result stays below 2^53; past that only BigInt is.
  if (n <= Number.MAX_SAFE_INTEGER) return first === 0x2d ? -n : n;
  const big = BigInt(s);
  return big < INT64_MIN || big > INT64_MAX ? undefined : big;
}

// ---------------------------------------------------------------------------
// Lexer. Mirrors the Go lexer, including that it reads through a helper that
// returns 0 at end of input, so a NUL character ends the token being scanned.

type TokenKind = 'end' | 'ident' | 'in' | 'notin' | '(' | ')' | ',' | '!' | '=' | '==' | '!=' | '>' | '<';

interface Token {
  kind: TokenKind;
  text: string;
}

const SYMBOLS: ReadonlySet<string> = new Set(['(', ')', ',', '!', '=', '==', '!=', '>', '<']);
const END: Token = { kind: 'end', text: '' };

const isWhitespace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;

function isSpecial(c: number): boolean {
  switch (c) {
    case 0x3d: case 0x21: case 0x28: case 0x29: case 0x2c: case 0x3e: case 0x3c: // = ! ( ) , > <
      return true;
  }
  return false;
}

function tokenize(s: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  const read = (): number => (pos < s.length ? s.charCodeAt(pos++) : 0);

  for (;;) {
    let c = read();
    while (isWhitespace(c)) c = read();
    if (c === 0) {
      tokens.push(END);
      return tokens;
    }
    pos--;
    if (isSpecial(c)) {
      // Every symbol character is a token on its own; extend while the run still is one ("!=", "==").
      let text = String.fromCharCode(read());
      for (;;) {
        const ch = read();
        if (ch === 0) break;
        const longer = text + String.fromCharCode(ch);
        if (!SYMBOLS.has(longer)) {
          pos--;
          break;
        }
        text = longer;
      }
      tokens.push({ kind: text as TokenKind, text });
    } else {
      let text = '';
      for (;;) {
        const ch = read();
        if (ch === 0) break;
        if (isSpecial(ch) || isWhitespace(ch)) {
          pos--;
          break;
        }
        text += String.fromCharCode(ch);
      }
      const kind = text === 'in' || text === 'notin' ? text : 'ident';
      tokens.push({ kind, text });
    }
  }
}

// ---------------------------------------------------------------------------
// Parser: recursive descent with one token of lookahead, like upstream.

/** The operators as upstream lists them in "expected:" messages (selection.Operator values). */
const BINARY_OPERATORS = 'in, notin, =, ==, !=, gt, lt';

/** A failure inside one requirement; parse() prefixes it with "unable to parse requirement: ". */
class RequirementError extends Error {}

/** In value position the keywords `in`/`notin` are plain identifiers ("x in (in)"). */
function asValue(token: Token): Token {
  return token.kind === 'in' || token.kind === 'notin' ? { kind: 'ident', text: token.text } : token;
}

class Parser {
  private position = 0;

  constructor(private readonly tokens: readonly Token[]) {}

  private peek(): Token {
    return asValue(this.tokens[this.position]!);
  }

  private next(): Token {
    return asValue(this.tokens[this.position++]!);
  }

  parse(): LabelRequirement[] {
    const requirements: LabelRequirement[] = [];
    for (;;) {
      const token = this.peek();
      switch (token.kind) {
        case 'ident':
        case '!': {
          try {
            requirements.push(this.parseRequirement());
          } catch (err) {
            if (!(err instanceof RequirementError)) throw err;
            throw new SelectorParseError(`unable to parse requirement: ${err.message}`);
          }
          const sep = this.next();
          if (sep.kind === 'end') return requirements;
          if (sep.kind !== ',') throw new SelectorParseError(`found '${sep.text}', expected: ',' or 'end of string'`);
          const after = this.peek();
          if (after.kind !== 'ident' && after.kind !== '!') {
            throw new SelectorParseError(`found '${after.text}', expected: identifier after ','`);
          }
          break;
        }
        case 'end':
          return requirements;
        default:
          throw new SelectorParseError(`found '${token.text}', expected: !, identifier, or 'end of string'`);
      }
    }
  }

  private parseRequirement(): LabelRequirement {
    const { key, operator: unary } = this.parseKeyAndInferOperator();
    // "!key" is complete even when more follows; the caller then rejects the leftover token.
    if (unary !== undefined) return newRequirement(key, unary, []);
    const operator = this.parseOperator();
    const values = operator === 'in' || operator === 'notin' ? this.parseValues() : this.parseExactValue();
    // Upstream collects values in a sets.String and hands over its sorted List().
    return newRequirement(key, operator, [...values].sort());
  }

  private parseKeyAndInferOperator(): { key: string; operator: 'exists' | '!' | undefined } {
    let operator: 'exists' | '!' | undefined;
    let token = this.next();
    if (token.kind === '!') {
      operator = '!';
      token = this.next();
    }
    if (token.kind !== 'ident') throw new RequirementError(`found '${token.text}', expected: identifier`);
    const key = token.text;
    const errs = isQualifiedName(key);
    // The parser validates the key with a nil field.Path, which prints as "<nil>".
    if (errs.length > 0) throw new RequirementError(invalid('<nil>', key, errs.join('; ')));
    const following = this.peek().kind;
    if ((following === 'end' || following === ',') && operator === undefined) operator = 'exists';
    return { key, operator };
  }

  private parseOperator(): Exclude<LabelOperator, 'exists' | '!'> {
    // Operator position: keywords keep their meaning, so read the raw token.
    const token = this.tokens[this.position++]!;
    switch (token.kind) {
      case 'in': case 'notin': case '=': case '==': case '!=':
        return token.kind;
      case '>':
        return 'gt';
      case '<':
        return 'lt';
      default:
        throw new RequirementError(`found '${token.text}', expected: ${BINARY_OPERATORS}`);
    }
  }

  private parseValues(): Set<string> {
    const open = this.next();
    if (open.kind !== '(') throw new RequirementError(`found '${open.text}' expected: '('`);
    const first = this.peek();
    switch (first.kind) {
      case 'ident':
      case ',': {
        const values = this.parseIdentifiersList();
        this.position++; // the ')' the list stopped at
        return values;
      }
      case ')':
        this.position++;
        return new Set(['']);
      default:
        throw new RequirementError(`found '${first.text}', expected: ',', ')' or identifier`);
    }
  }

  /** Comma-separated, possibly empty identifiers: "(a,,b)", "(,a)", "(a,)" all include "". */
  private parseIdentifiersList(): Set<string> {
    const values = new Set<string>();
    for (;;) {
      const token = this.next();
      switch (token.kind) {
        case 'ident': {
          values.add(token.text);
          const following = this.peek();
          if (following.kind === ')') return values;
          if (following.kind !== ',') throw new RequirementError(`found '${following.text}', expected: ',' or ')'`);
          break;
        }
        case ',': {
          if (values.size === 0) values.add('');
          const following = this.peek().kind;
          if (following === ')') {
            values.add('');
            return values;
          }
          if (following === ',') {
            this.position++;
            values.add('');
          }
          break;
        }
        default:
          throw new RequirementError(`found '${token.text}', expected: ',', or identifier`);
      }
    }
  }

  private parseExactValue(): Set<string> {
    const following = this.peek().kind;
    if (following === 'end' || following === ',') return new Set(['']);
    const token = this.next();
    if (token.kind !== 'ident') throw new RequirementError(`found '${token.text}', expected: identifier`);
    return new Set([token.text]);
  }
}

/** labels.NewRequirement's checks that the parser can reach, aggregated like field.ErrorList.ToAggregate. */
function newRequirement(key: string, operator: LabelOperator, values: string[]): LabelRequirement {
  const errs: string[] = [];
  if (operator === 'gt' || operator === 'lt') {
    values.forEach((v, i) => {
      if (parseInt64(v) === undefined) {
        errs.push(invalid(`values[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"));
      }
    });
  }
  values.forEach((v, i) => {
    const valueErrs = isValidLabelValue(v);
    if (valueErrs.length > 0) errs.push(invalid(`values[${i}][${key}]`, v, valueErrs.join('; ')));
  });
  const unique = [...new Set(errs)];
  if (unique.length === 1) throw new RequirementError(unique[0]);
  if (unique.length > 1) throw new RequirementError(`[${unique.join(', ')}]`);
  return { key, operator, values };
}

// ---------------------------------------------------------------------------

const hasOwn = Object.prototype.hasOwnProperty;

export class LabelSelector {
  readonly requirements: readonly LabelRequirement[];
  readonly empty: boolean;
  /** Parsed integer bound per gt/lt requirement (same index as `requirements`). */
  readonly #bounds: readonly (number | bigint | undefined)[];

  private constructor(requirements: LabelRequirement[]) {
    // Stable sort by key, as upstream's sort.Sort(ByKey) gives deterministic output.
    requirements.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    this.requirements = requirements;
    this.empty = requirements.length === 0;
    this.#bounds = requirements.map((r) =>
      r.operator === 'gt' || r.operator === 'lt' ? parseInt64(r.values[0]!) : undefined,
    );
  }

  /** labels.Parse: "" (or only whitespace) selects everything. */
  static parse(text: string): LabelSelector {
    return new LabelSelector(new Parser(tokenize(text)).parse());
  }

  matches(labels: Readonly<Record<string, string>> | undefined): boolean {
    const reqs = this.requirements;
    for (let i = 0; i < reqs.length; i++) {
      const r = reqs[i]!;
      // Own properties only: "constructor" is a valid label key.
      const has = labels !== undefined && hasOwn.call(labels, r.key);
      switch (r.operator) {
        case 'in':
        case '=':
        case '==':
          if (!has || !r.values.includes(labels[r.key]!)) return false;
          break;
        case 'notin':
        case '!=':
          if (has && r.values.includes(labels[r.key]!)) return false;
          break;
        case 'exists':
          if (!has) return false;
          break;
        case '!':
          if (has) return false;
          break;
        case 'gt':
        case 'lt': {
          if (!has) return false;
          const value = parseInt64(labels[r.key]!);
          const bound = this.#bounds[i]!;
          if (value === undefined || (r.operator === 'gt' ? !(value > bound) : !(value < bound))) return false;
          break;
        }
      }
    }
    return true;
  }

  /** Requirement.String joined by ","; values are already sorted and de-duplicated. */
  toString(): string {
    return this.requirements.map(requirementString).join(',');
  }
}

function requirementString(r: LabelRequirement): string {
  const values = r.values.join(',');
  switch (r.operator) {
    case 'exists':
      return r.key;
    case '!':
      return `!${r.key}`;
    case 'in':
    case 'notin':
      return `${r.key} ${r.operator} (${values})`;
    case 'gt':
      return `${r.key}>${values}`;
    case 'lt':
      return `${r.key}<${values}`;
    default:
      return `${r.key}${r.operator}${values}`;
  }
}
