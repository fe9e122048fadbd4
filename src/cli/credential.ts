/**
 * `orch-apiserver credential`: an exec credential plugin for kubectl and client libraries. It
 * reads KUBERNETES_EXEC_INFO, answers in the apiVersion asked for (`client.authentication.k8s.io/v1`
 * from kubectl, `client.authentication.orch.io/v1` by default), and prints an ExecCredential with
 * a bearer token and its expiry. Token sources:
 *   --token-file FILE                a token kept in a file (re-read on every call, so it can rotate);
 *                                    missing, and the caller interactive, the token is asked for on stdin
 *   --service-account NS/NAME        a fresh service-account token from the TokenRequest API, asked for
 *                                    with a client certificate (--kubeconfig, or --server,
 *                                    --certificate-authority, --client-certificate, --client-key; server
 *                                    and CA may come from the exec info's cluster)
 * `--write-kubeconfig FILE` writes a kubeconfig whose user runs this plugin with the other flags.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { fromYaml } from '../codec/yaml.js';
import { parseDuration } from '../config/duration.js';
import { writeExecKubeconfig } from './exec-kubeconfig.js';

const supportedVersions = ['client.authentication.orch.io/v1', 'client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'];
const defaultVersion = 'client.authentication.orch.io/v1';

export class CredentialError extends Error {}

interface ExecInfo { apiVersion: string; interactive: boolean; cluster?: { server?: string; 'certificate-authority-data'?: string } }

interface Options {
  tokenFile?: string;
  serviceAccount?: string;
  kubeconfig?: string;
  server?: string;
  certificateAuthority?: string;
  clientCertificate?: string;
  clientKey?: string;
  audiences: string[];
  expirationSeconds: number;
  writeKubeconfig?: string;
}

const valueFlags: Record<string, keyof Options> = {
  'token-file': 'tokenFile', 'service-account': 'serviceAccount', kubeconfig: 'kubeconfig', server: 'server',
  'certificate-authority': 'certificateAuthority', 'client-certificate': 'clientCertificate', 'client-key': 'clientKey',
  'write-kubeconfig': 'writeKubeconfig',
};

export function parseCredentialArgs(argv: readonly string[]): Options {
  const options: Options = { audiences: [], expirationSeconds: 3600 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const match = /^--([a-z-]+)(?:=(.*))?$/s.exec(arg);
    if (!match) throw new CredentialError(`unexpected argument ${JSON.stringify(arg)}`);
    const [, name, inline] = match;
    const value = inline ?? argv[++i];
    if (value === undefined) throw new CredentialError(`flag needs an argument: --${name}`);
    if (name === 'audience') options.audiences.push(value);
    else if (name === 'expiration') {
      try { options.expirationSeconds = Math.floor(parseDuration(value) / 1000); } catch (err) { throw new CredentialError(`--expiration: ${(err as Error).message}`); }
    } else if (valueFlags[name]) (options as unknown as Record<string, unknown>)[valueFlags[name]] = value;
    else throw new CredentialError(`unknown flag: --${name}`);
  }
  if (!options.tokenFile === !options.serviceAccount) throw new CredentialError('exactly one of --token-file and --service-account must be given');
  if (options.serviceAccount && !/^[^/]+\/[^/]+$/.test(options.serviceAccount)) throw new CredentialError('--service-account must be NAMESPACE/NAME');
  return options;
}

export function readExecInfo(env: NodeJS.ProcessEnv): ExecInfo {
  const text = env.KUBERNETES_EXEC_INFO;
  if (!text) return { apiVersion: defaultVersion, interactive: false };
  let info: { apiVersion?: string; spec?: { interactive?: boolean; cluster?: ExecInfo['cluster'] } };
  try { info = JSON.parse(text); } catch (err) { throw new CredentialError(`KUBERNETES_EXEC_INFO: ${(err as Error).message}`); }
  const apiVersion = info.apiVersion || defaultVersion;
  if (!supportedVersions.includes(apiVersion)) throw new CredentialError(`KUBERNETES_EXEC_INFO asks for ${apiVersion}; supported: ${supportedVersions.join(', ')}`);
  return { apiVersion, interactive: info.spec?.interactive === true, cluster: info.spec?.cluster };
}

/** The `exp` of a JWT, when the token is one; the token is not verified (the server does that). */
function jwtExpiry(token: string): number | undefined {
  const payload = token.split('.')[1];
  if (!payload) return undefined;
  try {
    const exp = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: unknown }).exp;
    return typeof exp === 'number' ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

async function promptForToken(): Promise<string> {
  process.stderr.write('Token: ');
  const lines = createInterface({ input: process.stdin, terminal: false });
  for await (const line of lines) { lines.close(); return line.trim(); }
  throw new CredentialError('no token was entered');
}

async function tokenFromFile(file: string, info: ExecInfo): Promise<{ token: string; expiresAt?: number }> {
  let token: string;
  try {
    token = readFileSync(file, 'utf8').trim();
  } catch (err) {
    if (!info.interactive) throw new CredentialError(`cannot read ${file} (${(err as NodeJS.ErrnoException).code}) and the caller is not interactive`);
    token = await promptForToken();
  }
  if (token === '') throw new CredentialError(`${file} holds no token`);
  return { token, expiresAt: jwtExpiry(token) };
}

interface Endpoint { server: string; ca?: string; cert?: string; key?: string }

