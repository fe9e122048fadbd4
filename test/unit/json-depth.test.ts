/** The nesting scan that runs before JSON.parse. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { maxNestingDepth, parseJson } from '../../src/codec/json.js';

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('parseJson', () => {
  it('takes nesting up to the limit and refuses one level more, with Go\'s message', () => {
    assert.ok(Array.isArray(parseJson(nested(maxNestingDepth))));
    assert.throws(() => parseJson(nested(maxNestingDepth + 1)), { name: 'SyntaxError', message: "invalid character '[' exceeded max depth" });
    assert.throws(() => parseJson(`{"a":${'{"a":'.repeat(maxNestingDepth)}1${'}'.repeat(maxNestingDepth + 1)}`), { message: "invalid character '{' exceeded max depth" });
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    const text = `{"a":"${'['.repeat(5000)}\\"${'{'.repeat(5000)}"}`;
    assert.equal((parseJson(text) as { a: string }).a.length, 10001);
  });

  it('ends a string at a quote after an even run of backslashes', () => {
    const deep = `{"a":"x\\\\","b":${nested(maxNestingDepth)}}`;
    assert.throws(() => parseJson(deep), { message: "invalid character '[' exceeded max depth" });
    assert.equal((parseJson(`{"a":"x\\\\","b":${nested(maxNestingDepth - 1)}}`) as { a: string }).a, 'x\\');
  });

  it('leaves malformed JSON to JSON.parse', () => {
    assert.throws(() => parseJson('{"a":'), SyntaxError);
  });
});
