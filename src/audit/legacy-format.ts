/**
 * `--audit-log-format=legacy`: Kubernetes' one-line text form of an event (audit.EventString),
 * field for field: the request's receipt time, then id, stage, ip, method, user, groups, as,
 * asgroups, user-agent, namespace, uri and response, each quoted as Go's %q quotes.
 */
import { formatRfc3339Nano } from './micro-time.js';
import type { AuditEvent } from './types.js';

const namedEscapes: Readonly<Record<string, string>> = {
  '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v', '"': '\\"', '\\': '\\\\',
};
/** what Go's strconv.IsPrint refuses: anything but letters, marks, numbers, punctuation, symbols and the ASCII space */
const needsEscape = /["\\]|[^\p{L}\p{M}\p{N}\p{P}\p{S} ]/gu;

/** Go's %q (strconv.Quote). */
export function goQuote(s: string): string {
  return `"${s.replace(needsEscape, (ch) => {
    const named = namedEscapes[ch];
    if (named) return named;
    const code = ch.codePointAt(0) as number;
    if (code < 0x80) return `\\x${code.toString(16).padStart(2, '0')}`;
    return code < 0x10000 ? `\\u${code.toString(16).padStart(4, '0')}` : `\\U${code.toString(16).padStart(8, '0')}`;
  })}"`;
}

const quotedList = (list: readonly string[]) => list.map(goQuote).join(',');

export function legacyEventLine(ev: AuditEvent): string {
  let user = '<none>';
  let groups = '<none>';
  if (ev.user.username) {
    user = ev.user.username;
    if (ev.user.groups && ev.user.groups.length > 0) groups = quotedList(ev.user.groups);
  }
  let as = '<self>';
  let asGroups = '<lookup>';
  if (ev.impersonatedUser) {
    as = ev.impersonatedUser.username ?? '';
    if (ev.impersonatedUser.groups) asGroups = quotedList(ev.impersonatedUser.groups);
  }
  const namespace = ev.objectRef?.namespace || '<none>';
  const response = ev.responseStatus ? String(ev.responseStatus.code) : '<deferred>';
  const ip = ev.sourceIPs?.[0] ?? '<unknown>';
  return `${formatRfc3339Nano(ev.requestReceivedTimestamp)} AUDIT: id=${goQuote(ev.auditID)} stage=${goQuote(ev.stage)} ip=${goQuote(ip)}` +
    ` method=${goQuote(ev.verb)} user=${goQuote(user)} groups=${goQuote(groups)} as=${goQuote(as)} asgroups=${goQuote(asGroups)}` +
    ` user-agent=${goQuote(ev.userAgent ?? '')} namespace=${goQuote(namespace)} uri=${goQuote(ev.requestURI)} response="${response}"`;
}
