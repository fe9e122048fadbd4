/**
 * --audit-webhook-config-file: a kubeconfig naming the receiver (Kubernetes' format for every
 * webhook): the current context's cluster gives the URL and the CA that verifies the receiver,
 * its user the client certificate and key (or a bearer token) the server presents. File paths in
 * it are relative to the kubeconfig's directory, as kubectl reads them.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { fromYaml } from '../../codec/yaml.js';

export interface WebhookTarget {
  url: URL;
  ca?: string;
  cert?: string;
  key?: string;
  token?: string;
  insecureSkipTLSVerify: boolean;
}

type Named<T> = { name?: string } & T;
interface Kubeconfig {
  'current-context'?: string;
  clusters?: Named<{ cluster?: Record<string, unknown> }>[];
  users?: Named<{ user?: Record<string, unknown> }>[];
  contexts?: Named<{ context?: { cluster?: string; user?: string } }>[];
}

function pick<T extends { name?: string }>(list: T[] | undefined, name: string | undefined, what: string): T | undefined {
  if (!list || list.length === 0) return undefined;
  if (name === undefined) return list[0];
  const found = list.find((x) => x.name === name);
  if (!found) throw new Error(`${what} ${JSON.stringify(name)} not found`);
  return found;
}

/** `<field>-data` (base64) wins over `<field>` (a file path) */
function material(section: Record<string, unknown> | undefined, field: string, base: string): string | undefined {
  if (!section) return undefined;
  const data = section[`${field}-data`];
  if (typeof data === 'string' && data !== '') return Buffer.from(data, 'base64').toString('utf8');
  const file = section[field];
  if (typeof file === 'string' && file !== '') return readFileSync(isAbsolute(file) ? file : join(base, file), 'utf8');
  return undefined;
}

export function loadWebhookKubeconfig(path: string): WebhookTarget {
  try {
    const doc = fromYaml(readFileSync(path, 'utf8')) as Kubeconfig | null;
    if (!doc || typeof doc !== 'object') throw new Error('not a kubeconfig');
    const base = dirname(path);
    const context = pick(doc.contexts, doc['current-context'], 'context')?.context;
    const cluster = pick(doc.clusters, context?.cluster, 'cluster')?.cluster;
    const user = pick(doc.users, context?.user, 'user')?.user;
    const server = cluster?.server;
    if (typeof server !== 'string' || server === '') throw new Error('the cluster has no server URL');
    const url = new URL(server);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`server ${JSON.stringify(server)} is not an http(s) URL`);
    const token = typeof user?.token === 'string' && user.token !== '' ? user.token
      : typeof user?.tokenFile === 'string' ? readFileSync(isAbsolute(user.tokenFile) ? user.tokenFile : join(base, user.tokenFile), 'utf8').trim() : undefined;
    return {
      url,
      ca: material(cluster, 'certificate-authority', base),
      cert: material(user, 'client-certificate', base),
      key: material(user, 'client-key', base),
      token,
      insecureSkipTLSVerify: cluster?.['insecure-skip-tls-verify'] === true,
    };
  } catch (err) {
    throw new Error(`initializing audit webhook: invalid kubeconfig ${path}: ${(err as Error).message}`);
  }
}
