/**
 * `Warning` response headers as k8s.io/apiserver's warning recorder writes them: each text once,
 * as `299 - "<text>"` with `"` and `\` escaped and everything else as its UTF-8 bytes
 * (net.NewWarningHeader); a text with control characters is dropped, as NewWarningHeader refuses
 * it; past 4096 characters in all, every text is cut to 256 characters and what still does not
 * fit is left out (filters/warning.go).
 *
 * Node writes header strings as Latin-1, one byte per character, and throws on anything above
 * U+00FF; so the header is spelled as a string whose characters are its UTF-8 bytes.
 */

const truncateAtTotalRunes = 4 * 1024;
const truncateItemRunes = 256;

/** unicode.IsControl (C0, DEL, C1), or a lone surrogate, which is no valid UTF-8. */
const unwritable = /[\u0000-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function headerOf(text: string): string {
  const quoted = `299 - "${text.replace(/["\\]/g, (c) => `\\${c}`)}"`;
  return Buffer.from(quoted, 'utf8').toString('latin1');
}

function cut(runes: readonly string[]): string[] {
  return runes.length > truncateItemRunes ? runes.slice(0, truncateItemRunes) : [...runes];
}

/** The Warning header values for the texts a request collected, in order: the recorder's AddWarning, replayed. */
export function warningHeaders(texts: readonly string[]): string[] {
  const seen = new Set<string>();
  const ordered: string[][] = [];
  let headers: string[] = [];
  let written = 0;
  let truncating = false;
  for (const text of texts) {
    if (text.length === 0) continue;
    if (truncating && written >= truncateAtTotalRunes) break;
    if (seen.has(text)) continue;
    seen.add(text);
    const runes = [...text];
    ordered.push(runes);
    const item = (truncating ? cut(runes) : runes).join('');
    if (unwritable.test(item)) continue;
    if (written + runes.length <= truncateAtTotalRunes || truncating) {
      written += truncating ? Math.min(runes.length, truncateItemRunes) : runes.length;
      headers.push(headerOf(item));
      continue;
    }
    // past the limit: start again with every text so far cut short
    truncating = true;
    written = 0;
    headers = [];
    for (const earlier of ordered) {
      const short = cut(earlier);
      const shortText = short.join('');
      if (unwritable.test(shortText)) continue;
      written += short.length;
      headers.push(headerOf(shortText));
    }
  }
  return headers;
}
