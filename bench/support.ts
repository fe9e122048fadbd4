/**
 * What every benchmark shares: a server process on a temp data dir, a keep-alive HTTPS client
 * with the admin certificate, timing and summary statistics.
 */
import { Agent, request } from 'node:https';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startServer, type TestServer } from '../test/support/server.js';

export { startServer, type TestServer };

export function agentFor(server: TestServer, maxSockets = 64): Agent {
  return new Agent({ keepAlive: true, maxSockets, ca: server.admin.ca, cert: server.admin.cert, key: server.admin.key });
}

export function call(server: TestServer, agent: Agent, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<{ status: number; bytes: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, { method, agent, headers: body ? { 'content-type': 'application/json', ...headers } : headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const buf = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, bytes: buf.length, text: buf.toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Scrapes the server's /metrics once a second (as an operator's Prometheus would) until stopped. */
export function scrapeMetricsEverySecond(server: TestServer): () => void {
  const agent = agentFor(server, 1);
  let stopped = false;
  const tick = async () => {
    while (!stopped) {
      const res = await call(server, agent, 'GET', '/metrics');
      if (res.status !== 200) throw new Error(`/metrics: ${res.status}`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  };
  const done = tick();
  return () => { stopped = true; void done.finally(() => agent.destroy()); };
}

export async function pool(n: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, async () => {
    while (next < n) await task(next++);
  }));
}

export interface Summary { median: number; p99: number; min: number; max: number }

export function summarize(samples: number[]): Summary {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return { median: at(0.5), p99: at(0.99), min: s[0], max: s[s.length - 1] };
}

export async function timeRounds(rounds: number, warmup: number, fn: () => Promise<void> | void): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t = process.hrtime.bigint();
    await fn();
    out.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return out;
}

/** Resident set size of a process, in MiB (from /proc). */
export function rssMiB(pid: number): number {
  const status = execFileSync('cat', [`/proc/${pid}/status`]).toString();
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) / 1024 : NaN;
}

export function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

/**
 * The server entry point of another built checkout (a before-and-after comparison): `dir` holds
 * that checkout, with `npm ci && npm run build` done.
 */
export function builtServerScript(dir: string): string {
  const script = join(resolve(dir), 'dist/src/cli/main.js');
  if (!existsSync(script)) throw new Error(`${script} does not exist: build that checkout first`);
  return script;
}
