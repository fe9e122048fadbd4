/** A kubeconfig whose user is the `orch-apiserver credential` exec plugin. */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { jsYaml } from '../codec/libraries.js';

export interface ExecKubeconfig {
  server: string;
  caPem?: string;
  command: string;
  args: string[];
}

export function writeExecKubeconfig(file: string, o: ExecKubeconfig): void {
  const cluster: Record<string, string> = { server: o.server };
  if (o.caPem) cluster['certificate-authority-data'] = Buffer.from(o.caPem, 'utf8').toString('base64');
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'orch', cluster }],
    users: [{
      name: 'orch-exec',
      user: {
        exec: {
          apiVersion: 'client.authentication.k8s.io/v1',
          command: o.command,
          args: o.args,
          interactiveMode: 'IfAvailable',
          provideClusterInfo: true,
        },
      },
    }],
    contexts: [{ name: 'orch', context: { cluster: 'orch', user: 'orch-exec' } }],
    'current-context': 'orch',
    preferences: {},
  };
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, jsYaml().dump(config, { lineWidth: -1 }), { mode: 0o600 });
  renameSync(tmp, file);
}