/** Where the server is and who we are to it, from the flags, a kubeconfig and the exec info. */
function endpointOf(options: Options, info: ExecInfo): Endpoint {
  let server = options.server;
  let ca = options.certificateAuthority ? readFileSync(options.certificateAuthority, 'utf8') : undefined;
  let cert = options.clientCertificate ? readFileSync(options.clientCertificate, 'utf8') : undefined;
  let key = options.clientKey ? readFileSync(options.clientKey, 'utf8') : undefined;
  if (options.kubeconfig) {
    const doc = fromYaml(readFileSync(options.kubeconfig, 'utf8')) as {
      'current-context'?: string;
      contexts?: { name: string; context: { cluster: string; user: string } }[];
      clusters?: { name: string; cluster: Record<string, string> }[];
      users?: { name: string; user: Record<string, string> }[];
    };
    const context = doc.contexts?.find((c) => c.name === doc['current-context'])?.context;
    const cluster = doc.clusters?.find((c) => c.name === context?.cluster)?.cluster ?? doc.clusters?.[0]?.cluster ?? {};
    const user = doc.users?.find((u) => u.name === context?.user)?.user ?? doc.users?.[0]?.user ?? {};
    const data = (field: string) => (field ? Buffer.from(field, 'base64').toString('utf8') : undefined);
    server ??= cluster.server;
    ca ??= data(cluster['certificate-authority-data']) ?? (cluster['certificate-authority'] ? readFileSync(cluster['certificate-authority'], 'utf8') : undefined);
    cert ??= data(user['client-certificate-data']) ?? (user['client-certificate'] ? readFileSync(user['client-certificate'], 'utf8') : undefined);
    key ??= data(user['client-key-data']) ?? (user['client-key'] ? readFileSync(user['client-key'], 'utf8') : undefined);
  }
  server ??= info.cluster?.server;
  const clusterCa = info.cluster?.['certificate-authority-data'];
  ca ??= clusterCa ? Buffer.from(clusterCa, 'base64').toString('utf8') : undefined;
  if (!server) throw new CredentialError('no server: give --server or --kubeconfig, or set provideClusterInfo in the kubeconfig');
  return { server, ca, cert, key };
}

function tokenRequest(endpoint: Endpoint, serviceAccount: string, audiences: string[], expirationSeconds: number): Promise<{ token: string; expiresAt?: number }> {
  if (!endpoint.cert || !endpoint.key) {
    return Promise.reject(new CredentialError('a TokenRequest needs a client certificate: give --kubeconfig or --client-certificate and --client-key'));
  }
  const [namespace, name] = serviceAccount.split('/');
  const url = `${endpoint.server.replace(/\/+$/, '')}/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(name)}/token`;
  const body = JSON.stringify({
    apiVersion: 'authentication.orch.io/v1', kind: 'TokenRequest',
    spec: { ...(audiences.length > 0 ? { audiences } : {}), expirationSeconds },
  });
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'POST', ca: endpoint.ca, cert: endpoint.cert, key: endpoint.key, agent: false,
      headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'orch-apiserver-credential' },
    }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => { text += c.toString(); });
      res.on('end', () => {
        let answer: { message?: string; status?: { token?: string; expirationTimestamp?: string } };
        try { answer = JSON.parse(text); } catch { reject(new CredentialError(`TokenRequest: HTTP ${res.statusCode}`)); return; }
        const token = answer.status?.token;
        if (res.statusCode !== 201 || !token) { reject(new CredentialError(`TokenRequest: HTTP ${res.statusCode}: ${answer.message ?? 'no token in the answer'}`)); return; }
        const expiresAt = answer.status?.expirationTimestamp ? Date.parse(answer.status.expirationTimestamp) : undefined;
        resolve({ token, expiresAt });
      });
    });
    req.on('error', (err) => reject(new CredentialError(`TokenRequest: ${err.message}`)));
    req.end(body);
  });
}

/** Go's metav1.Time in JSON: RFC 3339 in UTC, whole seconds. */
function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

export async function credential(argv: readonly string[], env: NodeJS.ProcessEnv, out: (text: string) => void): Promise<void> {
  const options = parseCredentialArgs(argv);
  if (options.writeKubeconfig) {
    const file = options.writeKubeconfig;
    const pluginArgs = argv.filter((a, i) => a !== '--write-kubeconfig' && argv[i - 1] !== '--write-kubeconfig' && !a.startsWith('--write-kubeconfig='));
    const endpoint = endpointOf(options, { apiVersion: defaultVersion, interactive: false });
    writeExecKubeconfig(file, {
      server: endpoint.server, caPem: endpoint.ca,
      command: process.execPath, args: [fileURLToPath(new URL('./main.js', import.meta.url)), 'credential', ...pluginArgs],
    });
    out(`wrote ${file}\n`);
    return;
  }
  const info = readExecInfo(env);
  const { token, expiresAt } = options.tokenFile
    ? await tokenFromFile(options.tokenFile, info)
    : await tokenRequest(endpointOf(options, info), options.serviceAccount as string, options.audiences, options.expirationSeconds);
  const status: Record<string, string> = {};
  if (expiresAt !== undefined) status.expirationTimestamp = rfc3339(expiresAt);
  status.token = token;
  out(`${JSON.stringify({ kind: 'ExecCredential', apiVersion: info.apiVersion, spec: { interactive: info.interactive }, status })}\n`);
}
