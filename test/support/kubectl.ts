/** The system `kubectl` (1.32) run against a test server with its admin kubeconfig. */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { TestServer } from './server.js';

/** Why kubectl cannot be used here, or undefined when it can. */
export function kubectlMissingReason(): string | undefined {
  const probe = spawnSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8', timeout: 30_000 });
  if (probe.error) return `kubectl is not usable on PATH (${probe.error.message})`;
  if (probe.status !== 0) return `kubectl version --client failed: ${probe.stderr}`;
  try {
    const v = JSON.parse(probe.stdout).clientVersion;
    if (String(v.major) !== '1' || !String(v.minor).startsWith('32')) process.stderr.write(`note: kubectl client is ${v.gitVersion}, these tests target 1.32\n`);
  } catch { /* version output is informational */ }
  return undefined;
}

export interface Run { code: number | null; stdout: string; stderr: string }

export interface Kubectl {
  /** runs kubectl with the admin kubeconfig and a private discovery cache */
  run(args: string[], timeoutMs?: number): Promise<Run>;
  /** runs kubectl and fails the test unless it exits 0; answers its stdout */
  ok(args: string[], timeoutMs?: number): Promise<string>;
}

/** kubectl against `server`, with `work` as HOME and cache directory. */
export function kubectlFor(server: TestServer, work: string): Kubectl {
  const run = (args: string[], timeoutMs = 30_000): Promise<Run> => {
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: work };
    delete env.KUBECONFIG;
    return new Promise((resolve, reject) => {
      const child = spawn('kubectl', ['--kubeconfig', server.kubeconfig, '--cache-dir', join(work, 'cache'), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '', stderr = '';
      child.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
      child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
      const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`kubectl ${args.join(' ')} did not finish in ${timeoutMs} ms\n${stdout}\n${stderr}`)); }, timeoutMs);
      child.once('error', (err) => { clearTimeout(timer); reject(err); });
      child.once('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
    });
  };
  return {
    run,
    async ok(args, timeoutMs) {
      const r = await run(args, timeoutMs);
      assert.equal(r.code, 0, `kubectl ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
      return r.stdout;
    },
  };
}

/** Rows of a table printed by kubectl, split on runs of spaces, without the header. */
export function rows(out: string): string[][] {
  const lines = out.trimEnd().split('\n');
  return lines.slice(1).map((l) => l.trim().split(/\s+/));
}
