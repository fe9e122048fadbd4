/**
 * The official JavaScript client (`@kubernetes/client-node` 1.4, the newest line that runs on Node 20) against a real server: CoreV1Api for
 * namespaces, serviceaccounts and secrets; KubernetesObjectApi and CustomObjectsApi for
 * `events.orch.io/v1` Events; errors as ApiException; chunked lists with limit/continue.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubernetesObject, V1Secret, V1ServiceAccount, V1Status } from '@kubernetes/client-node';
import { startServer, type TestServer } from '../support/server.js';

import { ApiException, CoreV1Api, CustomObjectsApi, KubeConfig, KubernetesObjectApi } from '@kubernetes/client-node';

/* eslint-disable @typescript-eslint/no-explicit-any */

interface StatusBody {
  kind: string; apiVersion: string; status: string; reason: string; code: number; message: string;
  details?: { name?: string; group?: string; kind?: string; causes?: { field?: string; reason?: string; message?: string }[] };
}

/** Awaits a call that must fail with an ApiException of the given code (and Status reason). */
async function rejects(call: Promise<unknown>, code: number, reason?: string): Promise<StatusBody> {
  let result: unknown;
  try {
    result = await call;
  } catch (err) {
    assert.ok(err instanceof ApiException, `expected an ApiException, got ${String(err)}`);
    const e = err as InstanceType<typeof ApiException<unknown>>;
    assert.equal(e.code, code, `expected HTTP ${code}, got ${e.code}: ${String(e.body)}`);
    const body = (typeof e.body === 'string' ? JSON.parse(e.body) : e.body) as StatusBody;
    assert.equal(body.kind, 'Status');
    assert.equal(body.apiVersion, 'v1');
    assert.equal(body.status, 'Failure');
    assert.equal(body.code, code);
    if (reason !== undefined) assert.equal(body.reason, reason);
    return body;
  }
  assert.fail(`expected HTTP ${code}, but the call succeeded: ${JSON.stringify(result)}`);
}

