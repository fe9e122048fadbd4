/**
 * `/healthz`, `/livez` and `/readyz`, served as k8s.io/apiserver/pkg/server/healthz (healthz.go)
 * serves them: `handleRootHealth` for the endpoint itself and `adaptCheckToHandler` for each
 * `/<endpoint>/<check name>` path.
 */

export interface HealthCheck {
  name: string;
  /** undefined = healthy; a string = why it fails */
  check(): string | undefined;
}

export interface HealthResponse { status: number; headers: Record<string, string>; body: string }

// What Go's http.Error sets besides the status, and what handleRootHealth sets on success.
const PLAIN_NOSNIFF: Readonly<Record<string, string>> = {
  'Content-Type': 'text/plain; charset=utf-8',
  'X-Content-Type-Options': 'nosniff',
};

// InstallPathHandler installs the always-healthy "ping" check when given none.
const PING: HealthCheck = { name: 'ping', check: () => undefined };

export class HealthEndpoint {
  private readonly checks: readonly HealthCheck[];

  constructor(
    private readonly name: 'healthz' | 'livez' | 'readyz',
    checks: readonly HealthCheck[],
    private readonly onFailure?: (check: string, reason: string) => void,
  ) {
    this.checks = checks.length > 0 ? checks : [PING];
  }

  /**
   * path: the request path (e.g. "/readyz", "/readyz/etcd", "/readyz/poststarthook/bootstrap-controller").
   * undefined when the path is not this endpoint's, which includes `/<endpoint>/<unknown check>`:
   * kube-apiserver registers no handler there, so its generic not-found handler answers.
   */
  handle(path: string, query: URLSearchParams): HealthResponse | undefined {
    const root = `/${this.name}`;
    if (path === root) return this.handleRoot(query);
    if (!path.startsWith(`${root}/`)) return undefined;
    // Check names may contain '/', so the whole remainder is the name.
    const checkName = path.slice(root.length + 1);
    const check = this.checks.find((c) => c.name === checkName);
    return check && handleSingle(check);
  }

  private handleRoot(query: URLSearchParams): HealthResponse {
    // Repeated `exclude` parameters, each one whole name: Go's r.URL.Query()["exclude"], no comma splitting.
    const excluded = new Set(query.getAll('exclude'));
    const failed: string[] = [];
    let lines = '';
    for (const check of this.checks) {
      if (excluded.delete(check.name)) {
        lines += `[+]${check.name} excluded: ok\n`;
        continue;
      }
      const reason = check.check();
      if (reason === undefined) {
        lines += `[+]${check.name} ok\n`;
      } else {
        // The reason goes to the log only: this endpoint is public.
        lines += `[-]${check.name} failed: reason withheld\n`;
        failed.push(check.name);
        this.onFailure?.(check.name, reason);
      }
    }
    if (excluded.size > 0) {
      lines += `warn: some health checks cannot be excluded: no matches for ${goSortedStrings(excluded).map(goQuote).join(',')}\n`;
    }
    // Always verbose on failure; http.Error appends the newline.
    if (failed.length > 0) {
      return { status: 500, headers: { ...PLAIN_NOSNIFF }, body: `${lines}${this.name} check failed\n` };
    }
    // `?verbose` counts when present at all, whatever its value (even "false").
    const body = query.has('verbose') ? `${lines}${this.name} check passed\n` : 'ok';
    return { status: 200, headers: { ...PLAIN_NOSNIFF }, body };
  }
}

function handleSingle(check: HealthCheck): HealthResponse {
  const reason = check.check();
  if (reason !== undefined) {
    // Unlike the root path, the single-check path shows the reason (http.Error, so with the newline).
    return { status: 500, headers: { ...PLAIN_NOSNIFF }, body: `internal server error: ${reason}\n` };
  }
  // Upstream writes "ok" without setting headers: net/http sniffs text/plain and adds no nosniff.
  return { status: 200, headers: { 'Content-Type': 'text/plain; charset=utf-8' }, body: 'ok' };
}

/** sets.String.List(): sorted by Go's string order, which is UTF-8 byte order. */
function goSortedStrings(names: Iterable<string>): string[] {
  return [...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

const GO_ESCAPES: Readonly<Record<string, string>> = {
  '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v',
};

// unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space.
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/** Go's %q (strconv.Quote): the names echoed back are client-supplied, so escape as upstream does. */
function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (PRINTABLE.test(ch)) out += ch;
    else if (GO_ESCAPES[ch] !== undefined) out += GO_ESCAPES[ch];
    else if (cp < 0x80) out += `\\x${hex(cp, 2)}`;
    else if (cp <= 0xffff) out += `\\u${hex(cp, 4)}`;
    else out += `\\U${hex(cp, 8)}`;
  }
  return `${out}"`;
}

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}
