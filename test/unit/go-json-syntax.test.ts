/** Go's encoding/json syntax-error messages, as json.Unmarshal gives them. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { goJsonSyntaxError, parseJsonAsGo, quoteChar } from '../../src/api/validation/go-json-syntax.js';
import { parseJson } from '../../src/codec/json.js';

// input → Go's err.Error() (from encoding/json's decode_test.go where it has the case, else its scanner.go)
const cases: ReadonlyArray<readonly [string, string]> = [
  ['', 'unexpected end of JSON input'],
  ['   ', 'unexpected end of JSON input'],
  ['[2, 3', 'unexpected end of JSON input'],
  ['{"a":', 'unexpected end of JSON input'],
  ['"abc', 'unexpected end of JSON input'],
  ['x', "invalid character 'x' looking for beginning of value"],
  ['\x01 42', "invalid character '\\x01' looking for beginning of value"],
  ['[1,]', "invalid character ']' looking for beginning of value"],
  ['{"apiVersion":"v1","kind":"ConfigMap",x}', "invalid character 'x' looking for beginning of object key string"],
  ['{]', "invalid character ']' looking for beginning of object key string"],
  ['{"a":1,}', "invalid character '}' looking for beginning of object key string"],
  ["{'a':1}", "invalid character '\\'' looking for beginning of object key string"],
  ['{"X": "foo", "Y"}', "invalid character '}' after object key"],
  ['{"X": "foo" "Y": "bar"}', 'invalid character \'"\' after object key:value pair'],
  ['{"X":12x}', "invalid character 'x' after object key:value pair"],
  ['[1, 2, 3+]', "invalid character '+' after array element"],
  [' 42 \x01', "invalid character '\\x01' after top-level value"],
  ['{} x', "invalid character 'x' after top-level value"],
  ['{"a":1}}', "invalid character '}' after top-level value"],
  ['01', "invalid character '1' after top-level value"],
  ['"a\tb"', "invalid character '\\t' in string literal"],
  ['"a\nb"', "invalid character '\\n' in string literal"],
  ['"a\x00b"', "invalid character '\\x00' in string literal"],
  ['"a\\qb"', "invalid character 'q' in string escape code"],
  ['"\\u12g4"', "invalid character 'g' in \\u hexadecimal character escape"],
  ['"\\u"', 'invalid character \'"\' in \\u hexadecimal character escape'],
  ['{"F3": -}', "invalid character '}' in numeric literal"],
  ['-', "invalid character ' ' in numeric literal"],
  ['-a', "invalid character 'a' in numeric literal"],
  ['1.', "invalid character ' ' after decimal point in numeric literal"],
  ['[1.e5]', "invalid character 'e' after decimal point in numeric literal"],
  ['1e', "invalid character ' ' in exponent of numeric literal"],
  ['1e+]', "invalid character ']' in exponent of numeric literal"],
  ['tru', "invalid character ' ' in literal true (expecting 'e')"],
  ['trux', "invalid character 'x' in literal true (expecting 'e')"],
  ['tx', "invalid character 'x' in literal true (expecting 'r')"],
  ['[fals]', "invalid character ']' in literal false (expecting 'e')"],
  ['not json', "invalid character 'o' in literal null (expecting 'u')"],
  ['{"data":nul}', "invalid character '}' in literal null (expecting 'l')"],
  ['\\', "invalid character '\\\\' looking for beginning of value"],
  // Go steps through UTF-8 bytes and names the first byte of a character, read as Latin-1
  ['é', "invalid character 'Ã' looking for beginning of value"],
  ['\ufeff{}', "invalid character 'ï' looking for beginning of value"],
  ['[1 ✓]', "invalid character 'â' after array element"],
  ['😀', "invalid character 'ð' looking for beginning of value"],
  ['\u0080', "invalid character 'Â' looking for beginning of value"],
  ['{"é": 1 "x"}', 'invalid character \'"\' after object key:value pair'],
];

describe('goJsonSyntaxError', () => {
  for (const [input, message] of cases) {
    it(`${JSON.stringify(input)} → ${message}`, () => {
      assert.equal(goJsonSyntaxError(input), message);
      assert.equal(goJsonSyntaxError(Buffer.from(input, 'utf8')), message);
      assert.throws(() => parseJson(input), { name: 'SyntaxError', message });
    });
  }

  it('accepts what JSON.parse accepts', () => {
    for (const text of ['{}', ' [1, -0.5e+3, "a\\u00e9\\n", true, false, null, {"k": {}}] ', '"\u00e9😀"', '0', '-0', '1E5']) {
      JSON.parse(text);
      assert.equal(goJsonSyntaxError(text), undefined, text);
    }
  });

  it('names an invalid UTF-8 byte as Go does when given the bytes', () => {
    assert.equal(goJsonSyntaxError(Buffer.from([0x5b, 0xff, 0x5d])), "invalid character 'ÿ' looking for beginning of value");
    assert.equal(goJsonSyntaxError(Buffer.from([0x5b, 0x85, 0x5d])), "invalid character '\\u0085' looking for beginning of value");
    assert.throws(() => parseJson('[\ufffd]', Buffer.from([0x5b, 0xff, 0x5d])), { message: "invalid character 'ÿ' looking for beginning of value" });
  });

  it('refuses nesting past the limit it is given, or the first fault before it', () => {
    assert.equal(goJsonSyntaxError('[[[1]]]', 2), "invalid character '[' exceeded max depth");
    assert.equal(goJsonSyntaxError('[x[[1]]]', 2), "invalid character 'x' looking for beginning of value");
    assert.throws(() => parseJson(`{x${'['.repeat(2000)}`), { message: "invalid character 'x' looking for beginning of object key string" });
  });
});

describe('quoteChar', () => {
  it('quotes as strconv.Quote does, with single quotes', () => {
    const expected: ReadonlyArray<readonly [number, string]> = [
      [0x27, "'\\''"], [0x22, "'\"'"], [0x5c, "'\\\\'"], [0x07, "'\\a'"], [0x0b, "'\\v'"], [0x1f, "'\\x1f'"],
      [0x7f, "'\\x7f'"], [0x20, "' '"], [0x9f, "'\\u009f'"], [0xa0, "'\\u00a0'"], [0xa1, "'¡'"], [0xad, "'\\u00ad'"], [0xff, "'ÿ'"],
    ];
    for (const [c, quoted] of expected) assert.equal(quoteChar(c), quoted, c.toString(16));
  });
});

describe('the scanner against JSON.parse (fast-check)', () => {
  it('refuses exactly the texts JSON.parse refuses, never throwing, and parseJsonAsGo says why in Go\'s words', () => {
    // JSON-ish text: fragments of valid documents mixed with stray characters, so both sides are hit
    const piece = fc.oneof(
      fc.constantFrom('{', '}', '[', ']', ':', ',', '"', '\\', 'true', 'fals', 'null', '-', '0', '1.5e3', '01', ' ', '\n', '\u00e9', '\u0001', 'x'),
      fc.json(),
    );
    fc.assert(fc.property(fc.array(piece, { maxLength: 12 }).map((parts) => parts.join('')), (text) => {
      let valid = true;
      try { JSON.parse(text); } catch { valid = false; }
      const why = goJsonSyntaxError(text);
      assert.equal(why === undefined, valid, `${JSON.stringify(text)}: ${why}`);
      if (!valid) assert.throws(() => parseJsonAsGo(text), { name: 'SyntaxError', message: why });
    }), { numRuns: 2000 });
  });
});
