/**
 * The `orch-apiserver` command line: help, flag errors, a second server started with nothing but
 * flags, the PKI and kubeconfig written on first start, TLS flags, SIGTERM and JSON logs.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { load as loadYaml } from 'js-yaml';
import { freePort, mainScript, request, startServer, type TestServer } from '../support/server.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** the environment without ORCH_APISERVER_* variables, so that only flags configure the server */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('ORCH_APISERVER_')) env[k] = v;
  return env;
}

/** runs the CLI expecting it to exit by itself (help, flag errors) */
function runCli(args: string[], cwd?: string) {
  const r = spawnSync(process.execPath, [mainScript, ...args], { encoding: 'utf8', timeout: 60_000, env: cleanEnv(), cwd });
  assert.equal(r.error, undefined, `the CLI did not exit by itself: ${String(r.error)}`);
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface Started { child: ChildProcess; lines: string[]; exited: Promise<number | null> }

/** spawns the CLI with exactly these flags and waits for the readiness line */
async function spawnServer(args: string[], cwd?: string): Promise<Started> {
  const child = spawn(process.execPath, [mainScript, ...args], { env: cleanEnv(), cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready in time:\n${lines.join('\n')}`)), 60_000);
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString();
      let nl;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        lines.push(line);
        if (line.includes('orch-apiserver is ready')) { clearTimeout(timer); resolve(); }
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => { clearTimeout(timer); reject(new Error(`exited with ${code}:\n${lines.join('\n')}`)); });
  });
  return { child, lines, exited };
}

async function stopServer(s: Started): Promise<number | null> {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return s.child.exitCode;
  s.child.kill('SIGTERM');
  return s.exited;
}

/** GET with explicit TLS material */
function get(url: string, tls: { ca: string | Buffer; cert?: string | Buffer; key?: string | Buffer; servername?: string }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { ...tls, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => { body += c.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** the certificate a server presents */
function peerCertificate(port: number): Promise<X509Certificate> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const raw = socket.getPeerCertificate().raw;
      socket.end();
      resolve(new X509Certificate(raw));
    });
    socket.on('error', reject);
  });
}

function subjectFields(dn: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const line of dn.split('\n')) {
    const i = line.indexOf('=');
    (out[line.slice(0, i)] ??= []).push(line.slice(i + 1));
  }
  return out;
}

describe('orch-apiserver command line', () => {
  const cleanup: (() => Promise<unknown> | void)[] = [];
  after(async () => { for (const c of cleanup.reverse()) await c(); });

  function tempDir(): string {
    const d = mkdtempSync(join(tmpdir(), 'orch-cli-'));
    cleanup.push(() => rmSync(d, { recursive: true, force: true }));
    return d;
  }

  describe('--help', () => {
    it('exits 0 and lists the flags with their defaults', () => {
      const r = runCli(['--help']);
      assert.equal(r.code, 0, r.stderr);
      const help = r.stdout;
      const flag = (name: string) => help.split('\n').find((l) => new RegExp(`^\\s+(-\\w, )?${name}\\b`).test(l));
      const expectations: [string, RegExp][] = [
        ['--secure-port', /--secure-port int\s.*\(default 6443\)/],
        ['--data-dir', /--data-dir string\s.*\(default "\.\/data"\)/],
        ['--event-ttl', /--event-ttl duration\s.*\(default 1h0m0s\)/],
        ['--request-timeout', /--request-timeout duration\s.*\(default 1m0s\)/],
        ['--anonymous-auth', /--anonymous-auth\s.*\(default true\)/],
        ['--authorization-mode', /--authorization-mode strings\s.*\(default \[AlwaysAllow\]\)/],
        ['--bind-address', /--bind-address ip\s/],
        ['--tls-cert-file', /--tls-cert-file string\s/],
        ['--tls-private-key-file', /--tls-private-key-file string\s/],
        ['--client-ca-file', /--client-ca-file string\s/],
      ];
      for (const [name, re] of expectations) {
        const line = flag(name);
        assert.ok(line, `${name} is not listed in --help:\n${help}`);
        assert.match(line, re);
      }
      assert.ok(help.split('\n').some((l) => /^\s+-v, --v\b/.test(l)), '-v is listed');
      assert.ok(help.split('\n').some((l) => /^\s+-h, --help\b/.test(l)), '-h is listed');
      assert.equal(r.stderr, '');
    });

    it('-h is the same as --help', () => {
      const r = runCli(['-h']);
      assert.equal(r.code, 0);
      assert.equal(r.stdout, runCli(['--help']).stdout);
    });
  });

  describe('flag errors exit non-zero naming the flag', () => {
    it('--secure-port 0 is rejected: the secure port cannot be switched off', () => {
      const d = tempDir();
      const r = runCli(['--secure-port', '0', '--data-dir', d]);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /--secure-port/);
      assert.equal(r.stdout, '');
      assert.ok(!existsSync(join(d, 'pki')), 'nothing was generated');
    });

    it('--secure-port out of range or not a number', () => {
      for (const value of ['65536', '-1', 'abc']) {
        const r = runCli(['--secure-port', value]);
        assert.notEqual(r.code, 0, `--secure-port ${value}`);
        assert.match(r.stderr, /--secure-port/);
        assert.ok(r.stderr.includes(value), `the message names the value ${value}: ${r.stderr}`);
      }
    });

    it('an unknown flag', () => {
      const r = runCli(['--unknown-flag']);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /unknown flag: --unknown-flag/);
      const r2 = runCli(['--unknown-flag=3']);
      assert.notEqual(r2.code, 0);
      assert.match(r2.stderr, /--unknown-flag/);
    });

    it('a malformed duration', () => {
      const r = runCli(['--request-timeout', '5x']);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /--request-timeout/);
      assert.match(r.stderr, /5x/);
      const r2 = runCli(['--event-ttl=forever']);
      assert.notEqual(r2.code, 0);
      assert.match(r2.stderr, /--event-ttl/);
    });

    it('a flag without its value', () => {
      const r = runCli(['--data-dir']);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /--data-dir/);
    });

    it('an unknown authorization mode', () => {
      const r = runCli(['--authorization-mode', 'Bogus']);
      assert.notEqual(r.code, 0);
      // kube-apiserver words it: authorization-mode "Bogus" is not a valid mode
      assert.match(r.stderr, /authorization-mode/);
      assert.match(r.stderr, /Bogus/);
    });

    it('--tls-cert-file without --tls-private-key-file, and the reverse', () => {
      const d = tempDir();
      const r = runCli(['--tls-cert-file', join(d, 'x.crt'), '--data-dir', d]);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /--tls-private-key-file/);
      const r2 = runCli(['--tls-private-key-file', join(d, 'x.key'), '--data-dir', d]);
      assert.notEqual(r2.code, 0);
      assert.match(r2.stderr, /--tls-cert-file/);
    });
  });

  describe('a server started with nothing but flags', () => {
    let first: TestServer;
    before(async () => {
      first = await startServer();
      cleanup.push(() => first.dispose());
    });

    it('runs next to another server, on its own port and data dir, and writes its admin kubeconfig there', async () => {
      const cwd = tempDir();
      const port = await freePort();
      assert.notEqual(port, first.port);
      // a relative --data-dir is resolved against the working directory
      const second = await spawnServer(['--secure-port', String(port), '--data-dir', 'state'], cwd);
      cleanup.push(() => stopServer(second));
      const dataDir = join(cwd, 'state');
      const kubeconfigPath = join(dataDir, 'admin.kubeconfig');
      assert.ok(existsSync(kubeconfigPath), 'admin.kubeconfig is written into the data dir');
      const kc = loadYaml(readFileSync(kubeconfigPath, 'utf8')) as any;
      assert.equal(kc.kind, 'Config');
      const ctx = kc.contexts.find((c: any) => c.name === kc['current-context']);
      assert.ok(ctx, 'current-context names a context');
      const cluster = kc.clusters.find((c: any) => c.name === ctx.context.cluster).cluster;
      const user = kc.users.find((u: any) => u.name === ctx.context.user).user;
      const url = new URL(cluster.server);
      assert.equal(url.protocol, 'https:');
      assert.equal(url.port, String(port));

      const tls = {
        ca: Buffer.from(cluster['certificate-authority-data'], 'base64'),
        cert: Buffer.from(user['client-certificate-data'], 'base64'),
        key: Buffer.from(user['client-key-data'], 'base64'),
      };
      const res = await get(`${cluster.server}/api/v1/namespaces/default`, tls);
      assert.equal(res.status, 200, res.body);
      // its own CA and state, separate from the first server
      assert.notEqual(tls.ca.toString(), first.admin.ca, 'each data dir has its own CA');
      const created = await request(first, '/api/v1/namespaces', { method: 'POST', body: { metadata: { name: 'only-on-first' } } });
      assert.equal(created.status, 201);
      assert.equal((await get(`${cluster.server}/api/v1/namespaces/only-on-first`, tls)).status, 404);
      assert.equal((await request(first, '/api/v1/namespaces/only-on-first')).status, 200);
      // without a client certificate: 401 (anonymous auth is off with AlwaysAllow)
      assert.equal((await get(`${cluster.server}/api/v1/namespaces`, { ca: tls.ca })).status, 401);
      assert.equal(await stopServer(second), 0);
    });

    it('on a port another server holds: the CLI exits 1, and startApiServer rejects and leaves nothing running', () => {
      const cli = runCli(['--secure-port', String(first.port), '--bind-address', '127.0.0.1', '--data-dir', tempDir()]);
      assert.equal(cli.code, 1);
      assert.match(cli.stdout + cli.stderr, /EADDRINUSE/);
      // embedded: the rejection comes after storage, the writer worker and the encoder pool started;
      // the script must still exit by itself, which it cannot while any of them runs
      const dist = join(mainScript, '..', '..');
      const script = `
        const { parseFlags } = await import(${JSON.stringify(join(dist, 'config', 'flags.js'))});
        const { startApiServer } = await import(${JSON.stringify(join(dist, 'apiserver.js'))});
        const { default: pino } = await import(${JSON.stringify(import.meta.resolve('pino'))});
        const parsed = parseFlags(['--secure-port', '${first.port}', '--bind-address', '127.0.0.1', '--data-dir', ${JSON.stringify(tempDir())}]);
        startApiServer(parsed.config, pino({ level: 'silent' })).then(() => console.log('started'), (err) => console.log('rejected', err.code));
      `;
      const scriptPath = join(tempDir(), 'embed.mjs');
      writeFileSync(scriptPath, script);
      const embedded = spawnSync(process.execPath, [scriptPath], { encoding: 'utf8', timeout: 60_000, env: cleanEnv() });
      assert.equal(embedded.error, undefined, `the embedding process did not exit by itself: ${String(embedded.error)}`);
      assert.equal(embedded.stdout.trim(), 'rejected EADDRINUSE', embedded.stderr);
      assert.equal(embedded.status, 0);
    });
  });

  describe('PKI generated on first start', () => {
    let server: TestServer;
    before(async () => {
      server = await startServer();
      cleanup.push(() => server.dispose());
    });

    it('writes ca, apiserver and admin certificates and keys, keys private', () => {
      for (const name of ['ca', 'apiserver', 'admin']) {
        for (const ext of ['crt', 'key']) {
          const p = join(server.dataDir, 'pki', `${name}.${ext}`);
          assert.ok(existsSync(p), `${p} exists`);
        }
        assert.equal(statSync(join(server.dataDir, 'pki', `${name}.key`)).mode & 0o077, 0, `${name}.key is readable by its owner only`);
        const cert = new X509Certificate(readFileSync(join(server.dataDir, 'pki', `${name}.crt`)));
        const key = createPrivateKey(readFileSync(join(server.dataDir, 'pki', `${name}.key`)));
        assert.equal(
          createPublicKey(key).export({ type: 'spki', format: 'der' }).toString('base64'),
          cert.publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
          `${name}.key belongs to ${name}.crt`,
        );
      }
    });

    it('the CA signs the serving and the admin certificate', () => {
      const ca = new X509Certificate(readFileSync(join(server.dataDir, 'pki', 'ca.crt')));
      assert.equal(ca.ca, true);
      for (const name of ['apiserver', 'admin']) {
        const cert = new X509Certificate(readFileSync(join(server.dataDir, 'pki', `${name}.crt`)));
        assert.equal(cert.ca, false);
        assert.ok(cert.checkIssued(ca), `${name}.crt is issued by the CA`);
        assert.ok(cert.verify(ca.publicKey), `${name}.crt is signed by the CA key`);
        assert.ok(new Date(cert.validTo).getTime() > Date.now() + 24 * 3600_000);
      }
    });

    it('the serving certificate has SANs 127.0.0.1, ::1, localhost and the host name, and is what the server presents', async () => {
      const cert = new X509Certificate(readFileSync(join(server.dataDir, 'pki', 'apiserver.crt')));
      const sans = (cert.subjectAltName ?? '').split(', ');
      assert.ok(sans.includes('IP Address:127.0.0.1'), cert.subjectAltName);
      assert.ok(sans.includes('IP Address:0:0:0:0:0:0:0:1') || sans.includes('IP Address:::1'), cert.subjectAltName);
      assert.ok(sans.includes('DNS:localhost'), cert.subjectAltName);
      assert.ok(sans.includes(`DNS:${hostname()}`), `${cert.subjectAltName} includes the host name ${hostname()}`);
      assert.ok(cert.checkIP('127.0.0.1'));
      assert.ok(cert.checkIP('::1'));
      assert.ok(cert.checkHost('localhost'));
      assert.ok(cert.keyUsage?.includes('1.3.6.1.5.5.7.3.1'), 'serverAuth extended key usage');
      const presented = await peerCertificate(server.port);
      assert.equal(presented.fingerprint256, cert.fingerprint256);
      // a client verifying the host name localhost against the CA accepts it
      const res = await get(`https://localhost:${server.port}/version`, { ca: server.admin.ca, cert: server.admin.cert, key: server.admin.key });
      assert.equal(res.status, 200);
    });

    it('the admin certificate is CN=orch-admin, O=system:masters, for client auth', () => {
      const cert = new X509Certificate(readFileSync(join(server.dataDir, 'pki', 'admin.crt')));
      const subject = subjectFields(cert.subject);
      assert.deepEqual(subject.CN, ['orch-admin']);
      assert.deepEqual(subject.O, ['system:masters']);
      assert.ok(cert.keyUsage?.includes('1.3.6.1.5.5.7.3.2'), 'clientAuth extended key usage');
    });

    it('a restart keeps the PKI it generated', async () => {
      const before = ['ca', 'apiserver', 'admin'].map((n) => readFileSync(join(server.dataDir, 'pki', `${n}.crt`), 'utf8'));
      const kubeconfig = readFileSync(server.kubeconfig, 'utf8');
      assert.equal(await server.stop(), 0);
      server = await startServer({ dataDir: server.dataDir });
      cleanup.push(() => server.dispose());
      const afterRestart = ['ca', 'apiserver', 'admin'].map((n) => readFileSync(join(server.dataDir, 'pki', `${n}.crt`), 'utf8'));
      assert.deepEqual(afterRestart, before);
      // same port is not guaranteed, but the credentials in the kubeconfig are the same
      const kc = loadYaml(readFileSync(server.kubeconfig, 'utf8')) as any;
      const old = loadYaml(kubeconfig) as any;
      assert.equal(kc.users[0].user['client-certificate-data'], old.users[0].user['client-certificate-data']);
      assert.equal(new URL(kc.clusters[0].cluster.server).port, String(server.port));
    });
  });

  describe('--tls-cert-file and --tls-private-key-file', () => {
    it('serve the given certificate instead of generating one', async () => {
      const donor = await startServer();
      cleanup.push(() => donor.dispose());
      const dir = tempDir();
      mkdirSync(join(dir, 'data'));
      const port = await freePort();
      const s = await spawnServer(['--secure-port', String(port), '--data-dir', join(dir, 'data'),
        '--tls-cert-file', join(donor.dataDir, 'pki', 'apiserver.crt'), '--tls-private-key-file', join(donor.dataDir, 'pki', 'apiserver.key')]);
      cleanup.push(() => stopServer(s));
      const presented = await peerCertificate(port);
      assert.equal(presented.fingerprint256, new X509Certificate(readFileSync(join(donor.dataDir, 'pki', 'apiserver.crt'))).fingerprint256);
      assert.equal(await stopServer(s), 0);
    });
  });

  describe('SIGTERM and logs', () => {
    it('at the default verbosity: no request lines, and the AlwaysAllow warning once', async () => {
      const server = await startServer();
      cleanup.push(() => server.dispose());
      assert.equal((await request(server, '/api/v1/namespaces/default/serviceaccounts')).status, 200);
      assert.equal(await server.stop(), 0, server.logs.join('\n'));
      const entries = server.logs.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
      assert.deepEqual(entries.filter((e) => e.msg === 'request'), [], 'request lines are for -v=3 and above');
      // kube-apiserver warns on every start where anonymous auth is on (the default) with AlwaysAllow (the default)
      const warnings = entries.filter((e) => /^AnonymousAuth is not allowed with the AlwaysAllow authorizer/.test(e.msg));
      assert.equal(warnings.length, 1, server.logs.join('\n'));
      assert.equal(warnings[0].level, 40, 'pino warn');
      assert.ok(entries.some((e) => e.msg === 'orch-apiserver is ready'));
    });

    it('exits 0 on SIGTERM and, at -v=3, logs JSON lines with a request line per request', async () => {
      const server = await startServer({ args: ['-v=3'] });
      cleanup.push(() => server.dispose());
      const res = await request(server, '/api/v1/namespaces/default/serviceaccounts');
      assert.equal(res.status, 200);
      const missing = await request(server, '/api/v1/namespaces/default/serviceaccounts/nope');
      assert.equal(missing.status, 404);
      const code = await server.stop();
      assert.equal(code, 0, server.logs.join('\n'));
      assert.equal(server.process.signalCode, null);

      const lines = server.logs.filter((l) => l.trim() !== '');
      assert.ok(lines.length > 0);
      const entries = lines.map((l) => {
        try { return JSON.parse(l); } catch { assert.fail(`not a JSON log line: ${l}`); }
      });
      for (const e of entries) {
        assert.equal(typeof e.level, 'number', 'pino level');
        assert.equal(typeof e.time, 'number', 'pino time');
        assert.equal(typeof e.msg, 'string');
      }
      const list = entries.find((e) => e.uri === '/api/v1/namespaces/default/serviceaccounts');
      assert.ok(list, `no request line for the list:\n${lines.join('\n')}`);
      assert.equal(list.verb, 'list');
      assert.equal(list.level, 20, 'request lines are debug, shown from -v=3 on as kube-apiserver shows them');
      assert.equal(list.status, 200);
      assert.equal(typeof list.latencyMs, 'number');
      assert.ok(list.latencyMs >= 0);
      assert.equal(list.user, 'orch-admin');
      const get404 = entries.find((e) => e.uri === '/api/v1/namespaces/default/serviceaccounts/nope');
      assert.ok(get404);
      assert.equal(get404.verb, 'get');
      assert.equal(get404.status, 404);
      // the shutdown is logged, after the requests
      // a request's line is written once its response has been handed to the socket, which on a
      // loaded machine may come after the signal: only the start is ordered before shutdown
      const ready = entries.findIndex((e) => e.msg === 'orch-apiserver is ready');
      assert.ok(ready >= 0 && entries.findIndex((e) => /signal|shutting down/i.test(e.msg)) > ready);
    });
  });
});
