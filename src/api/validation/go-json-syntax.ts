/**
 * The message Go's encoding/json gives for a JSON syntax error, which Kubernetes passes on to
 * clients ("invalid character 'x' looking for beginning of object key string"). A port of the
 * error paths of Go's scanner (encoding/json/scanner.go): a byte-at-a-time state machine whose
 * first refusal is the message. It runs only after JSON.parse has refused the text.
 */

/** Go's limit on nesting (scanner.go maxNestingDepth). */
export const goMaxNestingDepth = 10000;

// scanner states, one per Go step function (the literal and \u states are parameterised)
const beginValue = 0;
const beginValueOrEmpty = 1; // after `[`
const beginStringOrEmpty = 2; // after `{`
const beginString = 3; // after `{"key": value,`
const endValue = 4;
const endTop = 5;
const inString = 6;
const inStringEsc = 7;
const inStringEscU = 8; // `hexLeft` digits still to come
const neg = 9;
const one = 10; // a non-zero integer part
const zero = 11;
const dot = 12;
const dot0 = 13;
const exp = 14;
const expSign = 15;
const exp0 = 16;
const literal = 17; // in `literalWord`, `literalAt` letters read

// what the innermost open composite awaits
const objectKey = 0;
const objectValue = 1;
const arrayValue = 2;

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
const singleCharEscapes = new Set(Array.from('bfnrt\\/"', (ch) => ch.charCodeAt(0)));

const namedEscapes: Readonly<Record<number, string>> = { 0x07: '\\a', 0x08: '\\b', 0x0c: '\\f', 0x0a: '\\n', 0x0d: '\\r', 0x09: '\\t', 0x0b: '\\v', 0x5c: '\\\\' };

/** Go's quoteChar: the byte as a rune (Latin-1), in strconv.Quote's escaping between single quotes. */
export function quoteChar(c: number): string {
  if (c === 0x27) return "'\\''";
  if (c === 0x22) return "'\"'";
  const named = namedEscapes[c];
  if (named) return `'${named}'`;
  // strconv.IsPrint over Latin-1: ASCII graphics and space, and U+00A1.. but the soft hyphen
  if ((c >= 0x20 && c < 0x7f) || (c >= 0xa1 && c !== 0xad)) return `'${String.fromCharCode(c)}'`;
  const hex = c.toString(16).padStart(2, '0');
  return c < 0x80 ? `'\\x${hex}'` : `'\\u00${hex}'`;
}

/** The first byte of a code point's UTF-8 form; a lone surrogate is encoded as U+FFFD. */
function leadByte(cp: number): number {
  if (cp < 0x800) return 0xc0 | (cp >> 6);
  if (cp >= 0xd800 && cp <= 0xdfff) return 0xef;
  if (cp < 0x10000) return 0xe0 | (cp >> 12);
  return 0xf0 | (cp >> 18);
}

class Scanner {
  private state = beginValue;
  private readonly stack: number[] = [];
  private hexLeft = 0;
  private literalWord = '';
  private literalAt = 0;
  private endedTop = false;
  error: string | undefined;

  constructor(private readonly maxDepth: number) {}

  /** Feeds one byte; false once the input is refused. */
  step(c: number): boolean {
    switch (this.state) {
      case beginValueOrEmpty:
        if (isSpace(c)) return true;
        if (c === 0x5d) return this.endValue(c);
        return this.beginValue(c);
      case beginValue: return this.beginValue(c);
      case beginStringOrEmpty:
        if (isSpace(c)) return true;
        if (c === 0x7d) {
          this.stack[this.stack.length - 1] = objectValue;
          return this.endValue(c);
        }
        return this.beginString(c);
      case beginString: return this.beginString(c);
      case endValue: return this.endValue(c);
      case endTop: return this.endTop(c);
      case inString:
        if (c === 0x22) this.state = endValue;
        else if (c === 0x5c) this.state = inStringEsc;
        else if (c < 0x20) return this.fail(c, 'in string literal');
        return true;
      case inStringEsc:
        if (c === 0x75) {
          this.state = inStringEscU;
          this.hexLeft = 4;
        } else if (singleCharEscapes.has(c)) {
          this.state = inString;
        } else {
          return this.fail(c, 'in string escape code');
        }
        return true;
      case inStringEscU:
        if (!isHex(c)) return this.fail(c, 'in \\u hexadecimal character escape');
        if (--this.hexLeft === 0) this.state = inString;
        return true;
      case neg:
        if (c === 0x30) this.state = zero;
        else if (isDigit(c)) this.state = one;
        else return this.fail(c, 'in numeric literal');
        return true;
      case one:
        if (isDigit(c)) return true;
        return this.zero(c);
      case zero: return this.zero(c);
      case dot:
        if (!isDigit(c)) return this.fail(c, 'after decimal point in numeric literal');
        this.state = dot0;
        return true;
      case dot0:
        if (isDigit(c)) return true;
        if (c === 0x65 || c === 0x45) {
          this.state = exp;
          return true;
        }
        return this.endValue(c);
      case exp:
        if (c === 0x2b || c === 0x2d) {
          this.state = expSign;
          return true;
        }
        return this.expSign(c);
      case expSign: return this.expSign(c);
      case exp0:
        if (isDigit(c)) return true;
        return this.endValue(c);
      default: {
        const expected = this.literalWord.charCodeAt(this.literalAt);
        if (c !== expected) return this.fail(c, `in literal ${this.literalWord} (expecting '${String.fromCharCode(expected)}')`);
        if (++this.literalAt === this.literalWord.length) this.state = endValue;
        return true;
      }
    }
  }

