/**
 * The Kubernetes Python client (Debian's python3-kubernetes), unchanged, against a real server:
 * typed APIs of several groups, errors, watch, custom resources, the dynamic client over discovery and the client's
 * own leader election (test/e2e/python/client_check.py). Skipped with a reason where the client is
 * not installed, except under CI, which installs it.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { startServer, type TestServer } from '../support/server.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const python = '/usr/bin/python3';
const script = fileURLToPath(new URL('../../../test/e2e/python/client_check.py', import.meta.url));

function missingReason(): string | undefined {
  const probe = spawnSync(python, ['-c', 'import kubernetes'], { encoding: 'utf8', timeout: 30_000 });
  if (probe.error) return `${python} is not usable (${probe.error.message})`;
  return probe.status === 0 ? undefined : `the kubernetes package is not importable: ${probe.stderr.trim()}`;
}

const missing = missingReason();
if (missing) {
  if (process.env.CI) it('the Python client is installed (required under CI)', () => assert.fail(missing));
  else process.stderr.write(`skipping the Python client suite: ${missing}\n`);
}

function runScript(kubeconfig: string): Promise<Record<string, any>> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, [script, kubeconfig], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '', stderr = '';
    child.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`the Python client did not finish in 90 s\n${stdout}\n${stderr}`)); }, 90_000);
    child.once('error', (err) => { clearTimeout(timer); reject(err); });
    child.once('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) { reject(new Error(`python exited ${code}\n${stdout}\n${stderr}`)); return; }
      resolve(JSON.parse(stdout));
    });
  });
}

describe('the Kubernetes Python client', { skip: missing ?? false }, () => {
  let server: TestServer;
  let outcome: Record<string, any>;
  before(async () => {
    server = await startServer();
    outcome = await runScript(server.kubeconfig);
  });
  after(async () => { await server?.dispose(); });

  const ok = (step: string): any => {
    assert.ok(outcome[step] && 'ok' in outcome[step], `${step}: ${JSON.stringify(outcome[step])}`);
    return outcome[step].ok;
  };

  it('reads, writes and patches core objects through its typed API', () => {
    assert.ok(ok('namespaces').includes('default'));
    assert.equal(ok('create namespace'), 'Active');
    assert.deepEqual(ok('create configmap'), { a: '1' });
    assert.deepEqual(ok('patch configmap'), { a: '1', b: '2' });
  });

  it('gets Kubernetes\' error Status as an ApiException', () => {
    assert.equal(outcome['missing configmap'].status, 404);
    assert.equal(outcome['missing configmap'].body.reason, 'NotFound');
    assert.equal(outcome['missing configmap'].body.message, 'configmaps "absent" not found');
  });

  it('writes Events and Leases and reviews access through their groups\' typed APIs', () => {
    assert.equal(ok('core event'), '', 'reportingComponent as Kubernetes writes it unset');
    assert.deepEqual(ok('list events'), ['Started']);
    assert.equal(ok('lease'), 'python');
    assert.equal(ok('access review'), true);
  });

  it('discovers groups and resources, and lists through the dynamic client', () => {
    const groups = ok('api groups');
    for (const g of ['coordination.k8s.io', 'events.k8s.io', 'rbac.authorization.k8s.io', 'apiextensions.k8s.io']) assert.ok(groups.includes(g), g);
    assert.ok(ok('core resources').includes('configmaps'));
    assert.deepEqual(ok('dynamic leases'), ['lock']);
  });

  it('defines a CustomResourceDefinition and writes its objects through CustomObjectsApi', () => {
    // the merge patch keeps what the create set
    assert.deepEqual(ok('custom resources'), [['g1', { size: 1, color: 'red' }]]);
  });

  it('watches, and elects a leader with its ConfigMap lock', () => {
    assert.deepEqual(ok('watch'), [['ADDED', 'settings']]);
    assert.equal(ok('leader election'), 'python-1');
    // the client reads the deleted Namespace as a V1Status, whose string `status` then holds the namespace's
    assert.match(ok('delete namespace'), /'phase': 'Terminating'/);
  });
});
