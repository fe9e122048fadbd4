/**
 * Content negotiation: which encoding a response uses (Accept) and which decoder reads a body
 * (Content-Type), as k8s.io/apiserver/pkg/endpoints/handlers/negotiation does: the Accept clauses
 * in quality order, each tried against the offered media types in the server's order; a clause's
 * parameters may ask for a conversion (as/g/v), a stream (stream=watch), a server version (sv) or
 * pretty output (pretty=1); parameters Kubernetes does not know (charset, type, ...) are ignored.
 */
import { advertisedMediaTypesOf, type Encoding, type MediaTypeOffer } from '../codec/media-types.js';
import { serializers } from '../codec/serializers.js';
import { errors } from '../status/status-error.js';

interface MediaRange { type: string; subtype: string; params: Map<string, string>; q: number }

/**
 * An Accept header as goautoneg reads it: type and subtype as sent (matching is case-sensitive),
 * parameter values trimmed, a malformed range skipped; ranges ordered by quality, then specific
 * before wildcard, keeping the client's order otherwise. A range refused with q=0 is dropped.
 */
export function parseMediaRanges(header: string): MediaRange[] {
  const out: MediaRange[] = [];
  for (const clause of header.split(',')) {
    const [full, ...rawParams] = clause.split(';');
    const parts = full.trim().split('/');
    const type = parts[0].trim();
    let subtype: string;
    if (parts.length === 1 && type === '*') subtype = '*';
    else if (parts.length === 2) subtype = parts[1].trim();
    else continue;
    const params = new Map<string, string>();
    let q = 1;
    for (const p of rawParams) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const k = p.slice(0, eq).trim();
      if (k === 'q') q = Number(p.slice(eq + 1));
      else params.set(k, p.slice(eq + 1).trim());
    }
    if (!(q > 0)) continue;
    out.push({ type, subtype, params, q });
  }
  const rank = (r: MediaRange) => (r.type === '*' ? 2 : 0) + (r.subtype === '*' ? 1 : 0);
  return out.map((r, i) => ({ r, i })).sort((a, b) => b.r.q - a.r.q || rank(a.r) - rank(b.r) || a.i - b.i).map(({ r }) => r);
}

export type ConversionKind = 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList';

/** A response in another representation than the kind's own, asked for with as/g/v. */
export interface Conversion { kind: ConversionKind; group: string; version: string }

/** Our meta group and Kubernetes' (which kubectl and controller-runtime ask for), in both served versions. */
const metaGroups = new Set(['meta.orch.io', 'meta.k8s.io']);
const metaVersions = new Set(['v1', 'v1beta1']);
/** the version of the meta group the resource endpoints serve (`sv=`) */
const serverMetaVersion = 'v1';

export interface Negotiated {
  encoding: Encoding;
  /** the offered media type that matched, as the response names it */
  mediaType: string;
  /** the clause asked for pretty output (`pretty=1`) */
  pretty: boolean;
  conversion?: Conversion;
}

/**
 * What an endpoint allows beyond plain serialization. Resource endpoints convert (Table in JSON and
 * YAML only, PartialObjectMetadata(List) in any encoding) and know the meta group's version;
 * other endpoints (discovery, /version) and error Status bodies allow neither.
 */
export interface EndpointRestrictions { conversions: boolean }

/** Whether a serializer can frame a watch stream (every encoding but YAML). */
export function streams(encoding: Encoding): boolean {
  return serializers[encoding].stream !== undefined;
}

/** The options a clause asks for of one offered type, or undefined when the type must be skipped (acceptMediaTypeOptions). */
function acceptOptions(params: ReadonlyMap<string, string>, offer: MediaTypeOffer, endpoint: EndpointRestrictions): Negotiated | undefined {
  let convert: { kind: string; group: string; version: string } | undefined;
  let pretty = false;
  for (const [k, v] of params) {
    switch (k) {
      case 'as': (convert ??= { kind: '', group: '', version: '' }).kind = v; break;
      case 'g': (convert ??= { kind: '', group: '', version: '' }).group = v; break;
      case 'v': (convert ??= { kind: '', group: '', version: '' }).version = v; break;
      case 'stream': if (v !== '' && (!streams(offer.encoding) || v !== 'watch')) return undefined; break;
      case 'sv': if (v !== '' && !(endpoint.conversions && v === serverMetaVersion)) return undefined; break;
      case 'pretty': pretty = v === '1'; break;
      default: break; // export, charset and anything unknown: ignored
    }
  }
  const out: Negotiated = { encoding: offer.encoding, mediaType: offer.mediaType, pretty };
  if (!convert) return out;
  if (!endpoint.conversions || !metaGroups.has(convert.group) || !metaVersions.has(convert.version)) return undefined;
  switch (convert.kind) {
    case 'Table':
      // Kubernetes' Table has no protobuf (or CBOR) form
      if (offer.encoding !== 'json' && offer.encoding !== 'yaml') return undefined;
      break;
    case 'PartialObjectMetadata': case 'PartialObjectMetadataList': break;
    default: return undefined;
  }
  return { ...out, conversion: convert as Conversion };
}

/** Picks the response encoding; throws 406 listing the media types offered when nothing is acceptable. */
export function negotiateResponse(accept: string | undefined, offered: readonly MediaTypeOffer[], endpoint: EndpointRestrictions): Negotiated {
  if (!accept) return { encoding: offered[0].encoding, mediaType: offered[0].mediaType, pretty: false };
  for (const range of parseMediaRanges(accept)) {
    for (const offer of offered) {
      const [type, subtype] = offer.mediaType.split('/');
      const matches = (range.type === type && (range.subtype === subtype || range.subtype === '*')) || (range.type === '*' && range.subtype === '*');
      if (!matches) continue;
      const options = acceptOptions(range.params, offer, endpoint);
      if (options) return options;
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
