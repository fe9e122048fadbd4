/**
 * The request's part of an audit event, filled once the policy has chosen a level
 * (k8s.io/apiserver's LogRequestMetadata): URI, verb, user, source IPs, user agent and the
 * object reference the path names.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import type { UserInfo } from '../auth/user.js';
import type { PolicyAttributes } from './policy-evaluator.js';
import type { AuditUser, Level, ObjectReference, RequestEncoding, ResponseStatus } from './types.js';

const maxUserAgentLength = 1024;
const userAgentTruncateSuffix = '...TRUNCATED';

/** The mutable record of one request; each stage's event is a copy of it. */
export interface EventDraft {
  level: Level;
  requestURI: string;
  verb: string;
  user: AuditUser;
  impersonatedUser?: AuditUser;
  sourceIPs: string[];
  userAgent?: string;
  objectRef?: ObjectReference;
  responseStatus?: ResponseStatus;
  requestObject?: string;
  responseObject?: string;
  /** microseconds */
  requestReceivedTimestamp: number;
  readonly encoding: RequestEncoding;
}

export interface RequestFacts {
  requestURI: string;
  headers: IncomingHttpHeaders;
  remoteAddress: string | undefined;
  attributes: PolicyAttributes & { readonly apiVersion: string };
  /** the authenticated user; undefined when authentication failed */
  user: UserInfo | undefined;
  /** microseconds */
  receivedAt: number;
}

export function auditUser(user: UserInfo | undefined): AuditUser {
  if (!user) return {};
  const record: AuditUser = { username: user.name };
  if (user.uid) record.uid = user.uid;
  if (user.groups.length > 0) record.groups = user.groups;
  if (user.extra && Object.keys(user.extra).length > 0) record.extra = user.extra;
  return record;
}

export function newEventDraft(level: Level, facts: RequestFacts): EventDraft {
  const a = facts.attributes;
  const draft: EventDraft = {
    level,
    requestURI: facts.requestURI,
    verb: a.verb,
    user: auditUser(facts.user),
    sourceIPs: sourceIPs(facts.headers, facts.remoteAddress),
    requestReceivedTimestamp: facts.receivedAt,
    encoding: {},
  };
  const agent = facts.headers['user-agent'];
  if (agent) draft.userAgent = agent.length > maxUserAgentLength ? `${agent.slice(0, maxUserAgentLength)}${userAgentTruncateSuffix}` : agent;
  if (a.isResourceRequest) {
    const ref: ObjectReference = { resource: a.resource };
    if (a.namespace) ref.namespace = a.namespace;
    if (a.name) ref.name = a.name;
    if (a.apiGroup) ref.apiGroup = a.apiGroup;
    if (a.apiVersion) ref.apiVersion = a.apiVersion;
    if (a.subresource) ref.subresource = a.subresource;
    draft.objectRef = ref;
  }
  return draft;
}

/** An address as Go's net.IP prints it: IPv4-mapped IPv6 as IPv4, IPv6 compressed and lower-case. */
function canonicalIP(text: string): string | undefined {
  const v = isIP(text);
  if (v === 4) return text;
  if (v !== 6) return undefined;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(text);
  if (mapped) return mapped[1];
  const canonical = new URL(`http://[${text}]/`).hostname.slice(1, -1);
  // the URL parser writes a mapped address in hex (::ffff:7f00:1)
  const hexMapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (hexMapped) {
    const hi = parseInt(hexMapped[1], 16);
    const lo = parseInt(hexMapped[2], 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return canonical;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * X-Forwarded-For's valid addresses, then X-Real-Ip unless already listed, then the peer unless
 * it is the last already (k8s.io/apimachinery's utilnet.SourceIPs).
 */
export function sourceIPs(headers: IncomingHttpHeaders, remoteAddress: string | undefined): string[] {
  const ips: string[] = [];
  const forwarded = header(headers, 'x-forwarded-for');
  if (forwarded) {
    for (const part of forwarded.split(',')) {
      const ip = canonicalIP(part.trim());
      if (ip) ips.push(ip);
    }
  }
  const realIp = header(headers, 'x-real-ip');
  if (realIp) {
    const ip = canonicalIP(realIp);
    if (ip && !ips.includes(ip)) ips.push(ip);
  }
  const peer = remoteAddress ? canonicalIP(remoteAddress) : undefined;
  if (peer && (ips.length === 0 || ips[ips.length - 1] !== peer)) ips.push(peer);
  return ips;
}