/** eventTime with microsecond precision, as metav1.MicroTime serializes it */
function microNow(): string {
  return new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('@kubernetes/client-node', () => {
  let server: TestServer;
  let core: CoreV1Api;
  let objects: KubernetesObjectApi;
  let custom: CustomObjectsApi;

  before(async () => {
    server = await startServer();
    const kc = new KubeConfig();
    kc.loadFromFile(server.kubeconfig);
    core = kc.makeApiClient(CoreV1Api);
    objects = KubernetesObjectApi.makeApiClient(kc);
    custom = kc.makeApiClient(CustomObjectsApi);
  });
  after(async () => { await server?.dispose(); });

  async function ensureNamespace(name: string): Promise<void> {
    await core.createNamespace({ body: { metadata: { name } } });
  }

  describe('CoreV1Api namespaces', () => {
    it('lists the bootstrap namespaces', async () => {
      const list = await core.listNamespace();
      const names = list.items.map((n) => n.metadata?.name);
      for (const ns of ['default', 'orch-node-lease', 'orch-public', 'orch-system']) assert.ok(names.includes(ns), `${ns} missing from ${names.join(',')}`);
      assert.ok(list.metadata?.resourceVersion, 'list resourceVersion');
      for (const n of list.items) assert.equal(n.status?.phase, 'Active');
    });

    it('creates, reads, lists by label, replaces and deletes a namespace', async () => {
      const created = await core.createNamespace({ body: { metadata: { name: 'cn-ns-crud', labels: { team: 'blue', tier: 'one' } } } });
      assert.equal(created.metadata?.name, 'cn-ns-crud');
      assert.match(created.metadata?.uid ?? '', /^[0-9a-f-]{36}$/);
      assert.ok(created.metadata?.creationTimestamp instanceof Date);
      assert.ok(Number(created.metadata?.resourceVersion) > 0);
      assert.equal(created.status?.phase, 'Active');
      assert.ok(created.spec?.finalizers?.includes('orch'), `spec.finalizers: ${JSON.stringify(created.spec?.finalizers)}`);
      // the namespace-name label Kubernetes adds to every namespace (kubernetes.io/metadata.name)
      assert.equal(created.metadata?.labels?.['orch.io/metadata.name'], 'cn-ns-crud');
      assert.equal(created.metadata?.labels?.team, 'blue');

      const read = await core.readNamespace({ name: 'cn-ns-crud' });
      assert.equal(read.metadata?.uid, created.metadata?.uid);
      assert.equal(read.metadata?.resourceVersion, created.metadata?.resourceVersion);

      await core.createNamespace({ body: { metadata: { name: 'cn-ns-other', labels: { team: 'red' } } } });
      const blue = await core.listNamespace({ labelSelector: 'team=blue' });
      assert.deepEqual(blue.items.map((n) => n.metadata?.name), ['cn-ns-crud']);
      const teams = await core.listNamespace({ labelSelector: 'team in (blue,red)' });
      assert.deepEqual(teams.items.map((n) => n.metadata?.name), ['cn-ns-crud', 'cn-ns-other']);
      const notBlue = await core.listNamespace({ labelSelector: 'team,team!=blue' });
      assert.deepEqual(notBlue.items.map((n) => n.metadata?.name), ['cn-ns-other']);

      read.metadata!.labels = { ...read.metadata!.labels, team: 'green' };
      const replaced = await core.replaceNamespace({ name: 'cn-ns-crud', body: read });
      assert.equal(replaced.metadata?.labels?.team, 'green');
      assert.equal(replaced.metadata?.uid, created.metadata?.uid);
      assert.ok(Number(replaced.metadata?.resourceVersion) > Number(created.metadata?.resourceVersion));
      assert.equal((await core.listNamespace({ labelSelector: 'team=blue' })).items.length, 0);

      await core.deleteNamespace({ name: 'cn-ns-crud' });
      await waitFor('namespace cn-ns-crud to be removed', async () => {
        try {
          const ns = await core.readNamespace({ name: 'cn-ns-crud' });
          assert.equal(ns.status?.phase, 'Terminating');
          assert.ok(ns.metadata?.deletionTimestamp, 'a terminating namespace has a deletionTimestamp');
          return undefined;
        } catch (err) {
          if (err instanceof ApiException && err.code === 404) return true;
          throw err;
        }
      });
      await rejects(core.readNamespace({ name: 'cn-ns-crud' }), 404, 'NotFound');
    });

    it('answers 409 AlreadyExists, 404 NotFound and 422 Invalid', async () => {
      const dup = await rejects(core.createNamespace({ body: { metadata: { name: 'default' } } }), 409, 'AlreadyExists');
      assert.equal(dup.details?.name, 'default');
      assert.equal(dup.details?.kind, 'namespaces');
      assert.equal(dup.message, 'namespaces "default" already exists');

      const missing = await rejects(core.readNamespace({ name: 'cn-no-such-ns' }), 404, 'NotFound');
      assert.equal(missing.message, 'namespaces "cn-no-such-ns" not found');
      assert.equal(missing.details?.name, 'cn-no-such-ns');
      await rejects(core.deleteNamespace({ name: 'cn-no-such-ns' }), 404, 'NotFound');

      const invalid = await rejects(core.createNamespace({ body: { metadata: { name: 'Not_A_Label' } } }), 422, 'Invalid');
      assert.equal(invalid.details?.name, 'Not_A_Label');
      assert.equal(invalid.details?.kind, 'Namespace');
      assert.ok(invalid.details?.causes?.some((c) => c.field === 'metadata.name' && c.reason === 'FieldValueInvalid'), JSON.stringify(invalid.details?.causes));
    });
  });

  describe('CoreV1Api serviceaccounts', () => {
    before(async () => {
      await ensureNamespace('cn-sa');
      await ensureNamespace('cn-sa-2');
    });

    it('creates and reads a ServiceAccount with every field', async () => {
      const body: V1ServiceAccount = {
        metadata: { name: 'builder', labels: { app: 'ci', role: 'build' }, annotations: { 'orch.io/enforce-mountable-secrets': 'true' } },
        automountServiceAccountToken: false,
        secrets: [{ name: 'builder-token' }],
        imagePullSecrets: [{ name: 'registry' }],
      };
      const created = await core.createNamespacedServiceAccount({ namespace: 'cn-sa', body });
      assert.equal(created.kind, 'ServiceAccount');
      assert.equal(created.apiVersion, 'v1');
      assert.equal(created.metadata?.namespace, 'cn-sa');
      assert.match(created.metadata?.uid ?? '', /^[0-9a-f-]{36}$/);
      assert.ok(created.metadata?.creationTimestamp instanceof Date);
      assert.equal(created.automountServiceAccountToken, false);
      assert.deepEqual(created.secrets?.map((s) => s.name), ['builder-token']);
      assert.deepEqual(created.imagePullSecrets?.map((s) => s.name), ['registry']);
      assert.equal(created.metadata?.annotations?.['orch.io/enforce-mountable-secrets'], 'true');
      const mf = created.metadata?.managedFields ?? [];
      assert.equal(mf.length, 1, JSON.stringify(mf));
      assert.equal(mf[0]!.operation, 'Update');
      assert.equal(mf[0]!.apiVersion, 'v1');
      assert.equal(mf[0]!.fieldsType, 'FieldsV1');

      const read = await core.readNamespacedServiceAccount({ name: 'builder', namespace: 'cn-sa' });
      assert.equal(read.metadata?.uid, created.metadata?.uid);
      assert.equal(read.metadata?.resourceVersion, created.metadata?.resourceVersion);
      assert.deepEqual(read.metadata?.labels, { app: 'ci', role: 'build' });
      assert.equal(read.automountServiceAccountToken, false);
    });

    it('lists with label selectors, in a namespace and across namespaces', async () => {
      for (const [ns, name, labels] of [
        ['cn-sa', 'lab-a', { app: 'web', env: 'prod' }],
        ['cn-sa', 'lab-b', { app: 'web', env: 'dev' }],
        ['cn-sa', 'lab-c', { app: 'db' }],
        ['cn-sa-2', 'lab-d', { app: 'web', env: 'prod' }],
      ] as const) {
        await core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name, labels: { ...labels, suite: 'labels' } } } });
      }
      const names = (l: { items: V1ServiceAccount[] }) => l.items.map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`);

      const web = await core.listNamespacedServiceAccount({ namespace: 'cn-sa', labelSelector: 'app=web' });
      assert.equal(web.kind, 'ServiceAccountList');
      assert.deepEqual(names(web), ['cn-sa/lab-a', 'cn-sa/lab-b']);
      assert.equal(web.metadata?.remainingItemCount, undefined);
      assert.ok(!web.metadata?._continue, 'no continue token on a complete list');
      assert.deepEqual(names(await core.listNamespacedServiceAccount({ namespace: 'cn-sa', labelSelector: 'app=web,env!=prod' })), ['cn-sa/lab-b']);
      assert.deepEqual(names(await core.listNamespacedServiceAccount({ namespace: 'cn-sa', labelSelector: 'suite=labels,!env' })), ['cn-sa/lab-c']);
      assert.deepEqual(names(await core.listNamespacedServiceAccount({ namespace: 'cn-sa', labelSelector: 'env in (prod,dev)' })), ['cn-sa/lab-a', 'cn-sa/lab-b']);
      assert.deepEqual(names(await core.listNamespacedServiceAccount({ namespace: 'cn-sa', fieldSelector: 'metadata.name=lab-c' })), ['cn-sa/lab-c']);

      const all = await core.listServiceAccountForAllNamespaces({ labelSelector: 'app=web,env=prod' });
      assert.equal(all.kind, 'ServiceAccountList');
      // ordered by storage key: namespace, then name ('cn-sa-2/' sorts before 'cn-sa/')
      assert.deepEqual(names(all), ['cn-sa-2/lab-d', 'cn-sa/lab-a']);

      // every namespace gets a `default` ServiceAccount from the controller
      const everything = await waitFor('default service accounts', async () => {
        const l = await core.listServiceAccountForAllNamespaces();
        const n = names(l);
        return ['cn-sa/default', 'cn-sa-2/default', 'default/default', 'orch-system/default'].every((x) => n.includes(x)) ? l : undefined;
      });
      const n = names(everything);
      assert.ok(n.includes('cn-sa/builder') && n.includes('cn-sa-2/lab-d'));
      assert.deepEqual(n, [...n].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)), 'list is ordered by namespace/name');
      assert.ok(Number(everything.metadata?.resourceVersion) >= Math.max(...everything.items.map((s) => Number(s.metadata?.resourceVersion))));
    });

    it('replaces, with conflict detection and immutable fields', async () => {
      const created = await core.createNamespacedServiceAccount({ namespace: 'cn-sa', body: { metadata: { name: 'replace-me', labels: { v: '1' } } } });
      const v1 = created.metadata!.resourceVersion!;
      const body: V1ServiceAccount = { ...created, metadata: { ...created.metadata, labels: { v: '2' } }, automountServiceAccountToken: true };
      const replaced = await core.replaceNamespacedServiceAccount({ name: 'replace-me', namespace: 'cn-sa', body });
      assert.equal(replaced.metadata?.labels?.v, '2');
      assert.equal(replaced.automountServiceAccountToken, true);
      assert.equal(replaced.metadata?.uid, created.metadata?.uid);
      assert.ok(Number(replaced.metadata?.resourceVersion) > Number(v1));
      assert.equal((await core.readNamespacedServiceAccount({ name: 'replace-me', namespace: 'cn-sa' })).metadata?.labels?.v, '2');

      // the resourceVersion of the first write is stale now
      const stale = await rejects(core.replaceNamespacedServiceAccount({ name: 'replace-me', namespace: 'cn-sa', body: { ...body, metadata: { ...body.metadata, resourceVersion: v1, labels: { v: '3' } } } }), 409, 'Conflict');
      assert.equal(stale.message, 'Operation cannot be fulfilled on serviceaccounts "replace-me": the object has been modified; please apply your changes to the latest version and try again');
      assert.equal((await core.readNamespacedServiceAccount({ name: 'replace-me', namespace: 'cn-sa' })).metadata?.labels?.v, '2');

      // a uid in a PUT body is a precondition (kube-apiserver's defaultUpdatedObjectInfo): a different uid is a 409 Conflict
      const uidChange = await rejects(core.replaceNamespacedServiceAccount({ name: 'replace-me', namespace: 'cn-sa', body: { ...replaced, metadata: { ...replaced.metadata, uid: '00000000-0000-0000-0000-000000000000' } } }), 409, 'Conflict');
      assert.equal(uidChange.message, `Operation cannot be fulfilled on serviceaccounts "replace-me": StorageError: invalid object, Code: 4, Key: /registry/serviceaccounts/cn-sa/replace-me, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: 00000000-0000-0000-0000-000000000000, UID in object meta: ${replaced.metadata?.uid}`);
      assert.equal((await core.readNamespacedServiceAccount({ name: 'replace-me', namespace: 'cn-sa' })).metadata?.uid, created.metadata?.uid);
      // creationTimestamp cannot change: it is reset to the stored value, as Kubernetes does
      const moved = await core.replaceNamespacedServiceAccount({ name: 'replace-me', namespace: 'cn-sa', body: { ...replaced, metadata: { ...replaced.metadata, resourceVersion: undefined, creationTimestamp: new Date('2001-01-01T00:00:00Z') } } });
      assert.equal(moved.metadata?.creationTimestamp?.toISOString(), created.metadata?.creationTimestamp?.toISOString());

      // name in the body differs from the URL
      await rejects(core.replaceNamespacedServiceAccount({ name: 'replace-me', namespace: 'cn-sa', body: { ...replaced, metadata: { ...replaced.metadata, name: 'other-name' } } }), 400, 'BadRequest');
    });

    it('does not create on update (ServiceAccounts do not allow create-on-update: PUT of a missing one is 404)', async () => {
      const nf = await rejects(core.replaceNamespacedServiceAccount({ name: 'put-created', namespace: 'cn-sa', body: { metadata: { name: 'put-created' } } }), 404, 'NotFound');
      assert.equal(nf.message, 'serviceaccounts "put-created" not found');
      await rejects(core.readNamespacedServiceAccount({ name: 'put-created', namespace: 'cn-sa' }), 404, 'NotFound');
    });

    it('answers 404, 409 and 422 as ApiException', async () => {
      await rejects(core.createNamespacedServiceAccount({ namespace: 'cn-sa', body: { metadata: { name: 'dup' } } }).then(() =>
        core.createNamespacedServiceAccount({ namespace: 'cn-sa', body: { metadata: { name: 'dup' } } })), 409, 'AlreadyExists')
        .then((s) => assert.equal(s.message, 'serviceaccounts "dup" already exists'));

      const nf = await rejects(core.readNamespacedServiceAccount({ name: 'ghost', namespace: 'cn-sa' }), 404, 'NotFound');
      assert.equal(nf.message, 'serviceaccounts "ghost" not found');
      assert.equal(nf.details?.kind, 'serviceaccounts');
      await rejects(core.deleteNamespacedServiceAccount({ name: 'ghost', namespace: 'cn-sa' }), 404, 'NotFound');

      // a missing namespace is 404 for the namespace
      const noNs = await rejects(core.createNamespacedServiceAccount({ namespace: 'cn-missing-ns', body: { metadata: { name: 'x' } } }), 404, 'NotFound');
      assert.equal(noNs.message, 'namespaces "cn-missing-ns" not found');

      const bad = await rejects(core.createNamespacedServiceAccount({ namespace: 'cn-sa', body: { metadata: { name: 'Bad_Name' } } }), 422, 'Invalid');
      assert.equal(bad.details?.kind, 'ServiceAccount');
      assert.equal(bad.details?.name, 'Bad_Name');
      const cause = bad.details?.causes?.find((c) => c.field === 'metadata.name');
      assert.ok(cause, JSON.stringify(bad.details?.causes));
      assert.equal(cause.reason, 'FieldValueInvalid');
      assert.match(bad.message, /^ServiceAccount "Bad_Name" is invalid: metadata\.name: Invalid value: "Bad_Name": /);

      const badLabel = await rejects(core.createNamespacedServiceAccount({ namespace: 'cn-sa', body: { metadata: { name: 'ok-name', labels: { 'bad label': 'x' } } } }), 422, 'Invalid');
      assert.ok(badLabel.details?.causes?.some((c) => c.field === 'metadata.labels'), JSON.stringify(badLabel.details?.causes));
    });

    it('deletes a ServiceAccount, answering with the object', async () => {
      const created = await core.createNamespacedServiceAccount({ namespace: 'cn-sa', body: { metadata: { name: 'delete-me' } } });
      const deleted = await core.deleteNamespacedServiceAccount({ name: 'delete-me', namespace: 'cn-sa' });
      assert.equal(deleted.kind, 'ServiceAccount');
      assert.equal(deleted.metadata?.uid, created.metadata?.uid);
      await rejects(core.readNamespacedServiceAccount({ name: 'delete-me', namespace: 'cn-sa' }), 404, 'NotFound');
      const listed = await core.listNamespacedServiceAccount({ namespace: 'cn-sa' });
      assert.ok(!listed.items.some((s) => s.metadata?.name === 'delete-me'));
      // the name can be reused, with a new uid
      const again = await core.createNamespacedServiceAccount({ namespace: 'cn-sa', body: { metadata: { name: 'delete-me' } } });
      assert.notEqual(again.metadata?.uid, created.metadata?.uid);

      // precondition on uid
      const pre = await rejects(core.deleteNamespacedServiceAccount({ name: 'delete-me', namespace: 'cn-sa', body: { preconditions: { uid: created.metadata!.uid! } } }), 409, 'Conflict');
      assert.equal(pre.message, `Operation cannot be fulfilled on ServiceAccount "delete-me": the UID in the precondition (${created.metadata!.uid!}) does not match the UID in record (${again.metadata!.uid!}). The object might have been deleted and then recreated`);
      const preRv = await rejects(core.deleteNamespacedServiceAccount({ name: 'delete-me', namespace: 'cn-sa', body: { preconditions: { resourceVersion: '1' } } }), 409, 'Conflict');
      assert.match(preRv.message, /the ResourceVersion in the precondition \(1\) does not match the ResourceVersion in record/);
      await core.readNamespacedServiceAccount({ name: 'delete-me', namespace: 'cn-sa' });
    });

    it('dryRun=All validates and answers, but stores nothing and consumes no resourceVersion', async () => {
      await waitFor('the default ServiceAccount of cn-sa', async () => {
        try { return await core.readNamespacedServiceAccount({ name: 'default', namespace: 'cn-sa' }); } catch { return undefined; }
      });
      const rvBefore = (await core.listNamespacedServiceAccount({ namespace: 'cn-sa' })).metadata?.resourceVersion;
      const dry = await core.createNamespacedServiceAccount({ namespace: 'cn-sa', dryRun: 'All', body: { metadata: { name: 'dry-one', labels: { dry: 'run' } } } });
      assert.equal(dry.metadata?.name, 'dry-one');
      assert.deepEqual(dry.metadata?.labels, { dry: 'run' });
      assert.ok(dry.metadata?.creationTimestamp instanceof Date);
      await rejects(core.readNamespacedServiceAccount({ name: 'dry-one', namespace: 'cn-sa' }), 404, 'NotFound');
      await rejects(core.createNamespacedServiceAccount({ namespace: 'cn-sa', dryRun: 'All', body: { metadata: { name: 'Dry_Bad' } } }), 422, 'Invalid');
      const builder = await core.readNamespacedServiceAccount({ name: 'builder', namespace: 'cn-sa' });
      const dryDelete = await core.deleteNamespacedServiceAccount({ name: 'builder', namespace: 'cn-sa', dryRun: 'All' });
      assert.equal(dryDelete.metadata?.uid, builder.metadata?.uid);
      const stillThere = await core.readNamespacedServiceAccount({ name: 'builder', namespace: 'cn-sa' });
      assert.equal(stillThere.metadata?.resourceVersion, builder.metadata?.resourceVersion);
      // as kube-apiserver: the CreateOptions are invalid
      const bogus = await rejects(core.createNamespacedServiceAccount({ namespace: 'cn-sa', dryRun: 'Bogus', body: { metadata: { name: 'x' } } }), 422, 'Invalid');
      assert.equal(bogus.details?.kind, 'CreateOptions');
      assert.ok(bogus.details?.causes?.some((c) => c.field === 'dryRun' && c.reason === 'FieldValueNotSupported'), JSON.stringify(bogus.details?.causes));
      await rejects(core.readNamespacedServiceAccount({ name: 'x', namespace: 'cn-sa' }), 404, 'NotFound');
      const rvAfter = (await core.listNamespacedServiceAccount({ namespace: 'cn-sa' })).metadata?.resourceVersion;
      assert.equal(rvAfter, rvBefore, 'no revision was consumed by dry runs');
    });

    it('dryRun=All create of an existing name is 409 AlreadyExists', async () => {
      const dup = await rejects(core.createNamespacedServiceAccount({ namespace: 'cn-sa', dryRun: 'All', body: { metadata: { name: 'builder' } } }), 409, 'AlreadyExists');
      assert.equal(dup.message, 'serviceaccounts "builder" already exists');
    });

    it('pages through 2,500 ServiceAccounts with limit=100', async () => {
      await ensureNamespace('cn-many');
      const names = Array.from({ length: 2500 }, (_, i) => `many-${String(i).padStart(4, '0')}`);
      for (let i = 0; i < names.length; i += 50) {
        await Promise.all(names.slice(i, i + 50).map((name) => core.createNamespacedServiceAccount({ namespace: 'cn-many', body: { metadata: { name } } })));
      }
      const seen: string[] = [];
      let token: string | undefined;
      let pages = 0;
      let listRv: string | undefined;
      do {
        const page = await core.listNamespacedServiceAccount({ namespace: 'cn-many', limit: 100, _continue: token });
        pages++;
        assert.ok(page.items.length <= 100);
        listRv ??= page.metadata?.resourceVersion;
        assert.equal(page.metadata?.resourceVersion, listRv);
        seen.push(...page.items.map((sa) => sa.metadata!.name!));
        token = page.metadata?._continue || undefined;
      } while (token);
      assert.equal(pages, 26, '2,501 items (with default) in pages of 100');
      assert.deepEqual(seen.filter((n) => n.startsWith('many-')), names);
      assert.ok(seen.includes('default'));
    });

    it('pages through a list with limit and continue on one snapshot', async () => {
      await ensureNamespace('cn-page');
      await waitFor('the default ServiceAccount of cn-page', async () => {
        try { return await core.readNamespacedServiceAccount({ name: 'default', namespace: 'cn-page' }); } catch { return undefined; }
      });
      const expected = ['default'];
      for (let i = 0; i < 25; i++) {
        const name = `page-${String(i).padStart(2, '0')}`;
        expected.push(name);
        await core.createNamespacedServiceAccount({ namespace: 'cn-page', body: { metadata: { name, labels: { paged: 'yes' } } } });
      }
      expected.sort();

      const seen: string[] = [];
      const sizes: number[] = [];
      const remaining: (number | undefined)[] = [];
      let listRv: string | undefined;
      let token: string | undefined;
      let pages = 0;
      do {
        const page = await core.listNamespacedServiceAccount({ namespace: 'cn-page', limit: 10, _continue: token });
        pages++;
        sizes.push(page.items.length);
        remaining.push(page.metadata?.remainingItemCount);
        seen.push(...page.items.map((s) => s.metadata!.name!));
        if (listRv === undefined) listRv = page.metadata?.resourceVersion;
        else assert.equal(page.metadata?.resourceVersion, listRv, 'every chunk carries the resourceVersion of the first');
        token = page.metadata?._continue || undefined;
        if (pages === 1) {
          // written after the first chunk: a consistent snapshot must not show it in later chunks
          await core.createNamespacedServiceAccount({ namespace: 'cn-page', body: { metadata: { name: 'zz-after-first-page' } } });
        }
        assert.ok(pages <= 5, 'too many pages');
      } while (token);

      assert.deepEqual(sizes, [10, 10, 6]);
      assert.deepEqual(remaining, [16, 6, undefined]);
      assert.deepEqual(seen, expected);

      // with a label selector: no remainingItemCount, still chunked
      const first = await core.listNamespacedServiceAccount({ namespace: 'cn-page', limit: 10, labelSelector: 'paged=yes' });
      assert.equal(first.items.length, 10);
      assert.ok(first.metadata?._continue);
      assert.equal(first.metadata?.remainingItemCount, undefined);

      // a malformed continue token is 400 BadRequest
      await rejects(core.listNamespacedServiceAccount({ namespace: 'cn-page', limit: 10, _continue: 'not-a-token' }), 400, 'BadRequest');

      // the unpaged list now includes the late write
      const full = await core.listNamespacedServiceAccount({ namespace: 'cn-page' });
      assert.equal(full.items.length, 27);
    });
  });

  describe('CoreV1Api secrets', () => {
    before(async () => { await ensureNamespace('cn-secret'); });

    it('creates a Secret merging stringData into data, defaulting type Opaque', async () => {
      const body: V1Secret = {
        metadata: { name: 'creds', labels: { kind: 'db' } },
        data: { user: Buffer.from('admin').toString('base64') },
        stringData: { password: 's3cret', user: 'root' },
      };
      const created = await core.createNamespacedSecret({ namespace: 'cn-secret', body });
      assert.equal(created.kind, 'Secret');
      assert.equal(created.type, 'Opaque');
      assert.equal(created.stringData, undefined, 'stringData is write-only');
      assert.deepEqual(created.data, {
        password: Buffer.from('s3cret').toString('base64'),
        user: Buffer.from('root').toString('base64'), // stringData wins over data
      });

      const read = await core.readNamespacedSecret({ name: 'creds', namespace: 'cn-secret' });
      assert.equal(read.metadata?.uid, created.metadata?.uid);
      assert.deepEqual(read.data, created.data);
      assert.equal(read.stringData, undefined);
      assert.equal(read.type, 'Opaque');
    });

    it('lists secrets with a label selector', async () => {
      await core.createNamespacedSecret({ namespace: 'cn-secret', body: { metadata: { name: 'tls-a', labels: { kind: 'tls' } }, type: 'Opaque', data: {} } });
      await core.createNamespacedSecret({ namespace: 'cn-secret', body: { metadata: { name: 'tls-b', labels: { kind: 'tls' } } } });
      const tls = await core.listNamespacedSecret({ namespace: 'cn-secret', labelSelector: 'kind=tls' });
      assert.equal(tls.kind, 'SecretList');
      assert.deepEqual(tls.items.map((s) => s.metadata?.name), ['tls-a', 'tls-b']);
      const notTls = await core.listNamespacedSecret({ namespace: 'cn-secret', labelSelector: 'kind!=tls' });
      assert.ok(notTls.items.every((s) => s.metadata?.labels?.kind !== 'tls'));
      assert.ok(notTls.items.some((s) => s.metadata?.name === 'creds'));
      const across = await core.listSecretForAllNamespaces({ labelSelector: 'kind=tls' });
      assert.deepEqual(across.items.map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`), ['cn-secret/tls-a', 'cn-secret/tls-b']);
    });

    it('replaces a secret and refuses changes to an immutable one', async () => {
      const created = await core.createNamespacedSecret({ namespace: 'cn-secret', body: { metadata: { name: 'frozen' }, data: { k: Buffer.from('v1').toString('base64') } } });
      const replaced = await core.replaceNamespacedSecret({ name: 'frozen', namespace: 'cn-secret', body: { ...created, data: { k: Buffer.from('v2').toString('base64') }, immutable: true } });
      assert.equal(Buffer.from(replaced.data!.k!, 'base64').toString(), 'v2');
      assert.equal(replaced.immutable, true);
      assert.ok(Number(replaced.metadata?.resourceVersion) > Number(created.metadata?.resourceVersion));

      const refused = await rejects(core.replaceNamespacedSecret({ name: 'frozen', namespace: 'cn-secret', body: { ...replaced, data: { k: Buffer.from('v3').toString('base64') } } }), 422, 'Invalid');
      assert.ok(refused.details?.causes?.some((c) => c.field === 'data'), JSON.stringify(refused.details?.causes));
      const unfreeze = await rejects(core.replaceNamespacedSecret({ name: 'frozen', namespace: 'cn-secret', body: { ...replaced, immutable: false } }), 422, 'Invalid');
      assert.ok(unfreeze.details?.causes?.some((c) => c.field === 'immutable'), JSON.stringify(unfreeze.details?.causes));
      assert.equal(Buffer.from((await core.readNamespacedSecret({ name: 'frozen', namespace: 'cn-secret' })).data!.k!, 'base64').toString(), 'v2');
    });

    it('rejects invalid secrets: bad key 422, bad base64 400, duplicate 409, missing 404', async () => {
      const badKey = await rejects(core.createNamespacedSecret({ namespace: 'cn-secret', body: { metadata: { name: 'bad-key' }, data: { 'bad key': 'eA==' } } }), 422, 'Invalid');
      assert.ok(badKey.details?.causes?.some((c) => c.field === 'data[bad key]'), JSON.stringify(badKey.details?.causes));
      await rejects(core.createNamespacedSecret({ namespace: 'cn-secret', body: { metadata: { name: 'bad-b64' }, data: { k: '%%%not base64%%%' } } }), 400, 'BadRequest');
      await rejects(core.readNamespacedSecret({ name: 'bad-b64', namespace: 'cn-secret' }), 404, 'NotFound');
      const dup = await rejects(core.createNamespacedSecret({ namespace: 'cn-secret', body: { metadata: { name: 'creds' } } }), 409, 'AlreadyExists');
      assert.equal(dup.message, 'secrets "creds" already exists');
      await rejects(core.readNamespacedSecret({ name: 'no-such-secret', namespace: 'cn-secret' }), 404, 'NotFound');
    });

    it('deletes a secret, answering with a Success Status', async () => {
      const created = await core.createNamespacedSecret({ namespace: 'cn-secret', body: { metadata: { name: 'gone' } } });
      const status: V1Status = await core.deleteNamespacedSecret({ name: 'gone', namespace: 'cn-secret' });
      assert.equal(status.kind, 'Status');
      assert.equal(status.status, 'Success');
      assert.equal(status.details?.name, 'gone');
      assert.equal(status.details?.kind, 'secrets');
      assert.equal(status.details?.uid, created.metadata?.uid);
      await rejects(core.readNamespacedSecret({ name: 'gone', namespace: 'cn-secret' }), 404, 'NotFound');
      await rejects(core.deleteNamespacedSecret({ name: 'gone', namespace: 'cn-secret' }), 404, 'NotFound');
    });
  });

  describe('events.orch.io/v1 Events', () => {
    before(async () => { await ensureNamespace('cn-events'); });

    function event(name: string, extra: Record<string, unknown> = {}): KubernetesObject & Record<string, unknown> {
      return {
        apiVersion: 'events.orch.io/v1',
        kind: 'Event',
        metadata: { name, namespace: 'cn-events', labels: { source: 'client-node' } },
        eventTime: microNow(),
        action: 'Scheduling',
        reason: 'Scheduled',
        note: 'assigned somewhere',
        reportingController: 'example.com/scheduler',
        reportingInstance: 'scheduler-1',
        type: 'Normal',
        regarding: { apiVersion: 'v1', kind: 'ServiceAccount', name: 'default', namespace: 'cn-events' },
        ...extra,
      };
    }

    it('KubernetesObjectApi creates, reads, lists and deletes an Event', async () => {
      const spec = event('ev-one');
      const created = await objects.create(spec) as KubernetesObject & Record<string, any>;
      assert.equal(created.apiVersion, 'events.orch.io/v1');
      assert.equal(created.kind, 'Event');
      assert.equal(created.metadata?.name, 'ev-one');
      assert.ok(created.metadata?.uid);
      assert.ok(Number(created.metadata?.resourceVersion) > 0);
      assert.equal(created.action, 'Scheduling');
      assert.equal(created.reason, 'Scheduled');
      assert.equal(created.reportingController, 'example.com/scheduler');
      assert.equal(created.reportingInstance, 'scheduler-1');
      assert.equal(created.type, 'Normal');
      assert.equal(created.note, 'assigned somewhere');
      assert.equal(created.eventTime, spec.eventTime, 'eventTime round-trips with microseconds');
      assert.deepEqual(created.regarding, spec.regarding);

      const read = await objects.read({ apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: { name: 'ev-one', namespace: 'cn-events' } }) as KubernetesObject & Record<string, any>;
      assert.equal(read.metadata?.uid, created.metadata?.uid);
      assert.equal(read.eventTime, spec.eventTime);

      await objects.create(event('ev-two', { type: 'Warning', reason: 'Failed', metadata: { name: 'ev-two', namespace: 'cn-events', labels: { source: 'other' } } }));
      const list = await objects.list('events.orch.io/v1', 'Event', 'cn-events');
      assert.equal((list as any).kind, 'EventList');
      assert.equal((list as any).apiVersion, 'events.orch.io/v1');
      assert.deepEqual(list.items.map((e) => e.metadata?.name), ['ev-one', 'ev-two']);
      const labelled = await objects.list('events.orch.io/v1', 'Event', 'cn-events', undefined, undefined, undefined, undefined, 'source=client-node');
      assert.deepEqual(labelled.items.map((e) => e.metadata?.name), ['ev-one']);

      const status = await objects.delete({ apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: { name: 'ev-one', namespace: 'cn-events' } });
      assert.equal(status.kind, 'Status');
      assert.equal(status.status, 'Success');
      assert.equal(status.details?.name, 'ev-one');
      assert.equal(status.details?.group, 'events.orch.io');
      assert.equal(status.details?.kind, 'events');
      await rejects(objects.read({ apiVersion: 'events.orch.io/v1', kind: 'Event', metadata: { name: 'ev-one', namespace: 'cn-events' } }), 404, 'NotFound')
        .then((s) => assert.equal(s.message, 'events.events.orch.io "ev-one" not found'));
      const after = await objects.list('events.orch.io/v1', 'Event', 'cn-events');
      assert.deepEqual(after.items.map((e) => e.metadata?.name), ['ev-two']);
    });

    it('CustomObjectsApi creates, gets, lists and deletes an Event', async () => {
      const group = 'events.orch.io', version = 'v1', plural = 'events', namespace = 'cn-events';
      const created = await custom.createNamespacedCustomObject({ group, version, plural, namespace, body: event('ev-custom') }) as Record<string, any>;
      assert.equal(created.metadata.name, 'ev-custom');
      const got = await custom.getNamespacedCustomObject({ group, version, plural, namespace, name: 'ev-custom' }) as Record<string, any>;
      assert.equal(got.metadata.uid, created.metadata.uid);
      assert.equal(got.reason, 'Scheduled');
      const listed = await custom.listNamespacedCustomObject({ group, version, plural, namespace, labelSelector: 'source=client-node' }) as Record<string, any>;
      assert.equal(listed.kind, 'EventList');
      assert.ok(listed.items.some((e: any) => e.metadata.name === 'ev-custom'));
      const across = await custom.listClusterCustomObject({ group, version, plural }) as Record<string, any>;
      assert.ok(across.items.some((e: any) => e.metadata.namespace === 'cn-events' && e.metadata.name === 'ev-custom'));
      const status = await custom.deleteNamespacedCustomObject({ group, version, plural, namespace, name: 'ev-custom' }) as Record<string, any>;
      assert.equal(status.kind, 'Status');
      assert.equal(status.status, 'Success');
      await rejects(custom.getNamespacedCustomObject({ group, version, plural, namespace, name: 'ev-custom' }), 404, 'NotFound');
    });

    it('creates an Event on update (PUT of a missing Event answers 201), then replaces it (200)', async () => {
      const group = 'events.orch.io', version = 'v1', plural = 'events', namespace = 'cn-events';
      const put = await custom.replaceNamespacedCustomObjectWithHttpInfo({ group, version, plural, namespace, name: 'ev-put', body: event('ev-put') });
      assert.equal(put.httpStatusCode, 201);
      const created = put.data as Record<string, any>;
      assert.ok(created.metadata.uid);
      const again = await custom.replaceNamespacedCustomObjectWithHttpInfo({ group, version, plural, namespace, name: 'ev-put', body: { ...created, metadata: { ...created.metadata, labels: { changed: 'yes' } } } });
      assert.equal(again.httpStatusCode, 200);
      const replaced = again.data as Record<string, any>;
      assert.deepEqual(replaced.metadata.labels, { changed: 'yes' });
      assert.equal(replaced.metadata.uid, created.metadata.uid);
      assert.ok(Number(replaced.metadata.resourceVersion) > Number(created.metadata.resourceVersion));
      // the note of an existing Event is immutable
      await rejects(custom.replaceNamespacedCustomObject({ group, version, plural, namespace, name: 'ev-put', body: { ...replaced, note: 'changed' } }), 422, 'Invalid');
    });

    it('validates new Events (422 with causes)', async () => {
      const noReason = await rejects(objects.create(event('ev-bad-1', { reason: '' })), 422, 'Invalid');
      assert.equal(noReason.details?.kind, 'Event');
      // kube-apiserver validates the internal core Event: details name no group (as for events.k8s.io)
      assert.equal(noReason.details?.group, undefined);
      assert.match(noReason.message ?? '', /^Event "ev-bad-1" is invalid: /);
      assert.ok(noReason.details?.causes?.some((c) => c.field === 'reason' && c.reason === 'FieldValueRequired'), JSON.stringify(noReason.details?.causes));

      const noTime = event('ev-bad-2');
      delete noTime.eventTime;
      const t = await rejects(objects.create(noTime), 422, 'Invalid');
      assert.ok(t.details?.causes?.some((c) => c.field === 'eventTime' && c.reason === 'FieldValueRequired'), JSON.stringify(t.details?.causes));

      const badType = await rejects(objects.create(event('ev-bad-3', { type: 'Bogus' })), 422, 'Invalid');
      assert.ok(badType.details?.causes?.some((c) => c.field === 'type'), JSON.stringify(badType.details?.causes));

      const longAction = await rejects(objects.create(event('ev-bad-4', { action: 'a'.repeat(129) })), 422, 'Invalid');
      assert.ok(longAction.details?.causes?.some((c) => c.field === 'action'), JSON.stringify(longAction.details?.causes));

      const noController = await rejects(objects.create(event('ev-bad-5', { reportingController: '' })), 422, 'Invalid');
      assert.ok(noController.details?.causes?.some((c) => c.field === 'reportingController' && c.reason === 'FieldValueRequired'), JSON.stringify(noController.details?.causes));

      await rejects(objects.create(event('ev-one-dup')).then(() => objects.create(event('ev-one-dup'))), 409, 'AlreadyExists');
      const list = await objects.list('events.orch.io/v1', 'Event', 'cn-events');
      assert.ok(!list.items.some((e) => e.metadata?.name?.startsWith('ev-bad-')), 'no invalid Event was stored');
    });
  });
});
