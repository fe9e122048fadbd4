/**
 * Request-header authentication for authenticating proxies (`--requestheader-*`): the user named
 * in the configured headers, honoured only on a connection whose client certificate chains to
 * `--requestheader-client-ca-file`, is valid for client auth and, when `--requestheader-allowed-names`
 * is set, has one of those CommonNames (k8s.io/apiserver's headerrequest and x509 Verifier). The
 * headers are removed once read. The certificate is judged once per connection.
 */
import { X509Certificate } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import type { UserInfo } from '../user.js';
import { AuthenticationFailure, type AuthenticationRequest, type AuthenticationResult, type Authenticator } from './authenticator.js';

export interface RequestHeaderOptions {
  /** PEM bundle of the CAs a proxy's certificate must chain to */
  caPem: string;
  allowedNames: readonly string[];
  usernameHeaders: readonly string[];
  uidHeaders: readonly string[];
  groupHeaders: readonly string[];
  extraHeaderPrefixes: readonly string[];
  now?: () => number;
}

const clientAuth = '1.3.6.1.5.5.7.3.2';
const anyExtendedKeyUsage = '2.5.29.37.0';
const maxChainLength = 8;

type PeerCertificate = ReturnType<TLSSocket['getPeerCertificate']> & { issuerCertificate?: PeerCertificate; raw?: Buffer };
/** per connection: no certificate, a certificate that may speak for users (null), or why it may not */
type Verdict = 'no certificate' | AuthenticationFailure | null;

/** Go's url.PathUnescape: undefined when malformed. */
function pathUnescape(text: string): string | undefined {
  try { return decodeURIComponent(text); } catch { return undefined; }
}

export class RequestHeaderAuthenticator implements Authenticator {
  readonly name = 'request-header';
  private readonly roots: X509Certificate[];
  private readonly byConnection = new WeakMap<TLSSocket, Verdict>();
  private readonly now: () => number;

  constructor(private readonly options: RequestHeaderOptions) {
    this.roots = (options.caPem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((pem) => new X509Certificate(pem));
    if (this.roots.length === 0) throw new Error('requestheader-client-ca-file: no certificates found');
    this.now = options.now ?? Date.now;
  }

  authenticate(request: AuthenticationRequest): AuthenticationResult {
    const socket = request.socket;
    if (!socket) return undefined;
    let verdict = this.byConnection.get(socket);
    if (verdict === undefined) {
      verdict = this.verify(socket.getPeerCertificate?.(true) as PeerCertificate | undefined);
      this.byConnection.set(socket, verdict);
    }
    if (verdict === 'no certificate') return undefined;
    if (verdict) return verdict;
    return this.fromHeaders(request);
  }

  /** null when the certificate may speak for users; the failure otherwise */
  private verify(peer: PeerCertificate | undefined): Verdict {
    if (!peer?.raw) return 'no certificate';
    const presented: X509Certificate[] = [];
    for (let c: PeerCertificate | undefined = peer; c?.raw && presented.length < maxChainLength; c = c.issuerCertificate === c ? undefined : c.issuerCertificate) {
      presented.push(new X509Certificate(c.raw));
    }
    const leaf = presented[0];
    const now = this.now();
    const current = (c: X509Certificate) => Date.parse(c.validFrom) <= now && now <= Date.parse(c.validTo);
    const fails = (why: string) => new AuthenticationFailure(`verifying certificate SN=${BigInt(`0x${leaf.serialNumber}`)} failed: x509: ${why}`);
    if (!current(leaf)) return fails('certificate has expired or is not yet valid');
    const usages = leaf.keyUsage;
    if (usages && usages.length > 0 && !usages.includes(clientAuth) && !usages.includes(anyExtendedKeyUsage)) {
      return fails('certificate specifies an incompatible key usage');
    }
    // walk up the presented chain until a root of ours issued the certificate in hand
    let child = leaf;
    for (let depth = 0; depth < maxChainLength; depth++) {
      const root = this.roots.find((r) => child.checkIssued(r) && child.verify(r.publicKey));
      if (root) {
        if (!current(root)) return fails('certificate has expired or is not yet valid');
        const cn = /^CN=(.*)$/m.exec(leaf.subject)?.[1] ?? '';
        if (this.options.allowedNames.length > 0 && !this.options.allowedNames.includes(cn)) {
          return new AuthenticationFailure(`x509: subject with cn=${cn} is not in the allowed list`);
        }
        return null;
      }
      const parent = presented.find((p) => p !== child && p.ca && child.checkIssued(p) && child.verify(p.publicKey) && current(p));
      if (!parent) break;
      child = parent;
    }
    return fails('certificate signed by unknown authority');
  }

  private fromHeaders({ headers, rawHeaders }: AuthenticationRequest): AuthenticationResult {
    const o = this.options;
    // repeated headers are distinct values (Node joins them with ", " in `headers`)
    const values = (name: string): string[] => {
      const lower = name.toLowerCase();
      if (rawHeaders) {
        const out: string[] = [];
        for (let i = 0; i + 1 < rawHeaders.length; i += 2) if (rawHeaders[i].toLowerCase() === lower) out.push(rawHeaders[i + 1]);
        return out;
      }
      const v = headers[lower];
      return v === undefined ? [] : Array.isArray(v) ? v : [v];
    };
    const first = (names: readonly string[]) => names.map((n) => values(n)[0] ?? '').find((v) => v !== '') ?? '';
    const name = first(o.usernameHeaders);
    if (name === '') return undefined;
    const uid = first(o.uidHeaders);
    const groups = o.groupHeaders.flatMap((h) => values(h).filter((v) => v !== ''));
    const extra: Record<string, string[]> = {};
    for (const prefix of o.extraHeaderPrefixes) {
      const lower = prefix.toLowerCase();
      for (const header of Object.keys(headers)) {
        if (!header.startsWith(lower)) continue;
        const encoded = header.slice(lower.length);
        const key = pathUnescape(encoded) ?? encoded;
        extra[key] = [...(extra[key] ?? []), ...values(header)];
      }
    }
    // no later step may read them as if they came from the client
    for (const header of [...o.usernameHeaders, ...o.uidHeaders, ...o.groupHeaders]) delete headers[header.toLowerCase()];
    for (const prefix of o.extraHeaderPrefixes) {
      for (const header of Object.keys(headers)) if (header.startsWith(prefix.toLowerCase())) delete headers[header];
    }
    const user: UserInfo = { name, groups };
    if (uid !== '') user.uid = uid;
    if (Object.keys(extra).length > 0) user.extra = extra;
    return { user };
  }
}
