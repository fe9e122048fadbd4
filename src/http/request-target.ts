/**
 * The request target exactly as the client sent it. `new URL()` would resolve `.` and `..`
 * segments (also spelled `%2e`), so that `DELETE .../secrets/..` would reach the namespace above;
 * here the path is kept as sent, split on its literal slashes, and each segment is percent-decoded
 * on its own, so a `%2F` stays inside its segment and no segment ever means "the parent".
 */
import { goQuote } from '../api/go-quote.js';
import { errors } from '../status/status-error.js';

/** Named as URL names them, so that it stands where a URL stood. */
export interface RequestTarget {
  /** the path as sent, still percent-encoded; `/` when the target has none */
  pathname: string;
  searchParams: URLSearchParams;
}

/** An absolute-form target (`https://host/path`), as proxies send it: the path follows the authority. */
const absoluteForm = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;

/** Splits a request target into path and query. Never throws: bad escapes are found by `pathSegments`. */
export function parseRequestTarget(target: string | undefined): RequestTarget {
  // origin-form (`/path`), what clients send, needs no look for an authority
  let rest = target === undefined ? '/' : target.charCodeAt(0) === 0x2f ? target : target.replace(absoluteForm, '');
  const hash = rest.indexOf('#');
  if (hash >= 0) rest = rest.slice(0, hash);
  const question = rest.indexOf('?');
  const path = question >= 0 ? rest.slice(0, question) : rest;
  const query = question >= 0 ? rest.slice(question + 1) : '';
  return { pathname: path.startsWith('/') ? path : `/${path}`, searchParams: new URLSearchParams(query) };
}

const utf8 = new TextDecoder('utf-8');

/** a path or segment with nothing to decode: no escape, no byte outside ASCII */
const plainPath = /^[\x00-\x24\x26-\x7f]*$/;

/**
 * One segment, percent-decoded as Go's url.PathUnescape does; a malformed escape is 400. Node hands
 * over the target's raw bytes one character each (Latin-1), so the decoded bytes are read as UTF-8.
 */
function decodeSegment(segment: string, path: string): string {
  if (plainPath.test(segment)) return segment;
  const bytes: number[] = [];
  for (let i = 0; i < segment.length; i++) {
    const c = segment.charCodeAt(i);
    if (c === 0x25) {
      const hex = segment.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) {
        throw errors.badRequest(`parse ${goQuote(path)}: invalid URL escape ${goQuote(segment.slice(i, i + 3))}`);
      }
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else if (c <= 0xff) {
      bytes.push(c);
    } else {
      const ch = String.fromCodePoint(segment.codePointAt(i) as number);
      for (const b of Buffer.from(ch, 'utf8')) bytes.push(b);
      i += ch.length - 1;
    }
  }
  return utf8.decode(Uint8Array.from(bytes));
}

/** The path's segments between its outer slashes (as RequestInfoFactory trims and splits), each decoded. */
export function pathSegments(path: string): string[] {
  let start = 0;
  let end = path.length;
  while (start < end && path.charCodeAt(start) === 0x2f) start++;
  while (end > start && path.charCodeAt(end - 1) === 0x2f) end--;
  const segments = path.slice(start, end).split('/');
  // every request's path: one test for the whole path rather than one per segment
  return plainPath.test(path) ? segments : segments.map((segment) => decodeSegment(segment, path));
}
