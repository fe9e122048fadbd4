/**
 * Go's `%q` (strconv.Quote), which Kubernetes uses to echo client-supplied names and field paths
 * in messages: printable characters as they are, the rest escaped.
 */

// unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space
const printable = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;
const named: Readonly<Record<string, string>> = {
  '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v', '"': '\\"', '\\': '\\\\',
};

export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    if (named[ch]) out += named[ch];
    // a lone surrogate is invalid UTF-8, which Go's decoders have already turned into U+FFFD
    else if (c >= 0xd800 && c <= 0xdfff) out += '\ufffd';
    else if (printable.test(ch)) out += ch;
    else if (c < 0x80) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else if (c < 0x10000) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += `\\U${c.toString(16).padStart(8, '0')}`;
  }
  return `${out}"`;
}
