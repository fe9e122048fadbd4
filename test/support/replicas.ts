/**
 * Several API server processes on one etcd, for the replica and fault suites: starting them,
 * writing with the admin identity, and following a watch that resumes where it ended, as a
 * client's reflector does.
 */
import type { IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { request, startServer, type HttpResponse, type TestServer } from './server.js';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it returns a value (not undefined), or fails after `timeoutMs`. */
export async function until<T>(probe: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(25);
  }
}

/** `count` API servers on the etcd at `servers`, each with its own data dir (PKI) and port. */
export async function startReplicas(servers: string, count: number, prefix: string, args: string[] = []): Promise<TestServer[]> {
  return Promise.all(Array.from({ length: count }, () => startServer({
    args: ['--etcd-servers', servers, '--etcd-prefix', prefix, '--log-level', 'warn', ...args],
  })));
}

export function createSecret(server: TestServer, namespace: string, name: string): Promise<HttpResponse> {
  return request(server, `/api/v1/namespaces/${namespace}/secrets`, { method: 'POST', body: { metadata: { name }, stringData: { n: name } } });
}

export interface SeenEvent { type: string; name: string; rv: number }

/**
 * A watch that follows a collection across stream ends: when the server ends it, it opens
 * again from the last resourceVersion it saw, so it must neither miss nor repeat an event.
 */
export class FollowedWatch {
  readonly events: SeenEvent[] = [];
  /** how often the stream ended and was opened again */
  ends = 0;
  /** error codes: of a response that was not 200, or of an ERROR event (410 Gone) */
  readonly errors: number[] = [];
  private lastRv: string;
  private current: { destroy(): void } | undefined;
  private closed = false;

  constructor(private readonly server: TestServer, private readonly path: string, fromRv: string) {
    this.lastRv = fromRv;
    this.open();
  }

  waitFor(done: (events: SeenEvent[]) => boolean, what: string, timeoutMs = 20_000): Promise<true> {
    return until(() => (done(this.events) ? true : undefined), `${what} on ${this.server.url}; saw ${this.events.length} events`, timeoutMs);
  }

  close(): void {
    this.closed = true;
    this.current?.destroy();
  }

  private open(): void {
    if (this.closed) return;
    const s = this.server;
    const req = httpsRequest(`${s.url}${this.path}?watch=1&allowWatchBookmarks=false&resourceVersion=${this.lastRv}`, {
      ca: s.admin.ca, cert: s.admin.cert, key: s.admin.key, agent: false,
    }, (res: IncomingMessage) => {
      if (res.statusCode !== 200) this.errors.push(res.statusCode ?? 0);
      let buffered = '';
      res.on('data', (chunk: Buffer) => {
        buffered += chunk.toString('utf8');
        for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          if (line.trim()) this.receive(JSON.parse(line) as { type: string; object: { code?: number; metadata: { name: string; resourceVersion: string } } });
        }
      });
      res.on('close', () => this.reopen(req));
    });
    req.on('error', () => this.reopen(req));
    req.end();
    this.current = req;
  }

  private receive(e: { type: string; object: { code?: number; metadata: { name: string; resourceVersion: string } } }): void {
    if (e.type === 'ERROR') {
      this.errors.push(e.object.code ?? 0);
      return;
    }
    if (e.type === 'BOOKMARK') return;
    this.lastRv = e.object.metadata.resourceVersion;
    this.events.push({ type: e.type, name: e.object.metadata.name, rv: Number(this.lastRv) });
  }

  private reopen(req: { destroy(): void }): void {
    if (this.closed || req !== this.current) return;
    this.current = undefined;
    this.ends++;
    setTimeout(() => this.open(), 50);
  }
}
