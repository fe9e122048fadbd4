/**
 * The connection a webhook's kubeconfig file describes (as client-go's clientcmd reads it): the
 * current context's cluster and user, or the only ones there are. Files named in the kubeconfig
 * are relative to it; `-data` fields are base64.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { fromYaml } from '../../codec/yaml.js';

export interface WebhookConnection {
  server: string;
  ca?: string;
  cert?: string;
  key?: string;
  token?: string;
  insecureSkipTlsVerify: boolean;
  tlsServerName?: string;
}

interface Named<T> { name?: string; [key: string]: unknown; cluster?: T; user?: T; context?: T }
type Fields = Record<string, unknown>;

function pick<T>(entries: Named<T>[] | undefined, name: string | undefined, what: string, path: string): T {
  const list = entries ?? [];
  const found = name !== undefined ? list.find((e) => e.name === name) : list.length === 1 ? list[0] : undefined;
  const value = found?.[what as 'cluster'];
  if (!value) throw new Error(`kubeconfig ${path}: no ${what}${name ? ` named ${JSON.stringify(name)}` : ''} to use`);
  return value;
}

export function loadWebhookKubeconfig(path: string): WebhookConnection {
  let doc: Record<string, unknown>;
  try {
    doc = fromYaml(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`invalid kubeconfig ${path}: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!doc || typeof doc !== 'object') throw new Error(`invalid kubeconfig ${path}: not a map`);
  const currentName = typeof doc['current-context'] === 'string' && doc['current-context'] ? doc['current-context'] as string : undefined;
  const context = currentName ? pick<Fields>(doc.contexts as Named<Fields>[], currentName, 'context', path) : undefined;
  const cluster = pick<Fields>(doc.clusters as Named<Fields>[], context?.cluster as string | undefined, 'cluster', path);
  const user = (doc.users as Named<Fields>[] | undefined)?.length
    ? pick<Fields>(doc.users as Named<Fields>[], context?.user as string | undefined, 'user', path)
    : {};
  const base = dirname(path);
  const file = (name: unknown) => readFileSync(isAbsolute(name as string) ? name as string : join(base, name as string), 'utf8');
  const material = (fields: Fields, dataKey: string, fileKey: string): string | undefined => {
    if (typeof fields[dataKey] === 'string') return Buffer.from(fields[dataKey] as string, 'base64').toString('utf8');
    if (typeof fields[fileKey] === 'string') return file(fields[fileKey]);
    return undefined;
  };
  const server = cluster.server;
  if (typeof server !== 'string' || !URL.canParse(server)) throw new Error(`kubeconfig ${path}: cluster has no valid server URL`);
  const connection: WebhookConnection = {
    server,
    ca: material(cluster, 'certificate-authority-data', 'certificate-authority'),
    cert: material(user, 'client-certificate-data', 'client-certificate'),
    key: material(user, 'client-key-data', 'client-key'),
    token: typeof user.token === 'string' ? user.token : typeof user.tokenFile === 'string' ? file(user.tokenFile).trim() : undefined,
    insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true,
    tlsServerName: typeof cluster['tls-server-name'] === 'string' ? cluster['tls-server-name'] as string : undefined,
  };
  return connection;
}

const serviceAccountDir = '/var/run/secrets/kubernetes.io/serviceaccount';

/** client-go's InClusterConfig: the service this server runs beside, with the pod's service-account token and CA. */
export function inClusterConnection(env: NodeJS.ProcessEnv = process.env): WebhookConnection {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) throw new Error('unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined');
  return {
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    token: readFileSync(join(serviceAccountDir, 'token'), 'utf8').trim(),
    ca: readFileSync(join(serviceAccountDir, 'ca.crt'), 'utf8'),
    insecureSkipTlsVerify: false,
  };
}
