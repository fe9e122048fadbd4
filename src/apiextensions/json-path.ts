/**
 * The simple JSON paths CRDs use in printer columns, selectable fields and scale paths
 * (`.spec.replicas`, `.status.conditions[0].type`, `.metadata.labels['app.kubernetes.io/name']`):
 * parsed once into segments, evaluated against an object.
 */

export type PathSegment = string | number;

export class JsonPathError extends Error {}

/** Parses `.a.b[0]['c.d']` (a leading `{` `}` pair, as in kubectl templates, is accepted). */
export function parseJsonPath(text: string): PathSegment[] {
  let rest = text.trim();
  if (rest.startsWith('{') && rest.endsWith('}')) rest = rest.slice(1, -1);
  const out: PathSegment[] = [];
  const token = /^(?:\.([A-Za-z0-9_$-]+)|\[(\d+)\]|\['([^']*)'\]|\["([^"]*)"\])/;
  if (rest === '' || rest === '.') throw new JsonPathError(`invalid JSON path ${JSON.stringify(text)}`);
  while (rest.length > 0) {
    const m = token.exec(rest);
    if (!m) throw new JsonPathError(`invalid JSON path ${JSON.stringify(text)}`);
    if (m[1] !== undefined) out.push(m[1]);
    else if (m[2] !== undefined) out.push(Number(m[2]));
    else out.push(m[3] ?? m[4]);
    rest = rest.slice(m[0].length);
  }
  return out;
}

/** The value at `path`, or undefined when any step is missing. */
export function valueAt(obj: unknown, path: readonly PathSegment[]): unknown {
  let cur: unknown = obj;
  for (const seg of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    if (typeof seg === 'number') {
      if (!Array.isArray(cur)) return undefined;
      cur = cur[seg];
    } else {
      if (Array.isArray(cur) || !Object.hasOwn(cur, seg)) return undefined;
      cur = (cur as Record<string, unknown>)[seg];
    }
  }
  return cur;
}

/** Sets the value at a path of field names, creating objects on the way. */
export function setValueAt(obj: Record<string, unknown>, path: readonly PathSegment[], value: unknown): void {
  let cur: Record<string, unknown> = obj;
  for (let i = 0; i < path.length - 1; i++) {
    const seg = String(path[i]);
    const next = cur[seg];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) cur[seg] = {};
    cur = cur[seg] as Record<string, unknown>;
  }
  cur[String(path[path.length - 1])] = value;
}

/** The dotted field name of a path (`spec.color`), as field selectors name it. */
export function fieldNameOf(path: readonly PathSegment[]): string {
  return path.map(String).join('.');
}
