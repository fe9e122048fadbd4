/** kubectl runs and kubeconfigs for the identities the authentication suites use. */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Credentials, TestServer } from './server.js';

export interface Run { code: number | null; stdout: string; stderr: string }

/** kubectl 1.32 with a kubeconfig and a private HOME and discovery cache under `work` */
export function kubectl(kubeconfig: string, work: string, args: string[], timeoutMs = 60_000): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: work };
  delete env.KUBECONFIG;
  delete env.KUBERNETES_EXEC_INFO;
  return new Promise((resolve, reject) => {
    const child = spawn('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', join(work, 'cache'), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '', stderr = '';
    child.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`kubectl ${args.join(' ')} did not finish in ${timeoutMs} ms\n${stdout}\n${stderr}`)); }, timeoutMs);
    child.once('error', (err) => { clearTimeout(timer); reject(err); });
    child.once('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

const b64 = (text: string) => Buffer.from(text).toString('base64');

function kubeconfig(server: TestServer, user: Record<string, unknown>): string {
  return JSON.stringify({
    apiVersion: 'v1', kind: 'Config',
    clusters: [{ name: 'orch', cluster: { server: server.url, 'certificate-authority-data': b64(server.admin.ca) } }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'orch', context: { cluster: 'orch', user: 'u' } }],
    'current-context': 'orch',
  });
}

/** a kubeconfig whose user presents a bearer token (and no client certificate) */
export function tokenKubeconfig(server: TestServer, file: string, token: string): string {
  writeFileSync(file, kubeconfig(server, { token }));
  return file;
}

/** a kubeconfig whose user presents a client certificate */
export function certKubeconfig(server: TestServer, file: string, creds: Credentials): string {
  writeFileSync(file, kubeconfig(server, { 'client-certificate-data': b64(creds.cert), 'client-key-data': b64(creds.key) }));
  return file;
}

/** a kubeconfig whose user runs an exec credential plugin */
export function execKubeconfig(server: TestServer, file: string, command: string, args: string[]): string {
  writeFileSync(file, kubeconfig(server, {
    exec: { apiVersion: 'client.authentication.k8s.io/v1', command, args, interactiveMode: 'Never', provideClusterInfo: true },
  }));
  return file;
}
