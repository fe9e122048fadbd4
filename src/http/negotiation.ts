/**
 * Content negotiation: which encoding a response uses (Accept) and which decoder reads a body
 * (Content-Type), as k8s.io/apiserver/pkg/endpoints/handlers/negotiation does.
 */
import { advertisedMediaTypesOf, type Encoding, type MediaTypeOffer } from '../codec/media-types.js';
import { errors } from '../status/status-error.js';

interface MediaRange { type: string; subtype: string; params: Map<string, string>; q: number }



export function parseMediaRanges(header: string): MediaRange[] {
  const out: MediaRange[] = [];
  for (const clause of header.split(',')) {
    const [full, ...rawParams] = clause.split(';').map((p) => p.trim());
    if (!full) continue;
    const [type, subtype] = full.toLowerCase().split('/');
    if (!type || !subtype) continue;
    const params = new Map<string, string>();
    let q = 1;
    for (const p of rawParams) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const k = p.slice(0, eq).trim().toLowerCase();
      const v = p.slice(eq + 1).trim().replace(/^"|"$/g, '');
      if (k === 'q') q = Number(v);
      else params.set(k, v);
    }
    if (Number.isNaN(q) || q <= 0) continue;
    out.push({ type, subtype, params, q });
  }
  // stable: equal q keeps the client's order
  return out.map((r, i) => ({ r, i })).sort((a, b) => b.r.q - a.r.q || a.i - b.i).map(({ r }) => r);
}

/** Parameters a plain serializer honours; any other (as=..., g, v) asks for a conversion. */
const plainParams = new Set(['pretty', 'stream', 'charset']);

/** The conversions offered: Table, under our meta group and Kubernetes' (which kubectl asks for). */
const tableGroups = new Set(['meta.orch.io', 'meta.k8s.io']);
const tableVersions = new Set(['v1', 'v1beta1']);

export interface Negotiated {
  encoding: Encoding;
  mediaType: string;
  pretty: boolean;
  /** a Table was asked for (JSON or YAML): in which meta group and version */
  table?: { group: string; version: string };
}

function conversionOf(range: MediaRange): { group: string; version: string } | null | undefined {
  const as = range.params.get('as');
  const others = [...range.params.keys()].filter((k) => !plainParams.has(k) && k !== 'as' && k !== 'g' && k !== 'v');
  if (!as) return others.length === 0 && !range.params.has('g') && !range.params.has('v') ? undefined : null;
  const group = range.params.get('g') ?? '';
  const version = range.params.get('v') ?? '';
  if (as !== 'Table' || others.length > 0 || !tableGroups.has(group) || !tableVersions.has(version)) return null;
  return { group, version };
}

/** Picks the response encoding; throws 406 when nothing acceptable is offered. */
export function negotiateResponse(accept: string | undefined, offered: readonly MediaTypeOffer[]): Negotiated {
  if (!accept || accept.trim() === '') return { encoding: 'json', mediaType: 'application/json', pretty: false };
  for (const range of parseMediaRanges(accept)) {
    const table = conversionOf(range);
    if (table === null) continue; // a conversion we do not offer: try the client's next choice
    const pretty = range.params.get('pretty') === '1' || range.params.get('pretty') === 'true';
    for (const t of offered) {
      const [type, subtype] = t.mediaType.split('/');
      if ((range.type === '*' || range.type === type) && (range.subtype === '*' || range.subtype === subtype)) {
        if (!table) return { encoding: t.encoding, mediaType: t.mediaType, pretty };
        if (t.encoding === 'protobuf' || t.encoding === 'cbor') continue; // Tables are served in JSON and YAML
        return { encoding: t.encoding, mediaType: `${t.mediaType};as=Table;v=${table.version};g=${table.group}`, pretty, table };
      }
    }
  }
  throw errors.notAcceptable(advertisedMediaTypesOf(offered));
}

/** The decoder a body's Content-Type selects; a missing type means JSON. Throws 415. */
export function negotiateBody(contentType: string | undefined, offered: readonly MediaTypeOffer[]): Encoding {
  if (!contentType || contentType.trim() === '') return 'json';
  const mediaType = contentType.split(';')[0].trim().toLowerCase();
  const known = offered.find((t) => t.mediaType === mediaType);
  if (!known) throw errors.unsupportedMediaType(advertisedMediaTypesOf(offered));
  return known.encoding;
}