  /** Go's scanner.eof: the text ended; false when a value was left unfinished. */
  end(): boolean {
    if (this.error !== undefined) return false;
    if (this.endedTop) return true;
    // a space ends a number or a literal, or shows what it still lacked
    if (!this.step(0x20)) return false;
    if (this.endedTop) return true;
    this.error = 'unexpected end of JSON input';
    return false;
  }

  private fail(c: number, context: string): false {
    this.error = `invalid character ${quoteChar(c)} ${context}`;
    return false;
  }

  private push(c: number, awaits: number): boolean {
    this.stack.push(awaits);
    return this.stack.length <= this.maxDepth || this.fail(c, 'exceeded max depth');
  }

  private pop(): void {
    this.stack.pop();
    if (this.stack.length === 0) {
      this.state = endTop;
      this.endedTop = true;
    } else {
      this.state = endValue;
    }
  }

  private beginValue(c: number): boolean {
    if (isSpace(c)) return true;
    switch (c) {
      case 0x7b: this.state = beginStringOrEmpty; return this.push(c, objectKey);
      case 0x5b: this.state = beginValueOrEmpty; return this.push(c, arrayValue);
      case 0x22: this.state = inString; return true;
      case 0x2d: this.state = neg; return true;
      case 0x30: this.state = zero; return true;
      case 0x74: return this.beginLiteral('true');
      case 0x66: return this.beginLiteral('false');
      case 0x6e: return this.beginLiteral('null');
    }
    if (isDigit(c)) {
      this.state = one;
      return true;
    }
    return this.fail(c, 'looking for beginning of value');
  }

  private beginLiteral(word: string): true {
    this.state = literal;
    this.literalWord = word;
    this.literalAt = 1;
    return true;
  }

  private beginString(c: number): boolean {
    if (isSpace(c)) return true;
    if (c !== 0x22) return this.fail(c, 'looking for beginning of object key string');
    this.state = inString;
    return true;
  }

  private endValue(c: number): boolean {
    const n = this.stack.length;
    if (n === 0) {
      this.state = endTop;
      this.endedTop = true;
      return this.endTop(c);
    }
    if (isSpace(c)) {
      this.state = endValue;
      return true;
    }
    switch (this.stack[n - 1]) {
      case objectKey:
        if (c !== 0x3a) return this.fail(c, 'after object key');
        this.stack[n - 1] = objectValue;
        this.state = beginValue;
        return true;
      case objectValue:
        if (c === 0x2c) {
          this.stack[n - 1] = objectKey;
          this.state = beginString;
          return true;
        }
        if (c === 0x7d) {
          this.pop();
          return true;
        }
        return this.fail(c, 'after object key:value pair');
      default:
        if (c === 0x2c) {
          this.state = beginValue;
          return true;
        }
        if (c === 0x5d) {
          this.pop();
          return true;
        }
        return this.fail(c, 'after array element');
    }
  }

  private endTop(c: number): boolean {
    return isSpace(c) || this.fail(c, 'after top-level value');
  }

  private zero(c: number): boolean {
    if (c === 0x2e) this.state = dot;
    else if (c === 0x65 || c === 0x45) this.state = exp;
    else return this.endValue(c);
    return true;
  }

  private expSign(c: number): boolean {
    if (!isDigit(c)) return this.fail(c, 'in exponent of numeric literal');
    this.state = exp0;
    return true;
  }
}

/**
 * Go's message for the first syntax error in `input`, undefined when Go would accept it. A string
 * is read as its UTF-8 encoding (the bytes the client sent, unless they were not valid UTF-8:
 * pass those bytes to report an invalid one as Go does).
 */
export function goJsonSyntaxError(input: string | Uint8Array, maxDepth = goMaxNestingDepth): string | undefined {
  const scanner = new Scanner(maxDepth);
  if (typeof input === 'string') {
    for (let i = 0; i < input.length; i++) {
      let c = input.charCodeAt(i);
      if (c >= 0x80) {
        // only a lead byte can be refused: continuation bytes only ever sit inside strings, which take them
        const cp = input.codePointAt(i) as number;
        if (cp > 0xffff) i++;
        c = leadByte(cp);
      }
      if (!scanner.step(c)) return scanner.error;
    }
  } else {
    for (const c of input) if (!scanner.step(c)) return scanner.error;
  }
  return scanner.end() ? undefined : scanner.error;
}

/**
 * JSON.parse, with Go's message when the text is refused: throws a SyntaxError whose message is
 * encoding/json's (`bytes`, the text as received, lets an invalid UTF-8 byte be named as Go names
 * it; `maxDepth` the nesting limit the caller enforces).
 */
export function parseJsonAsGo(text: string, bytes?: Uint8Array, maxDepth = goMaxNestingDepth): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    throw new SyntaxError(goJsonSyntaxError(bytes ?? text, maxDepth) ?? err.message);
  }
}
