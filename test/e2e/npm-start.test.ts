/**
 * `npm start` as the README tells a user to run it: SIGTERM to the npm process, or Ctrl-C (SIGINT
 * to the whole process group, which npm then forwards once more), reaches the server, which
 * shuts down gracefully and exits 0 with npm; the port is closed and a write acknowledged just
 * before is there after a restart.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { adminCredentials, freePort, request, startServer, type TestServer } from '../support/server.js';

/** the checkout: dist/test/e2e/ is three levels below it */
const checkout = fileURLToPath(new URL('../../..', import.meta.url));

interface NpmStart { npm: ChildProcess; entries: Record<string, unknown>[]; exited: Promise<number | null>; url: string }

/** the environment without ORCH_APISERVER_* variables, so that only flags configure the server */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('ORCH_APISERVER_')) env[k] = v;
  return env;
}

/**
 * `npm start -- --secure-port <port> --data-dir <dir>` in the checkout, in a process group of its
 * own (as a terminal's job is), until the server logs that it is ready; its URL is in that line.
 */
async function npmStart(dataDir: string, port: number): Promise<NpmStart> {
  const npm = spawn('npm', ['start', '--', '--secure-port', String(port), '--data-dir', dataDir], {
    cwd: checkout, env: cleanEnv(), detached: true, stdio: ['ignore', 'pipe', 'pipe'],
  });
  const entries: Record<string, unknown>[] = [];
  const text: string[] = [];
  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    // the prestart build may have to compile a changed checkout first
    const timer = setTimeout(() => reject(new Error(`npm start: not ready in time:\n${text.join('\n')}`)), 120_000);
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString();
      let nl;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        text.push(line);
        if (!line.startsWith('{')) continue; // npm's own lines
        const entry = JSON.parse(line) as Record<string, unknown>;
        entries.push(entry);
        if (entry.msg === 'orch-apiserver is ready') { clearTimeout(timer); resolve(String(entry.url)); }
      }
    };
    npm.stdout!.on('data', onData);
    npm.stderr!.on('data', onData);
    void exited.then((code) => { clearTimeout(timer); reject(new Error(`npm start exited with ${code}:\n${text.join('\n')}`)); });
  });
  return { npm, entries, exited, url };
}

/** whether anything accepts connections on the port */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}

describe('npm start', () => {
  const cleanup: (() => Promise<unknown> | void)[] = [];
  after(async () => { for (const c of cleanup.reverse()) await c(); });

  function dataDir(): string {
    const d = mkdtempSync(join(tmpdir(), 'orch-npm-start-'));
    cleanup.push(() => rmSync(d, { recursive: true, force: true }));
    return d;
  }

  /** ends whatever is left of the group (a server that outlived npm, should a test fail) */
  function track(started: NpmStart): void {
    cleanup.push(() => {
      try { process.kill(-started.npm.pid!, 'SIGKILL'); } catch { /* the group is gone: nothing was left */ }
    });
  }

  it('SIGTERM to the npm process stops the server gracefully: exit 0, port closed, acknowledged writes kept', async () => {
    const dir = dataDir();
    const port = await freePort();
    const started = await npmStart(dir, port);
    track(started);
    assert.equal(started.url, `https://127.0.0.1:${port}`);
    const server = { url: started.url, admin: adminCredentials(dir) };
    const created = await request(server, '/api/v1/namespaces', { method: 'POST', body: { metadata: { name: 'before-sigterm' } } });
    assert.equal(created.status, 201, created.body);
    // secure by default: Node,RBAC with anonymous requests, so probes pass and nothing else does
    assert.equal((await request(server, '/readyz', { credentials: null })).status, 200);
    const anonymous = await request(server, '/api/v1/namespaces', { credentials: null });
    assert.equal(anonymous.status, 403, anonymous.body);
    assert.equal(anonymous.json.message, 'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope');

    started.npm.kill('SIGTERM'); // the npm process only, as `kill <pid of npm>` does
    assert.equal(await started.exited, 0, JSON.stringify(started.entries));
    assert.equal(await listening(port), false, 'nothing listens on the port after npm exited');
    const messages = started.entries.map((e) => e.msg);
    assert.ok(messages.includes('storage closed'), `a graceful shutdown closes storage: ${messages.join(' | ')}`);

    const again: TestServer = await startServer({ dataDir: dir, port });
    cleanup.push(() => again.dispose());
    const read = await request(again, '/api/v1/namespaces/before-sigterm');
    assert.equal(read.status, 200, read.body);
    assert.equal(read.json.metadata.uid, created.json.metadata.uid);
  });

  it('Ctrl-C (SIGINT to the process group, then npm forwarding it) is one request for a graceful stop', async () => {
    const dir = dataDir();
    const port = await freePort();
    const started = await npmStart(dir, port);
    track(started);
    process.kill(-started.npm.pid!, 'SIGINT'); // what a terminal does to its foreground job
    assert.equal(await started.exited, 0, JSON.stringify(started.entries));
    assert.equal(await listening(port), false, 'nothing listens on the port after npm exited');
    assert.equal(started.entries.filter((e) => e.msg === 'received signal').length, 1, JSON.stringify(started.entries));
    assert.ok(started.entries.some((e) => e.msg === 'storage closed'), JSON.stringify(started.entries));
  });
});
