/** The Warning header writer: k8s.io/apiserver's recorder rules (dedupe, escaping, control characters, truncation). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { warningHeaders } from '../../src/http/warning-header.js';

const utf8 = (latin1: string) => Buffer.from(latin1, 'latin1').toString('utf8');

describe('warningHeaders', () => {
  it('quotes each text once, escaping quotes and backslashes, as UTF-8 bytes', () => {
    const out = warningHeaders(['a "b" \\c', 'Ā', 'a "b" \\c', '']);
    assert.deepEqual(out.map(utf8), ['299 - "a \\"b\\" \\\\c"', '299 - "Ā"']);
    for (const v of out) assert.match(v, /^[\t\x20-\x7e\x80-\xff]*$/, 'every character is one header byte');
  });

  it('drops texts with control characters or lone surrogates, as NewWarningHeader refuses them', () => {
    assert.deepEqual(warningHeaders(['a\nb', 'c\u0085', 'd\ud800', 'ok']).map(utf8), ['299 - "ok"']);
  });

  it('cuts every text to 256 characters once the total passes 4096, and leaves out what does not fit', () => {
    const long = (c: string) => c.repeat(1000);
    const out = warningHeaders(['a', 'b', 'c', 'd', 'e'].map(long).concat('x'.repeat(300)).concat(Array.from({ length: 20 }, (_, i) => `w${i}`.repeat(200))));
    assert.equal(out[0], `299 - "${'a'.repeat(256)}"`);
    assert.equal(out[5], `299 - "${'x'.repeat(256)}"`);
    // 16 texts of 256 characters reach 4096; nothing after them is written
    assert.equal(out.length, 16);
  });

  it('writes everything while the total stays within 4096 characters', () => {
    const out = warningHeaders(['a'.repeat(4000), 'b'.repeat(96)]);
    assert.deepEqual(out, [`299 - "${'a'.repeat(4000)}"`, `299 - "${'b'.repeat(96)}"`]);
  });
});
