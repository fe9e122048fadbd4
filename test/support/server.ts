/**
 * Starts a real orch-apiserver process on a free loopback port with a temporary data dir, for
 * tests that talk to it over HTTPS as clients do. The process is separate so tests can kill -9 it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect as http2Connect } from 'node:http2';
import { request as httpsRequest, type Agent as HttpsAgent } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const mainScript = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface Credentials { ca: string; cert: string; key: string }

export interface TestServer {
  url: string;
  port: number;
  dataDir: string;
  kubeconfig: string;
  /** the admin identity (CN orch-admin, O system:masters) */
  admin: Credentials;
  process: ChildProcess;
  /** lines the server printed */
  logs: string[];
  /** SIGTERM and wait for exit */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for exit */
  kill(): Promise<void>;
  /** stop and remove the data dir */
  dispose(): Promise<void>;
}

export interface StartOptions {
  dataDir?: string;
  /** the CLI to run; mainScript (this checkout's dist/) unless given */
  script?: string;
  port?: number;
  args?: string[];
  /** options for node itself (`--cpu-prof` when profiling a bench) */
  nodeArgs?: string[];
  /** milliseconds to wait for readiness: a guard against a server that never comes up, generous
   * because a machine shared by several test runs can be many times slower than an idle one */
  timeoutMs?: number;
}

/** The admin identity the server wrote into its data dir on first start. */
export function adminCredentials(dataDir: string): Credentials {
  const pki = join(dataDir, 'pki');
  return {
    ca: readFileSync(join(pki, 'ca.crt'), 'utf8'),
    cert: readFileSync(join(pki, 'admin.crt'), 'utf8'),
    key: readFileSync(join(pki, 'admin.key'), 'utf8'),
  };
}

/**
 * Runs `start`, which binds ports from freePort, again (twice at most) when it lost one: a port is
 * free when freePort answers, not when the process binds it, and a test file running beside this
 * one may take it in between.
 */
export async function onFreePorts<T>(start: () => Promise<T>, lostPort: (err: unknown) => boolean): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (attempt >= 3 || !lostPort(err)) throw err;
    }
  }
}

export async function startServer(options: StartOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'orch-test-'));
  if (options.port !== undefined) return startOn(options.port, dataDir, options);
  return onFreePorts(async () => startOn(await freePort(), dataDir, options), (err) => err instanceof PortTakenError);
}

class PortTakenError extends Error {}

async function startOn(port: number, dataDir: string, options: StartOptions): Promise<TestServer> {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), options.script ?? mainScript, '--data-dir', dataDir, '--secure-port', String(port), '--bind-address', '127.0.0.1', ...(options.args ?? [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let buffered = '';
  const onData = (chunk: Buffer) => {
    buffered += chunk.toString();
    let nl;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      logs.push(buffered.slice(0, nl));
      buffered = buffered.slice(nl + 1);
    }
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  let exitCode: number | null | undefined;
  void exited.then((code) => { exitCode = code; });
  const url = `https://127.0.0.1:${port}`;
  // ready = /readyz answers 200 to the admin identity, as a real probe would check
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  let admin: Credentials | undefined;
  for (;;) {
    if (exitCode !== undefined) {
      const message = `server exited with ${exitCode}:\n${logs.join('\n')}`;
      throw logs.some((l) => l.includes('EADDRINUSE')) ? new PortTakenError(message) : new Error(message);
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not become ready in time:\n${logs.join('\n')}`);
    }
    try {
      admin ??= adminCredentials(dataDir);
      const status = await probe(`${url}/readyz`, admin);
      if (status === 200) break;
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 25));
  }
  const server: TestServer = {
    url, port, dataDir, kubeconfig: join(dataDir, 'admin.kubeconfig'), admin, process: child, logs,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
    async dispose() {
      await server.stop();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return server;
}

function probe(url: string, creds: Credentials): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { ca: creds.ca, cert: creds.cert, key: creds.key, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** the body parsed as JSON, when it is JSON */
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer | object;
  /** client identity; defaults to the admin; null for none */
  credentials?: Credentials | null;
  /** send the path exactly as given: a URL would resolve `.` and `..` segments and re-escape characters */
  asSent?: boolean;
  /** fail the request (reject) after this many milliseconds */
  timeoutMs?: number;
  /** an agent that keeps connections open (default: a new connection per request) */
  agent?: HttpsAgent;
}

function parseJson(text: string): unknown {
  try { return JSON.parse(text); } catch { return undefined; }
}

/** One HTTP/1.1 request over TLS (verifying the server against the test CA). */
export function request(server: Pick<TestServer, 'url' | 'admin'>, path: string, o: RequestOptions = {}): Promise<HttpResponse> {
  const creds = o.credentials === undefined ? server.admin : o.credentials;
  const body = o.body === undefined ? undefined : typeof o.body === 'string' || Buffer.isBuffer(o.body) ? o.body : JSON.stringify(o.body);
  const headers: Record<string, string> = { ...(o.headers ?? {}) };
  if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  // a DELETE with a body must say how long it is, or the body reads as the next request
  if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-length')) headers['content-length'] = String(Buffer.byteLength(body));
  return new Promise((resolve, reject) => {
    const options = {
      method: o.method ?? 'GET', headers, ca: server.admin.ca,
      cert: creds?.cert, key: creds?.key, agent: o.agent ?? false,
    };
    const callback = (res: import('node:http').IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, json: parseJson(text) });
      });
      res.on('error', reject);
    };
    const req = o.asSent
      ? httpsRequest({ ...options, host: '127.0.0.1', port: new URL(server.url).port, path }, callback)
      : httpsRequest(`${server.url}${path}`, options, callback);
    if (o.timeoutMs !== undefined) req.setTimeout(o.timeoutMs, () => req.destroy(new Error(`no answer within ${o.timeoutMs} ms: ${o.method ?? 'GET'} ${path}`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** The same over HTTP/2. */
export function request2(server: TestServer, path: string, o: RequestOptions = {}): Promise<HttpResponse> {
  const creds = o.credentials === undefined ? server.admin : o.credentials;
  const body = o.body === undefined ? undefined : typeof o.body === 'string' || Buffer.isBuffer(o.body) ? o.body : JSON.stringify(o.body);
  return new Promise((resolve, reject) => {
    const session = http2Connect(server.url, { ca: server.admin.ca, cert: creds?.cert, key: creds?.key });
    session.on('error', reject);
    const headers: Record<string, string> = { ':method': o.method ?? 'GET', ':path': path, ...(o.headers ?? {}) };
    if (body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
    const stream = session.request(headers);
    let status = 0;
    let responseHeaders: Record<string, string | string[] | undefined> = {};
    stream.on('response', (h) => { status = Number(h[':status']); responseHeaders = h as typeof responseHeaders; });
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      session.close();
      const text = Buffer.concat(chunks).toString('utf8');
      resolve({ status, headers: responseHeaders, body: text, json: parseJson(text) });
    });
    stream.on('error', reject);
    stream.end(body);
  });
}
