// What the k6 scripts share: where the server is, how to authenticate, and a few helpers.
// Every setting comes from an environment variable (k6 passes the shell's environment to __ENV,
// and `k6 run -e NAME=value` sets one):
//
//   ORCH_URL        server URL (default https://127.0.0.1:6443)
//   ORCH_TOKEN      bearer token, sent as `Authorization: Bearer ...`
//   ORCH_CERT       client certificate file (PEM), with ORCH_KEY: presented through options.tlsAuth
//   ORCH_KEY        its private key file (PEM)
//   ORCH_CA         CA that signed the serving certificate. k6 has no option for a CA; it trusts the
//                   system roots, which Go reads from SSL_CERT_FILE on Linux: run the scripts with
//                   SSL_CERT_FILE=$ORCH_CA (k6/run.sh does that), or use ORCH_INSECURE=1.
//   ORCH_INSECURE   1: do not verify the serving certificate (insecureSkipTLSVerify)
//   ORCH_NAMESPACE  namespace the scripts work in (default k6-bench; created when missing)
//
// open() runs in the init context (it is called while `options` is built); give it absolute
// paths, e.g. ORCH_CERT=$PWD/data/pki/admin.crt.
import http from 'k6/http';

export const BASE = (__ENV.ORCH_URL || 'https://127.0.0.1:6443').replace(/\/+$/, '');
export const WS_BASE = BASE.replace(/^http/, 'ws');
export const NAMESPACE = __ENV.ORCH_NAMESPACE || 'k6-bench';
export const COLLECTION = `${BASE}/api/v1/namespaces/${NAMESPACE}/serviceaccounts`;

const hostMatch = /^https?:\/\/(\[[^\]]+\]|[^:/]+)/.exec(BASE);
const HOST = hostMatch ? hostMatch[1].replace(/^\[|\]$/g, '') : '127.0.0.1';

function truthy(v) {
  return v === '1' || v === 'true' || v === 'yes';
}

/** The TLS part of `options`: insecureSkipTLSVerify and the client certificate. */
export function tlsOptions() {
  const o = {};
  if (truthy(__ENV.ORCH_INSECURE)) o.insecureSkipTLSVerify = true;
  if (__ENV.ORCH_CERT || __ENV.ORCH_KEY) {
    if (!__ENV.ORCH_CERT || !__ENV.ORCH_KEY) throw new Error('ORCH_CERT and ORCH_KEY go together');
    // k6 loads a tlsAuth certificate only for the domains listed; Go then presents it to any
    // server that asks for a certificate its CA signed
    o.tlsAuth = [{ domains: [HOST], cert: open(__ENV.ORCH_CERT), key: open(__ENV.ORCH_KEY) }];
  }
  if (__ENV.ORCH_CA && __ENV.SSL_CERT_FILE !== __ENV.ORCH_CA && !o.insecureSkipTLSVerify) {
    console.warn(`ORCH_CA is set but k6 only trusts the system roots: run with SSL_CERT_FILE=${__ENV.ORCH_CA} (k6/run.sh does) or ORCH_INSECURE=1`);
  }
  if (!o.tlsAuth && !__ENV.ORCH_TOKEN) {
    console.warn('no credentials: set ORCH_CERT/ORCH_KEY or ORCH_TOKEN (requests go out anonymous)');
  }
  return o;
}

/** Headers for every request and for the WebSocket handshake. */
export function authHeaders() {
  return __ENV.ORCH_TOKEN ? { Authorization: `Bearer ${__ENV.ORCH_TOKEN}` } : {};
}

const json = Object.assign({ 'Content-Type': 'application/json' }, authHeaders());

/** Request params: JSON body, credentials, and an `op` tag that thresholds select on. */
export function params(op, extra) {
  return Object.assign({ headers: json, tags: { op } }, extra || {});
}

/** The ServiceAccount the scripts write (the shape bench/ uses). */
export function serviceAccount(name, labels, annotations) {
  const metadata = { name, labels: Object.assign({ app: 'k6' }, labels || {}) };
  if (annotations) metadata.annotations = annotations;
  return JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata, secrets: [{ name: `${name}-token` }] });
}

const createdOrExists = http.expectedStatuses(201, 409);

/** Creates the namespace unless it exists (409 is expected, not a failure). */
export function ensureNamespace() {
  const r = http.post(`${BASE}/api/v1/namespaces`, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } }),
    params('setup', { responseCallback: createdOrExists }));
  if (r.status !== 201 && r.status !== 409) {
    throw new Error(`creating namespace ${NAMESPACE}: ${r.status} ${r.body}`);
  }
}

/** A short id for this run, so repeated runs never collide on names. */
export function runId() {
  return Date.now().toString(36);
}

/** '90s', '2m', '1m30s', '500ms' -> milliseconds */
export function durationMs(s) {
  let total = 0;
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
  let m;
  let matched = '';
  while ((m = re.exec(s)) !== null) {
    matched += m[0];
    total += Number(m[1]) * { ms: 1, s: 1000, m: 60000, h: 3600000 }[m[2]];
  }
  if (!matched || matched !== s) throw new Error(`not a duration: ${s}`);
  return total;
}
