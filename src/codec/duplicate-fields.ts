/**
 * Finds duplicate keys in a JSON document, which JSON.parse silently resolves (last wins) but
 * kube-apiserver reports (`duplicate field "metadata.name"`: a warning, or 400 under Strict).
 * One pass over text already known to be valid JSON; values are skipped, not built.
 */

export function duplicateFields(text: string): string[] {
  const found: string[] = [];
  let i = 0;

  const ws = () => { while (i < text.length && (text[i] === ' ' || text[i] === '\n' || text[i] === '\r' || text[i] === '\t')) i++; };

  /** Reads a string starting at its opening quote; returns its decoded value. */
  const str = (): string => {
    const start = i++;
    let escaped = false;
    while (i < text.length && text[i] !== '"') {
      if (text[i] === '\\') { escaped = true; i++; }
      i++;
    }
    i++;
    const raw = text.slice(start, i);
    return escaped ? (JSON.parse(raw) as string) : raw.slice(1, -1);
  };

  const value = (path: string): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const keys = new Set<string>();
      ws();
      if (text[i] === '}') { i++; return; }
      for (;;) {
        ws();
        const key = str();
        const child = path ? `${path}.${key}` : key;
        if (keys.has(key)) found.push(child);
        keys.add(key);
        ws();
        i++; // ':'
        value(child);
        ws();
        if (text[i++] === '}') return;
      }
    } else if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') { i++; return; }
      for (let index = 0; ; index++) {
        value(`${path}[${index}]`);
        ws();
        if (text[i++] === ']') return;
      }
    } else if (c === '"') {
      str();
    } else {
      while (i < text.length && !',}] \n\r\t'.includes(text[i])) i++;
    }
  };

  value('');
  return found;
}
