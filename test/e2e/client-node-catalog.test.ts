/**
 * @kubernetes/client-node 1.4 with the kind catalog: ConfigMaps and core/v1 Events through
 * CoreV1Api, the same Events through EventsV1Api (events.k8s.io), and leader election between
 * two candidates over a coordination.k8s.io/v1 Lease, with failover when the holder stops renewing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApiException, CoordinationV1Api, CoreV1Api, EventsV1Api, KubeConfig } from '@kubernetes/client-node';
import { LeaseElector } from '../support/lease-elector.js';
import { request, startServer, type TestServer } from '../support/server.js';

async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('@kubernetes/client-node with the kind catalog', () => {
  const ns = 'cn-catalog';
  let server: TestServer;
  let kc: KubeConfig;
  let core: CoreV1Api;

  before(async () => {
    server = await startServer();
    kc = new KubeConfig();
    kc.loadFromFile(server.kubeconfig);
    core = kc.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: ns } } });
  });
  after(async () => { await server?.dispose(); });

  it('CoreV1Api creates, lists, replaces and protects an immutable ConfigMap', async () => {
    const created = await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'conf' }, data: { mode: 'fast' }, binaryData: { blob: Buffer.from([1, 2, 3]).toString('base64') } } });
    assert.equal(created.metadata?.namespace, ns);
    assert.deepEqual(created.data, { mode: 'fast' });
    const listed = await core.listNamespacedConfigMap({ namespace: ns, fieldSelector: 'metadata.name=conf' });
    assert.deepEqual(listed.items.map((c) => c.metadata?.name), ['conf']);
    const frozen = await core.replaceNamespacedConfigMap({ name: 'conf', namespace: ns, body: { ...created, data: { mode: 'safe' }, immutable: true } });
    assert.equal(frozen.immutable, true);
    try {
      await core.replaceNamespacedConfigMap({ name: 'conf', namespace: ns, body: { ...frozen, data: { mode: 'fast' } } });
      assert.fail('an immutable ConfigMap was changed');
    } catch (err) {
      assert.ok(err instanceof ApiException && err.code === 422, String(err));
      assert.match(String(err.body), /data: Forbidden: field is immutable when `immutable` is set/);
    }
  });

  it('CoreV1Api writes core Events that EventsV1Api reads, and reads events.k8s.io Events in core shape', async () => {
    const sa = await core.readNamespacedServiceAccount({ name: 'default', namespace: ns }).catch(async () => waitFor('the default ServiceAccount', async () => {
      try { return await core.readNamespacedServiceAccount({ name: 'default', namespace: ns }); } catch { return undefined; }
    }));
    const involvedObject = { kind: 'ServiceAccount', namespace: ns, name: 'default', uid: sa.metadata?.uid, apiVersion: 'v1' };
    const now = new Date();
    await core.createNamespacedEvent({
      namespace: ns,
      body: { metadata: { name: 'default.recorded' }, involvedObject, reason: 'Recorded', message: 'by CoreV1Api', type: 'Normal', source: { component: 'client-node' }, firstTimestamp: now, lastTimestamp: now, count: 1 },
    });
    const events = kc.makeApiClient(EventsV1Api);
    const asNew = await events.readNamespacedEvent({ name: 'default.recorded', namespace: ns });
    assert.equal(asNew.apiVersion, 'events.k8s.io/v1');
    assert.equal(asNew.note, 'by CoreV1Api');
    assert.equal(asNew.regarding?.uid, sa.metadata?.uid);
    assert.equal(asNew.deprecatedCount, 1);
    assert.equal(asNew.deprecatedSource?.component, 'client-node');

    await events.createNamespacedEvent({
      namespace: ns,
      body: {
        metadata: { name: 'default.modern' }, eventTime: now, action: 'Observe', reason: 'Observed', note: 'by EventsV1Api', type: 'Warning',
        reportingController: 'example.com/client-node', reportingInstance: 'cn-1', regarding: involvedObject,
      },
    });
    const asCore = await core.readNamespacedEvent({ name: 'default.modern', namespace: ns });
    assert.equal(asCore.apiVersion, 'v1');
    assert.equal(asCore.message, 'by EventsV1Api');
    assert.equal(asCore.reportingComponent, 'example.com/client-node');
    assert.equal(asCore.involvedObject.uid, sa.metadata?.uid);

    // what kubectl describe asks for: the events of one object
    const search = await core.listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.kind=ServiceAccount,involvedObject.name=default,involvedObject.namespace=${ns},involvedObject.uid=${sa.metadata?.uid}` });
    assert.deepEqual(search.items.map((e) => e.metadata.name).sort(), ['default.modern', 'default.recorded']);
    const warnings = await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'type=Warning' });
    assert.deepEqual(warnings.items.map((e) => e.metadata.name), ['default.modern']);
  });

  it('elects exactly one of two candidates over a coordination.k8s.io/v1 Lease, and fails over once the holder stops renewing', async () => {
    const coordination = kc.makeApiClient(CoordinationV1Api);
    const transitions: string[] = [];
    let leaders = 0;
    let overlaps = 0;
    const candidate = (identity: string) => new LeaseElector({
      api: coordination, namespace: ns, name: 'controller', identity,
      leaseDurationSeconds: 2, renewDeadlineMs: 1500, retryPeriodMs: 100,
      onStartedLeading: () => { if (++leaders > 1) overlaps++; transitions.push(`${identity} leads`); },
      onStoppedLeading: () => { leaders--; transitions.push(`${identity} stops`); },
    });
    const candidates = [candidate('candidate-a'), candidate('candidate-b')];
    try {
      const first = await waitFor('a leader', () => candidates.find((c) => c.leading));
      const firstId = transitions[0].split(' ')[0];
      // the leader renews: the lease's renewTime moves on while the other candidate keeps waiting
      const renewals = new Set<string>();
      await waitFor('five renewals', async () => {
        const lease = await coordination.readNamespacedLease({ name: 'controller', namespace: ns });
        assert.equal(lease.spec?.holderIdentity, firstId);
        renewals.add(String(lease.spec?.renewTime));
        return renewals.size >= 5 ? true : undefined;
      });
      assert.deepEqual(transitions, [`${firstId} leads`]);
      assert.equal(candidates.filter((c) => c.leading).length, 1);
      const held = await coordination.readNamespacedLease({ name: 'controller', namespace: ns });
      assert.equal(held.apiVersion, 'coordination.k8s.io/v1');
      assert.equal(held.spec?.leaseTransitions, 0);
      assert.equal(held.spec?.leaseDurationSeconds, 2);

      // the holder stops renewing without releasing the lease, as a crashed process would
      await first.stop();
      const second = candidates.find((c) => c !== first) as LeaseElector;
      await waitFor('the other candidate to take over', () => (second.leading ? true : undefined));
      const secondId = firstId === 'candidate-a' ? 'candidate-b' : 'candidate-a';
      assert.deepEqual(transitions, [`${firstId} leads`, `${firstId} stops`, `${secondId} leads`]);
      assert.equal(overlaps, 0, 'two candidates never led at once');
      const taken = await coordination.readNamespacedLease({ name: 'controller', namespace: ns });
      assert.equal(taken.spec?.holderIdentity, secondId);
      assert.equal(taken.spec?.leaseTransitions, 1);
      // the same Lease under the spec's group name
      const ours = await request(server, `/apis/coordination.orch.io/v1/namespaces/${ns}/leases/controller`);
      assert.equal(ours.json.spec.holderIdentity, secondId);
    } finally {
      await Promise.all(candidates.map((c) => c.stop()));
    }
  });
});
