/**
 * kubectl 1.32 with the kind catalog: typed ConfigMap creation (a Protobuf body) and its columns,
 * `kubectl events` and `kubectl describe` finding core/v1 Events whichever API wrote them, and
 * Leases under coordination.k8s.io. Skipped with a reason without kubectl, except under CI.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createNamespace, createSA, expectStatus, type Obj } from '../support/api.js';
import { kubectlFor, kubectlMissingReason, rows, type Kubectl } from '../support/kubectl.js';
import { request, startServer, type TestServer } from '../support/server.js';

const missing = kubectlMissingReason();
if (missing) {
  if (process.env.CI) it('kubectl is installed (required under CI)', () => assert.fail(missing));
  else process.stderr.write(`skipping the kubectl catalog suite: ${missing}\n`);
}

const ns = 'kt-catalog';
const secondsAgo = (s: number) => new Date(Date.now() - s * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
const microSecondsAgo = (s: number) => new Date(Date.now() - s * 1000).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

describe('kubectl 1.32 with ConfigMaps, core Events and Leases', { skip: missing ?? false }, () => {
  let server: TestServer;
  let work: string;
  let kubectl: Kubectl;
  let saUid: string;

  before(async () => {
    server = await startServer();
    work = mkdtempSync(join(tmpdir(), 'orch-kubectl-catalog-'));
    kubectl = kubectlFor(server, work);
    await createNamespace(server, ns);
    saUid = (await createSA(server, ns, 'builder')).metadata.uid;
  });
  after(async () => {
    await server?.dispose();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('kubectl create configmap --from-literal, get cm (NAME DATA AGE), delete', async () => {
    assert.equal((await kubectl.ok(['create', 'configmap', 'settings', '--from-literal=a=b', '--from-literal=c=d', '-n', ns])).trim(), 'configmap/settings created');
    const stored = await request(server, `/api/v1/namespaces/${ns}/configmaps/settings`);
    assert.deepEqual(stored.json.data, { a: 'b', c: 'd' });
    assert.equal(stored.json.metadata.managedFields[0].manager, 'kubectl-create');
    const out = await kubectl.ok(['get', 'cm', '-n', ns]);
    assert.match(out.split('\n')[0], /^NAME\s+DATA\s+AGE\s*$/);
    const byName = new Map(rows(out).map((r) => [r[0], r[1]]));
    assert.equal(byName.get('settings'), '2');
    assert.equal(await kubectl.ok(['get', 'configmap', 'settings', '-n', ns, '-o', 'jsonpath={.data.a}']), 'b');
    const again = await kubectl.run(['create', 'configmap', 'settings', '--from-literal=a=b', '-n', ns]);
    assert.match(again.stderr, /failed to create configmap: configmaps "settings" already exists/);
    const bad = await kubectl.run(['create', 'configmap', 'bad', '--from-literal=a b=c', '-n', ns]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /a valid config key must consist of alphanumeric characters/);
    assert.equal((await kubectl.ok(['delete', 'cm', 'settings', '-n', ns])).trim(), 'configmap "settings" deleted');
  });

  describe('events written through core/v1 and events.orch.io/v1', () => {
    before(async () => {
      const involvedObject = { kind: 'ServiceAccount', namespace: ns, name: 'builder', uid: saUid, apiVersion: 'v1' };
      expectStatus(await request(server, `/api/v1/namespaces/${ns}/events`, {
        method: 'POST',
        body: {
          metadata: { name: 'builder.core' }, involvedObject, reason: 'CoreReason', message: 'written through core', type: 'Normal',
          source: { component: 'core-recorder' }, firstTimestamp: secondsAgo(90), lastTimestamp: secondsAgo(30), count: 3,
        },
      }), 201, 'core event');
      expectStatus(await request(server, `/apis/events.orch.io/v1/namespaces/${ns}/events`, {
        method: 'POST',
        body: {
          apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: { name: 'builder.group' }, regarding: involvedObject,
          eventTime: microSecondsAgo(20), action: 'Check', reason: 'GroupReason', note: 'written through events.orch.io',
          reportingController: 'example.com/checker', reportingInstance: 'checker-1', type: 'Warning',
        },
      }), 201, 'events.orch.io event');
    });

    it('kubectl events -n lists both, as core/v1 Events', async () => {
      const out = await kubectl.ok(['events', '-n', ns]);
      const [header, ...lines] = out.trimEnd().split('\n');
      assert.match(header, /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE\s*$/);
      const core = lines.find((l) => l.includes('CoreReason'));
      const group = lines.find((l) => l.includes('GroupReason'));
      assert.ok(core && group, out);
      assert.match(core, /\(x3 over \d+s\)\s+Normal\s+CoreReason\s+ServiceAccount\/builder\s+written through core$/);
      assert.match(group, /^\d+s\s+Warning\s+GroupReason\s+ServiceAccount\/builder\s+written through events\.orch\.io$/);
      const warnings = await kubectl.ok(['events', '-n', ns, '--types=Warning']);
      assert.ok(!warnings.includes('CoreReason') && warnings.includes('GroupReason'), warnings);
      const forSa = await kubectl.ok(['events', '-n', ns, '--for', 'serviceaccount/builder']);
      assert.ok(forSa.includes('CoreReason') && forSa.includes('GroupReason'), forSa);
    });

    it('kubectl describe sa shows the ServiceAccount\'s events from both APIs', async () => {
      const out = await kubectl.ok(['describe', 'sa', 'builder', '-n', ns]);
      const events = out.slice(out.indexOf('Events:'));
      assert.match(events, /Type\s+Reason\s+Age\s+From\s+Message/);
      assert.match(events, /Normal\s+CoreReason\s+\S+ \(x3 over \S+\)\s+core-recorder\s+written through core/);
      // describe's From is the source, else the reporting controller (without the instance)
      assert.match(events, /Warning\s+GroupReason\s+\d+s\s+example\.com\/checker\s+written through events\.orch\.io/);
    });

    it('kubectl get events prints the server\'s columns; get -o yaml reads the events.orch.io one in core/v1 shape', async () => {
      const out = await kubectl.ok(['get', 'events', '-n', ns]);
      assert.match(out.split('\n')[0], /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE\s*$/);
      assert.ok(out.includes('serviceaccount/builder'), out);
      const group = JSON.parse(await kubectl.ok(['get', 'event', 'builder.group', '-n', ns, '-o', 'json'])) as Obj;
      assert.equal(group.apiVersion, 'v1');
      assert.equal(group.message, 'written through events.orch.io');
      assert.equal(group.involvedObject.uid, saUid);
      const core = JSON.parse(await kubectl.ok(['get', 'events.v1.events.orch.io', 'builder.core', '-n', ns, '-o', 'json'])) as Obj;
      assert.equal(core.note, 'written through core');
      assert.equal(core.deprecatedCount, 3);
    });
  });

  it('kubectl create -f a coordination.k8s.io Lease, get leases (NAME HOLDER AGE)', async () => {
    writeFileSync(join(work, 'lease.yaml'), `apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: leader\n  namespace: ${ns}\nspec:\n  holderIdentity: node-a\n  leaseDurationSeconds: 15\n`);
    assert.equal((await kubectl.ok(['create', '-f', join(work, 'lease.yaml')])).trim(), 'lease.coordination.k8s.io/leader created');
    const out = await kubectl.ok(['get', 'leases', '-n', ns]);
    assert.match(out.split('\n')[0], /^NAME\s+HOLDER\s+AGE\s*$/);
    assert.deepEqual(rows(out).map((r) => r.slice(0, 2)), [['leader', 'node-a']]);
    const lease = JSON.parse(await kubectl.ok(['get', 'leases.v1.coordination.orch.io', 'leader', '-n', ns, '-o', 'json'])) as Obj;
    assert.equal(lease.apiVersion, 'coordination.orch.io/v1');
    assert.equal(lease.spec.leaseDurationSeconds, 15);
  });
});
