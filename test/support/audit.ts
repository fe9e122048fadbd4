/**
 * Audit test support: policy files, reading the real audit log a server writes, waiting for
 * events (backends write after the response in some modes), and a real HTTPS webhook receiver
 * with its own CA that requires the server's client certificate.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clientCert } from './certs.js';
import { sleep, type Obj } from './api.js';
import type { HttpResponse } from './server.js';

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function writePolicy(dir: string, yaml: string, name = 'policy.yaml'): string {
  const path = join(dir, name);
  writeFileSync(path, yaml);
  return path;
}

/**
 * every complete JSON line of the file (none yet: []). A read can land in the middle of the
 * server's write (Linux does not lock a file's reads against its writes): a last line without
 * its newline is still being written, and is read on a later poll.
 */
export function readJsonLines(path: string): Obj[] {
  if (!existsSync(path)) return [];
  const text = readFileSync(path, 'utf8');
  return text.slice(0, text.lastIndexOf('\n') + 1).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Obj);
}

/** Polls until `check` returns a value (backends may write after the response); fails naming `what`. */
export async function eventually<T>(what: string, check: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

export function auditIdOf(res: HttpResponse): string {
  const id = res.headers['audit-id'];
  assert.equal(typeof id, 'string', 'the response carries an Audit-Id');
  return id as string;
}

/** the events of one request, once the stages listed are all there */
export function eventsOf(read: () => Obj[], auditID: string, stages: readonly string[]): Promise<Obj[]> {
  return eventually(`${stages.join(', ')} of ${auditID}`, () => {
    const events = read().filter((e) => e.auditID === auditID);
    return stages.every((s) => events.some((e) => e.stage === s)) ? events : undefined;
  });
}

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

export interface ReceivedBatch { apiVersion: string; kind: string; items: Obj[]; clientCN: string | undefined }
export type ReceiverAnswer = { status: number; headers?: Record<string, string> } | 'hang';

export interface AuditReceiver {
  kubeconfig: string;
  batches: ReceivedBatch[];
  /** how the next POST is answered (default 200) */
  answer: (n: number) => ReceiverAnswer;
  /** answers every hung request 200 */
  release(): void;
  close(): Promise<void>;
}

/**
 * A real HTTPS receiver: its own CA signs its serving certificate (127.0.0.1) and the client
 * certificate the server is given in the kubeconfig; connections without that certificate fail.
 */
export async function startAuditReceiver(dir: string): Promise<AuditReceiver> {
  const p = (f: string) => join(dir, f);
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', p('receiver-ca.key'), '-out', p('receiver-ca.crt'), '-subj', '/CN=audit-receiver-ca', '-days', '1');
  writeFileSync(p('server.ext'), 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n');
  openssl('req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', p('receiver.key'), '-out', p('receiver.csr'), '-subj', '/CN=127.0.0.1');
  openssl('x509', '-req', '-in', p('receiver.csr'), '-CA', p('receiver-ca.crt'), '-CAkey', p('receiver-ca.key'), '-set_serial', '77', '-days', '1', '-out', p('receiver.crt'), '-extfile', p('server.ext'));
  const client = clientCert(`audit-client-${Date.now()}`, '/CN=orch-apiserver-audit', p('receiver-ca.crt'), p('receiver-ca.key'));
  writeFileSync(p('client.crt'), client.cert);
  writeFileSync(p('client.key'), client.key);

  const batches: ReceivedBatch[] = [];
  const hung: (() => void)[] = [];
  let posts = 0;
  const receiver: AuditReceiver = {
    kubeconfig: p('webhook.kubeconfig'),
    batches,
    answer: () => ({ status: 200 }),
    release() { for (const h of hung.splice(0)) h(); },
    close: () => new Promise((resolve) => { receiver.release(); server.closeAllConnections(); server.close(() => resolve()); }),
  };
  const server: Server = createServer({
    key: readFileSync(p('receiver.key')), cert: readFileSync(p('receiver.crt')), ca: readFileSync(p('receiver-ca.crt')),
    requestCert: true, rejectUnauthorized: true,
  }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const list = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Obj;
      const cn = (req.socket as TLSSocket).getPeerCertificate().subject?.CN;
      batches.push({ apiVersion: list.apiVersion, kind: list.kind, items: list.items, clientCN: typeof cn === 'string' ? cn : undefined });
      const answer = receiver.answer(posts++);
      const reply = (status: number, headers: Record<string, string> = {}) => { res.writeHead(status, { 'content-type': 'application/json', ...headers }); res.end('{}'); };
      if (answer === 'hang') hung.push(() => reply(200));
      else reply(answer.status, answer.headers);
    });
  });
  const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
  writeFileSync(receiver.kubeconfig, `apiVersion: v1
kind: Config
current-context: audit
clusters:
- name: receiver
  cluster:
    server: https://127.0.0.1:${port}/audit
    certificate-authority-data: ${readFileSync(p('receiver-ca.crt')).toString('base64')}
users:
- name: apiserver
  user:
    client-certificate: client.crt
    client-key: client.key
contexts:
- name: audit
  context: {cluster: receiver, user: apiserver}
`);
  return receiver;
}

/** every event the receiver got, in the order it got them */
export function receivedEvents(r: AuditReceiver): Obj[] {
  return r.batches.flatMap((b) => b.items);
}
