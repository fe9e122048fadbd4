/**
 * The system `kubectl` (1.32) against a real server, with the admin kubeconfig the server writes.
 * Without kubectl on PATH the suite is skipped with a reason, except under CI, where it fails.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { load as loadYaml } from 'js-yaml';
import { kubectlFor, kubectlMissingReason, rows } from '../support/kubectl.js';
import { sleep } from '../support/api.js';
import { request, startServer, type TestServer } from '../support/server.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const missing = kubectlMissingReason();
if (missing) {
  if (process.env.CI) {
    it('kubectl is installed (required under CI)', () => assert.fail(missing));
  } else {
    process.stderr.write(`skipping the kubectl suite: ${missing}\n`);
  }
}

describe('kubectl 1.32', { skip: missing ?? false }, () => {
  let server: TestServer;
  let work: string;

  before(async () => {
    // -v=3: request lines, which show how kubectl pages
    server = await startServer({ args: ['-v=3'] });
    work = mkdtempSync(join(tmpdir(), 'orch-kubectl-'));
  });
  after(async () => {
    await server?.dispose();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const kubectl = (args: string[], timeoutMs?: number) => kubectlFor(server, work).run(args, timeoutMs);
  const ok = (args: string[], timeoutMs?: number) => kubectlFor(server, work).ok(args, timeoutMs);

  async function createNamespace(name: string): Promise<void> {
    const res = await request(server, '/api/v1/namespaces', { method: 'POST', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
    assert.equal(res.status, 201, res.body);
  }

  async function waitForDefaultServiceAccount(ns: string): Promise<void> {
    const deadline = Date.now() + 15_000;
    while ((await request(server, `/api/v1/namespaces/${ns}/serviceaccounts/default`)).status !== 200) {
      if (Date.now() > deadline) assert.fail(`no default ServiceAccount in ${ns}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('kubectl version talks to the server', async () => {
    const v = JSON.parse(await ok(['version', '-o', 'json']));
    assert.equal(v.serverVersion.major, '1');
    assert.equal(v.serverVersion.minor, '32');
    assert.match(v.serverVersion.gitVersion, /^v1\.32\./);
  });

  it('kubectl api-resources shows the kinds with short names', async () => {
    const out = await ok(['api-resources', '--no-headers']);
    const listed = rows(`header\n${out}`).map((r) => r.join(' '));
    for (const row of [
      'namespaces ns v1 false Namespace', 'serviceaccounts sa v1 true ServiceAccount', 'secrets v1 true Secret',
      'configmaps cm v1 true ConfigMap', 'events ev v1 true Event', 'events events.orch.io/v1 true Event',
      'events ev events.k8s.io/v1 true Event', 'leases coordination.orch.io/v1 true Lease', 'leases coordination.k8s.io/v1 true Lease',
    ]) assert.ok(listed.includes(row), `${row} missing from:\n${out}`);
  });

  it('kubectl get ns lists the bootstrap namespaces', async () => {
    const out = await ok(['get', 'ns']);
    assert.match(out.split('\n')[0]!, /^NAME\s/);
    const names = rows(out).map((r) => r[0]);
    for (const ns of ['default', 'orch-node-lease', 'orch-public', 'orch-system']) assert.ok(names.includes(ns), `${ns} missing from:\n${out}`);
    const list = JSON.parse(await ok(['get', 'namespaces', '-o', 'json']));
    const jsonNames = list.items.map((n: any) => n.metadata.name);
    for (const ns of ['default', 'orch-node-lease', 'orch-public', 'orch-system']) assert.ok(jsonNames.includes(ns));
    for (const n of list.items) assert.equal(n.status.phase, 'Active');
  });

  describe('typed create commands (protobuf request bodies)', () => {
    it('kubectl create namespace', async () => {
      const out = await ok(['create', 'namespace', 'kt-typed-ns']);
      assert.equal(out.trim(), 'namespace/kt-typed-ns created');
      const res = await request(server, '/api/v1/namespaces/kt-typed-ns');
      assert.equal(res.status, 200);
      assert.equal(res.json.status.phase, 'Active');
      const again = await kubectl(['create', 'namespace', 'kt-typed-ns']);
      assert.equal(again.code, 1);
      assert.match(again.stderr, /Error from server \(AlreadyExists\): namespaces "kt-typed-ns" already exists/);
    });

    it('kubectl create serviceaccount -n', async () => {
      await createNamespace('kt-typed-sa');
      const out = await ok(['create', 'serviceaccount', 'builder', '-n', 'kt-typed-sa']);
      assert.equal(out.trim(), 'serviceaccount/builder created');
      const res = await request(server, '/api/v1/namespaces/kt-typed-sa/serviceaccounts/builder');
      assert.equal(res.status, 200);
      assert.equal(res.json.kind, 'ServiceAccount');
      assert.equal(res.json.metadata.namespace, 'kt-typed-sa');
      assert.ok(res.json.metadata.uid);
      const again = await kubectl(['create', 'serviceaccount', 'builder', '-n', 'kt-typed-sa']);
      assert.equal(again.code, 1);
      assert.match(again.stderr, /serviceaccounts "builder" already exists/);
    });

    it('kubectl create secret generic --from-literal', async () => {
      await createNamespace('kt-typed-secret');
      const out = await ok(['create', 'secret', 'generic', 's', '--from-literal=k=v', '-n', 'kt-typed-secret']);
      assert.equal(out.trim(), 'secret/s created');
      assert.equal(await ok(['get', 'secret', 's', '-n', 'kt-typed-secret', '-o', 'jsonpath={.data.k}']), Buffer.from('v').toString('base64'));
      const res = await request(server, '/api/v1/namespaces/kt-typed-secret/secrets/s');
      assert.equal(res.json.type, 'Opaque');
    });
  });

  describe('typed Secrets in Kubernetes\' type names, as kubectl writes them', () => {
    it('kubectl create secret docker-registry and tls are validated as the spec\'s types', async () => {
      await createNamespace('kt-secret-types');
      const n = ['-n', 'kt-secret-types'];
      assert.equal((await ok(['create', 'secret', 'docker-registry', 'pull', '--docker-server=r.example.com', '--docker-username=u', '--docker-password=p', ...n])).trim(), 'secret/pull created');
      assert.equal(await ok(['get', 'secret', 'pull', ...n, '-o', 'jsonpath={.type}']), 'kubernetes.io/dockerconfigjson');
      writeFileSync(join(work, 'tls.key'), server.admin.key);
      writeFileSync(join(work, 'tls.crt'), server.admin.cert);
      assert.equal((await ok(['create', 'secret', 'tls', 'cert', `--cert=${join(work, 'tls.crt')}`, `--key=${join(work, 'tls.key')}`, ...n])).trim(), 'secret/cert created');

      const invalid = async (name: string, type: string, data: Record<string, string>) => {
        writeFileSync(join(work, `${name}.json`), JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'kt-secret-types' }, type, data }));
        const r = await kubectl(['create', '-f', join(work, `${name}.json`)]);
        assert.equal(r.code, 1, r.stdout);
        return r.stderr.trim();
      };
      assert.equal(await invalid('not-json', 'kubernetes.io/dockerconfigjson', { '.dockerconfigjson': Buffer.from('not json').toString('base64') }),
        'The Secret "not-json" is invalid: data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": invalid character \'o\' in literal null (expecting \'u\')');
      assert.equal(await invalid('no-key', 'kubernetes.io/tls', { 'tls.crt': '' }), 'The Secret "no-key" is invalid: data[tls.key]: Required value');
    });
  });

  describe('create -f (JSON request bodies), get, delete', () => {
    let robotUid: string;

    before(async () => {
      writeFileSync(join(work, 'objects.yaml'), [
        'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kt-json\n',
        'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: robot\n  namespace: kt-json\n  labels:\n    app: robot\nautomountServiceAccountToken: false\nimagePullSecrets:\n- name: pull\n',
        'apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: kt-json\nstringData:\n  k: v\n',
        'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: helper\n  namespace: kt-json\n',
      ].join('---\n'));
    });

    it('kubectl create -f creates a namespace, serviceaccounts and a secret', async () => {
      const out = await ok(['create', '-f', join(work, 'objects.yaml'), '--validate=false']);
      assert.deepEqual(out.trim().split('\n'), ['namespace/kt-json created', 'serviceaccount/robot created', 'secret/s created', 'serviceaccount/helper created']);
      const sa = await request(server, '/api/v1/namespaces/kt-json/serviceaccounts/robot');
      assert.equal(sa.status, 200);
      robotUid = sa.json.metadata.uid;
      assert.equal(sa.json.metadata.managedFields[0].manager, 'kubectl-create');
      assert.equal(sa.json.metadata.managedFields[0].operation, 'Update');

      const again = await kubectl(['create', '-f', join(work, 'objects.yaml'), '--validate=false']);
      assert.equal(again.code, 1);
      assert.match(again.stderr, /Error from server \(AlreadyExists\): error when creating ".*objects\.yaml": serviceaccounts "robot" already exists/);
    });

    it('kubectl get sa -o yaml', async () => {
      const sa = loadYaml(await ok(['get', 'sa', 'robot', '-n', 'kt-json', '-o', 'yaml'])) as any;
      assert.equal(sa.apiVersion, 'v1');
      assert.equal(sa.kind, 'ServiceAccount');
      assert.equal(sa.metadata.name, 'robot');
      assert.equal(sa.metadata.namespace, 'kt-json');
      assert.equal(sa.metadata.uid, robotUid);
      assert.deepEqual(sa.metadata.labels, { app: 'robot' });
      assert.equal(sa.automountServiceAccountToken, false);
      assert.deepEqual(sa.imagePullSecrets, [{ name: 'pull' }]);
      assert.match(sa.metadata.resourceVersion, /^[1-9][0-9]*$/);
      assert.match(sa.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

      await waitForDefaultServiceAccount('kt-json');
      const list = loadYaml(await ok(['get', 'sa', '-n', 'kt-json', '-o', 'yaml'])) as any;
      assert.deepEqual(list.items.map((i: any) => i.metadata.name), ['default', 'helper', 'robot']);
    });

    it('kubectl get sa -o json', async () => {
      const sa = JSON.parse(await ok(['get', 'serviceaccount', 'robot', '-n', 'kt-json', '-o', 'json']));
      assert.equal(sa.kind, 'ServiceAccount');
      assert.equal(sa.metadata.uid, robotUid);
      assert.deepEqual(sa.metadata.labels, { app: 'robot' });
      const list = JSON.parse(await ok(['get', 'sa', '-n', 'kt-json', '-l', 'app=robot', '-o', 'json']));
      assert.deepEqual(list.items.map((i: any) => i.metadata.name), ['robot']);
      assert.equal(await ok(['get', 'sa', 'robot', '-n', 'kt-json', '-o', 'jsonpath={.metadata.uid}']), robotUid);
    });

    it('kubectl get secret -o jsonpath={.data.k} is the base64 of the literal', async () => {
      assert.equal(await ok(['get', 'secret', 's', '-n', 'kt-json', '-o', 'jsonpath={.data.k}']), Buffer.from('v').toString('base64'));
      const secret = JSON.parse(await ok(['get', 'secret', 's', '-n', 'kt-json', '-o', 'json']));
      assert.equal(secret.type, 'Opaque');
      assert.equal(secret.stringData, undefined);
    });

    it('kubectl get sa -A shows namespace and name', async () => {
      const out = await ok(['get', 'sa', '-A']);
      assert.match(out.split('\n')[0]!, /^NAMESPACE\s+NAME\s/);
      const pairs = rows(out).map((r) => `${r[0]}/${r[1]}`);
      for (const p of ['kt-json/robot', 'kt-json/helper', 'default/default', 'orch-system/default']) assert.ok(pairs.includes(p), `${p} missing from:\n${out}`);
    });

    it('kubectl get sa -A --chunk-size=2 and =7 page through everything', async () => {
      const all = await request(server, '/api/v1/serviceaccounts');
      assert.equal(all.status, 200);
      const expected = all.json.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`);
      assert.ok(expected.length >= 8, `expected several service accounts, got ${expected.length}`);
      const before = server.logs.length;
      const out = await ok(['get', 'sa', '-A', '--chunk-size=2']);
      assert.deepEqual(rows(out).map((r) => `${r[0]}/${r[1]}`), expected);
      // the server writes its log asynchronously: wait (a while, on a busy machine) for the lines
      const pagesNeeded = Math.ceil(expected.length / 2);
      const lists = () => server.logs.slice(before).filter((l) => l.includes('/api/v1/serviceaccounts?'));
      const byTwo = () => lists().filter((l) => /[?&]limit=2\b/.test(l));
      const deadline = Date.now() + 10_000;
      while (byTwo().length < pagesNeeded && Date.now() < deadline) await sleep(50);
      assert.ok(byTwo().length >= pagesNeeded, `kubectl paged with limit=2:\n${lists().join('\n')}`);
      assert.ok(lists().some((l) => /[?&]continue=/.test(l)), 'later chunks carry a continue token');

      const json = JSON.parse(await ok(['get', 'sa', '-A', '--chunk-size=7', '-o', 'json']));
      assert.deepEqual(json.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`), expected);
    });

    it('kubectl get of a missing object is NotFound', async () => {
      const r = await kubectl(['get', 'sa', 'nope', '-n', 'kt-json']);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /Error from server \(NotFound\): serviceaccounts "nope" not found/);
      const ns = await kubectl(['get', 'sa', '-n', 'kt-no-such-namespace']);
      assert.equal(ns.code, 0);
      assert.match(ns.stderr, /No resources found in kt-no-such-namespace namespace\./);
    });

    it('kubectl delete sa', async () => {
      const out = await ok(['delete', 'sa', 'robot', '-n', 'kt-json']);
      assert.equal(out.trim(), 'serviceaccount "robot" deleted');
      assert.equal((await request(server, '/api/v1/namespaces/kt-json/serviceaccounts/robot')).status, 404);
      const r = await kubectl(['get', 'sa', 'robot', '-n', 'kt-json']);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /Error from server \(NotFound\): serviceaccounts "robot" not found/);
      const gone = await kubectl(['delete', 'sa', 'robot', '-n', 'kt-json']);
      assert.equal(gone.code, 1);
      assert.match(gone.stderr, /Error from server \(NotFound\): serviceaccounts "robot" not found/);
    });

    it('kubectl delete ns waits until the namespace and its contents are gone', async () => {
      const out = await ok(['delete', 'ns', 'kt-json', '--timeout=60s'], 60_000);
      assert.equal(out.trim(), 'namespace "kt-json" deleted');
      // kubectl returns only once the namespace is gone
      assert.equal((await request(server, '/api/v1/namespaces/kt-json')).status, 404);
      assert.equal((await request(server, '/api/v1/namespaces/kt-json/serviceaccounts/helper')).status, 404);
      assert.equal((await request(server, '/api/v1/namespaces/kt-json/secrets/s')).status, 404);
      const r = await kubectl(['get', 'ns', 'kt-json']);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /Error from server \(NotFound\): namespaces "kt-json" not found/);
      const names = rows(await ok(['get', 'ns'])).map((row) => row[0]);
      assert.ok(!names.includes('kt-json'));
      assert.ok(names.includes('default'));
    });
  });

  it('kubectl apply -f and delete -f of a manifest that lists its namespace first', async () => {
    const manifest = join(work, 'with-namespace.yaml');
    writeFileSync(manifest, [
      'apiVersion: v1\nkind: Namespace\nmetadata: {name: kt-manifest}',
      'apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: app, namespace: kt-manifest}',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: kt-manifest}\ndata: {a: "1"}',
    ].join('\n---\n'));
    assert.deepEqual((await ok(['apply', '-f', manifest])).trim().split('\n'),
      ['namespace/kt-manifest created', 'serviceaccount/app created', 'configmap/settings created']);
    // the namespace controller waits before emptying a terminating namespace, as Kubernetes' does,
    // so the objects listed after it are still there to delete
    const deleted = await kubectl(['delete', '-f', manifest, '--timeout=60s'], 70_000);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.deepEqual(deleted.stdout.trim().split('\n'),
      ['namespace "kt-manifest" deleted', 'serviceaccount "app" deleted', 'configmap "settings" deleted']);
    const gone = await kubectl(['wait', '--for=delete', 'namespace/kt-manifest', '--timeout=60s'], 70_000);
    assert.equal(gone.code, 0, gone.stderr);
  });

  describe('events.orch.io Events', () => {
    it('kubectl create -f and get ev', async () => {
      await createNamespace('kt-events');
      const eventTime = new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
      writeFileSync(join(work, 'event.json'), JSON.stringify({
        apiVersion: 'events.orch.io/v1', kind: 'Event',
        metadata: { name: 'kt-ev', namespace: 'kt-events' },
        eventTime, action: 'Testing', reason: 'ByKubectl', note: 'hello',
        reportingController: 'example.com/kubectl-test', reportingInstance: 'kt-1', type: 'Normal',
        regarding: { apiVersion: 'v1', kind: 'Namespace', name: 'kt-events', namespace: 'kt-events' },
      }));
      const out = await ok(['create', '-f', join(work, 'event.json'), '--validate=false']);
      assert.equal(out.trim(), 'event.events.orch.io/kt-ev created');
      const ev = JSON.parse(await ok(['get', 'events.v1.events.orch.io', 'kt-ev', '-n', 'kt-events', '-o', 'json']));
      assert.equal(ev.apiVersion, 'events.orch.io/v1');
      assert.equal(ev.kind, 'Event');
      assert.equal(ev.reason, 'ByKubectl');
      assert.equal(ev.eventTime, eventTime);
      // `ev` names the core/v1 Events, as in Kubernetes: the same Event, converted
      const core = JSON.parse(await ok(['get', 'ev', 'kt-ev', '-n', 'kt-events', '-o', 'json']));
      assert.equal(core.apiVersion, 'v1');
      assert.equal(core.message, 'hello');
      assert.equal(core.involvedObject.name, 'kt-events');
      assert.equal(core.reportingComponent, 'example.com/kubectl-test');
      const list = JSON.parse(await ok(['get', 'events.v1.events.orch.io', '-A', '-o', 'json']));
      assert.ok(list.items.some((i: any) => i.metadata.namespace === 'kt-events' && i.metadata.name === 'kt-ev'));
      assert.equal((await ok(['delete', 'events.v1.events.orch.io', 'kt-ev', '-n', 'kt-events'])).trim(), 'event.events.orch.io "kt-ev" deleted');
      const r = await kubectl(['get', 'events.v1.events.orch.io', 'kt-ev', '-n', 'kt-events']);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /Error from server \(NotFound\): events\.events\.orch\.io "kt-ev" not found/);
      const viaCore = await kubectl(['get', 'ev', 'kt-ev', '-n', 'kt-events']);
      assert.match(viaCore.stderr, /Error from server \(NotFound\): events "kt-ev" not found/);
    });
  });
});
