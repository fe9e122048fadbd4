/**
 * JSON bodies with their nesting bounded before anything is built. Go's decoder allows 10000
 * levels; the walks over objects here recurse per level on Node's stack, which holds about 3000
 * such frames, so the limit is 1000, checked by a scan of the text, with Go's message.
 */

export const maxNestingDepth = 1000;

/** Throws a SyntaxError (as JSON.parse would) when arrays and objects nest deeper than the limit. */
export function checkJsonDepth(text: string): void {
  if (text.length <= maxNestingDepth) return;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxNestingDepth) throw new SyntaxError(`invalid character '${text[i]}' exceeded max depth`);
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
}

/** JSON.parse after the depth check. */
export function parseJson(text: string): unknown {
  checkJsonDepth(text);
  return JSON.parse(text);
}
