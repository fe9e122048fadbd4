/**
 * JSON bodies with their nesting bounded before anything is built. Go's decoder allows 10000
 * levels; the walks over objects here recurse per level on Node's stack, which holds about 3000
 * such frames, so the limit is 1000, checked by a scan of the text, with Go's message.
 */

import { goJsonSyntaxError, parseJsonAsGo } from '../api/validation/go-json-syntax.js';

export const maxNestingDepth = 1000;

const structural = /["[\]{}]/g;

/**
 * Throws a SyntaxError (as JSON.parse would) when arrays and objects nest deeper than the limit.
 * Jumps from one structural character to the next and over whole strings (large bodies are mostly
 * base64 strings), so it costs a fraction of JSON.parse.
 */
export function checkJsonDepth(text: string): void {
  if (text.length <= maxNestingDepth) return;
  let depth = 0;
  structural.lastIndex = 0;
  for (let m = structural.exec(text); m !== null; m = structural.exec(text)) {
    const c = text.charCodeAt(m.index);
    if (c === 0x22) {
      // the closing quote is the next one not escaped by an odd run of backslashes
      let end = m.index;
      for (;;) {
        end = text.indexOf('"', end + 1);
        if (end < 0) return; // unterminated: JSON.parse refuses it
        let backslashes = 0;
        while (text.charCodeAt(end - 1 - backslashes) === 0x5c) backslashes++;
        if (backslashes % 2 === 0) break;
      }
      structural.lastIndex = end + 1;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxNestingDepth) throw new SyntaxError(`invalid character '${text[m.index]}' exceeded max depth`);
    } else {
      depth--;
    }
  }
}

/**
 * JSON.parse after the depth check, with Go's messages: a syntax error reads as encoding/json's
 * (`bytes`, the text as received, lets an invalid UTF-8 byte be named as Go names it). Refused
 * text is scanned again with the limit, so that the first fault, of syntax or of depth, is told.
 */
export function parseJson(text: string, bytes?: Uint8Array): unknown {
  try {
    checkJsonDepth(text);
  } catch (err) {
    // the depth scan refuses only nesting; a syntax error before the deep part is told first
    if (!(err instanceof SyntaxError)) throw err;
    throw new SyntaxError(goJsonSyntaxError(bytes ?? text, maxNestingDepth) ?? err.message);
  }
  return parseJsonAsGo(text, bytes, maxNestingDepth);
}
