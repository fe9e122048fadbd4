/**
 * An event as JSON, in the field order Kubernetes' encoder writes (kind, apiVersion, then the
 * Event struct's fields), empty fields left out; request and response objects are spliced in as
 * the JSON they already are. Each event is encoded once: the log and the webhook share the text.
 */
import { formatMicroTime } from './micro-time.js';
import { eventApiVersion, type AuditEvent, type AuditUser, type ObjectReference, type ResponseStatus } from './types.js';

const prefix = `{"kind":"Event","apiVersion":"${eventApiVersion}",`;

/** text JSON needs no escapes in: most of an event's strings, quoted without JSON.stringify's cost */
const plain = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const q = (s: string) => (plain.test(s) ? `"${s}"` : JSON.stringify(s));

function userJson(u: AuditUser): string {
  const parts: string[] = [];
  if (u.username) parts.push(`"username":${q(u.username)}`);
  if (u.uid) parts.push(`"uid":${q(u.uid)}`);
  if (u.groups && u.groups.length > 0) parts.push(`"groups":${JSON.stringify(u.groups)}`);
  if (u.extra) parts.push(`"extra":${JSON.stringify(u.extra)}`);
  return `{${parts.join(',')}}`;
}

const refFields = ['resource', 'namespace', 'name', 'uid', 'apiGroup', 'apiVersion', 'resourceVersion', 'subresource'] as const;

function objectRefJson(ref: ObjectReference): string {
  const parts: string[] = [];
  for (const f of refFields) { const v = ref[f]; if (v) parts.push(`"${f}":${q(v)}`); }
  return `{${parts.join(',')}}`;
}

function statusJson(s: ResponseStatus): string {
  // metav1.Status's ListMeta is a struct, so Kubernetes always writes "metadata":{}
  let out = '{"metadata":{}';
  if (s.status) out += `,"status":${q(s.status)}`;
  if (s.message) out += `,"message":${q(s.message)}`;
  if (s.reason) out += `,"reason":${q(s.reason)}`;
  if (s.details !== undefined) out += `,"details":${JSON.stringify(s.details)}`;
  if (s.code) out += `,"code":${s.code}`;
  return `${out}}`;
}

const headJson = (ev: AuditEvent) => `${prefix}"level":"${ev.level}","auditID":${q(ev.auditID)},"stage":`;
const identityJson = (ev: AuditEvent) => `,"requestURI":${q(ev.requestURI)},"verb":${q(ev.verb)},"user":${userJson(ev.user)}`;

function originJson(ev: AuditEvent): string {
  let out = '';
  if (ev.sourceIPs && ev.sourceIPs.length > 0) out += `,"sourceIPs":${JSON.stringify(ev.sourceIPs)}`;
  if (ev.userAgent) out += `,"userAgent":${q(ev.userAgent)}`;
  return out;
}

/** The event as `audit.orch.io/v1` JSON (one line, no newline). */
export function eventJson(ev: AuditEvent): string {
  if (ev.encoded !== undefined) return ev.encoded;
  const r = ev.request;
  const head = r ? (r.head ??= headJson(ev)) : headJson(ev);
  const identity = r ? (r.identity ??= identityJson(ev)) : identityJson(ev);
  const origin = r ? (r.origin ??= originJson(ev)) : originJson(ev);
  let out = `${head}"${ev.stage}"${identity}`;
  if (ev.impersonatedUser) out += `,"impersonatedUser":${userJson(ev.impersonatedUser)}`;
  out += origin;
  if (ev.objectRef) out += `,"objectRef":${objectRefJson(ev.objectRef)}`;
  if (ev.responseStatus) out += `,"responseStatus":${statusJson(ev.responseStatus)}`;
  if (ev.requestObject !== undefined) out += `,"requestObject":${ev.requestObject}`;
  if (ev.responseObject !== undefined) out += `,"responseObject":${ev.responseObject}`;
  out += `,"requestReceivedTimestamp":"${formatMicroTime(ev.requestReceivedTimestamp)}","stageTimestamp":"${formatMicroTime(ev.stageTimestamp)}"`;
  if (ev.annotations) out += `,"annotations":${JSON.stringify(ev.annotations)}`;
  out += '}';
  ev.encoded = out;
  return out;
}

/** The same event under another apiVersion of the group (Kubernetes' name, for consumers that decode only it). */
export function eventJsonAs(ev: AuditEvent, apiVersion: string): string {
  const json = eventJson(ev);
  return apiVersion === eventApiVersion ? json : `{"kind":"Event","apiVersion":${q(apiVersion)},${json.slice(prefix.length)}`;
}

/** An EventList around events already encoded. */
export function eventListJson(items: readonly string[], apiVersion: string): string {
  return `{"kind":"EventList","apiVersion":${q(apiVersion)},"metadata":{},"items":[${items.join(',')}]}`;
}
