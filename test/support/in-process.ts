/**
 * A server started inside the test process, for tests that reach into it (the runtime API
 * registry). Requests still go over HTTPS with the admin's client certificate.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { startApiServer, type RunningServer } from '../../src/apiserver.js';
import { parseFlags } from '../../src/config/flags.js';
import { freePort, onFreePorts, type TestServer } from './server.js';

export interface InProcessServer { server: TestServer; running: RunningServer; dispose(): Promise<void> }

export async function startInProcess(args: string[] = []): Promise<InProcessServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'orch-inproc-'));
  // a port free when asked can be taken before the server binds it (another test file, or an
  // outgoing connection's ephemeral port): the server then stops what it started, and we ask again
  const running = await onFreePorts(async () => {
    const parsed = parseFlags(['--data-dir', dataDir, '--secure-port', String(await freePort()), '--bind-address', '127.0.0.1', ...args]);
    if ('help' in parsed) throw new Error('unexpected --help');
    return startApiServer(parsed.config, pino({ level: 'silent' }));
  }, (err) => (err as NodeJS.ErrnoException).code === 'EADDRINUSE');
  const pki = join(dataDir, 'pki');
  const server = {
    url: running.url, port: running.port, dataDir, kubeconfig: running.kubeconfigPath, logs: [],
    admin: { ca: readFileSync(join(pki, 'ca.crt'), 'utf8'), cert: readFileSync(join(pki, 'admin.crt'), 'utf8'), key: readFileSync(join(pki, 'admin.key'), 'utf8') },
  } as unknown as TestServer;
  return {
    server, running,
    async dispose() {
      await running.shutdown();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
