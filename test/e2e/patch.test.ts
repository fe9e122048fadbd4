/**
 * PATCH in every form and server-side apply over HTTP, with kubectl and client-node; OpenAPI as
 * kubectl uses it (explain, client-side apply, create with server-side field validation).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { createNamespace, createSA, type Obj } from '../support/api.js';
import { request, startServer, type HttpResponse, type TestServer } from '../support/server.js';

const ns = 'patching';
const sa = (name: string) => `/api/v1/namespaces/${ns}/serviceaccounts/${name}`;
const patch = (server: TestServer, path: string, type: string, body: unknown, query = '') =>
  request(server, `${path}${query}`, { method: 'PATCH', headers: { 'content-type': type }, body: typeof body === 'string' ? body : JSON.stringify(body) });

function managers(obj: Obj): string[] {
  return (obj.metadata.managedFields ?? []).map((m: { manager: string; operation: string }) => `${m.manager}/${m.operation}`).sort();
}

function kubectlAvailable(t: { skip(m: string): void }): boolean {
  if (!spawnSync('kubectl', ['version', '--client']).error) return true;
  if (process.env.CI) assert.fail('kubectl is required in CI');
  t.skip('kubectl is not installed');
  return false;
}

describe('PATCH and server-side apply', () => {
  let server: TestServer;
  let kubectl: (...args: string[]) => { status: number | null; stdout: string; stderr: string };
  before(async () => {
    server = await startServer();
    await createNamespace(server, ns);
    kubectl = (...args) => {
      const r = spawnSync('kubectl', ['--kubeconfig', server.kubeconfig, '-n', ns, ...args], { encoding: 'utf8' });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr };
    };
  });
  after(async () => { await server.dispose(); });

  describe('patch types', () => {
    it('applies a JSON patch; a failing test op is 422 and stores nothing', async () => {
      await createSA(server, ns, 'jp', { labels: { a: '1' } });
      const ok = await patch(server, sa('jp'), 'application/json-patch+json', [{ op: 'replace', path: '/metadata/labels/a', value: '2' }, { op: 'add', path: '/metadata/labels/b', value: '3' }]);
      assert.equal(ok.status, 200, ok.body);
      assert.deepEqual(ok.json.metadata.labels, { a: '2', b: '3' });
      const failing = await patch(server, sa('jp'), 'application/json-patch+json', [{ op: 'add', path: '/metadata/labels/c', value: 'x' }, { op: 'test', path: '/metadata/labels/a', value: 'nope' }]);
      assert.equal(failing.status, 422);
      assert.equal(failing.json.reason, 'Invalid');
      assert.equal((await request(server, sa('jp'))).json.metadata.labels.c, undefined, 'nothing of the patch was stored');
      const malformed = await patch(server, sa('jp'), 'application/json-patch+json', '{"op":');
      assert.equal(malformed.status, 400);
    });

    it('applies a merge patch (null deletes, lists replace)', async () => {
      await createSA(server, ns, 'mp', { labels: { keep: 'y', drop: 'y' } });
      await patch(server, sa('mp'), 'application/merge-patch+json', { secrets: [{ name: 'x' }, { name: 'y' }] });
      const r = await patch(server, sa('mp'), 'application/merge-patch+json', { metadata: { labels: { drop: null } }, secrets: [{ name: 'z' }] });
      assert.equal(r.status, 200);
      assert.deepEqual(r.json.metadata.labels, { keep: 'y' });
      assert.deepEqual(r.json.secrets, [{ name: 'z' }]);
    });

    it('applies a strategic merge patch from the kind\'s markers', async () => {
      await createSA(server, ns, 'smp');
      await patch(server, sa('smp'), 'application/strategic-merge-patch+json', { secrets: [{ name: 'a' }, { name: 'b' }], imagePullSecrets: [{ name: 'p1' }, { name: 'p2' }] });
      const r = await patch(server, sa('smp'), 'application/strategic-merge-patch+json', { secrets: [{ name: 'c' }, { name: 'a', $patch: 'delete' }], imagePullSecrets: [{ name: 'p3' }] });
      assert.deepEqual(r.json.secrets.map((s: { name: string }) => s.name).sort(), ['b', 'c'], 'secrets merge on name');
      assert.deepEqual(r.json.imagePullSecrets, [{ name: 'p3' }], 'imagePullSecrets is replaced whole');
      const order = await patch(server, sa('smp'), 'application/strategic-merge-patch+json', { '$setElementOrder/secrets': [{ name: 'c' }, { name: 'b' }], secrets: [{ name: 'c' }] });
      assert.deepEqual(order.json.secrets.map((s: { name: string }) => s.name), ['c', 'b']);
    });

    it('answers 415 for other patch types, 404 for a missing object, 409 for a stale resourceVersion in the patch', async () => {
      await createSA(server, ns, 'errs');
      const unsupported = await patch(server, sa('errs'), 'application/json', { metadata: { labels: { a: 'b' } } });
      assert.equal(unsupported.status, 415);
      assert.match(unsupported.json.message, /application\/json-patch\+json, application\/merge-patch\+json, application\/strategic-merge-patch\+json, application\/apply-patch\+yaml/);
      assert.equal((await patch(server, sa('missing'), 'application/merge-patch+json', { metadata: { labels: { a: 'b' } } })).status, 404);
      const stale = await patch(server, sa('errs'), 'application/merge-patch+json', { metadata: { resourceVersion: '1', labels: { a: 'b' } } });
      assert.equal(stale.status, 409);
      assert.equal(stale.json.reason, 'Conflict');
      const force = await patch(server, sa('errs'), 'application/merge-patch+json', { metadata: { labels: { a: 'b' } } }, '?force=true');
      assert.equal(force.status, 422);
      assert.match(force.json.message, /force: Forbidden: may not be specified for non-apply patch/);
    });

    it('words a patch that is not JSON as patch.go does for each type and fieldValidation', async () => {
      await createSA(server, ns, 'syntax');
      const refused = async (type: string, body: string, query: string, message: string) => {
        const res = await patch(server, sa('syntax'), type, body, query);
        assert.equal(res.status, 400, res.body);
        assert.equal(res.json.reason, 'BadRequest');
        assert.equal(res.json.message, message);
      };
      const nul = "invalid character '}' in literal null (expecting 'l')";
      await refused('application/merge-patch+json', '{"data":nul}', '', `error decoding patch: ${nul}`);
      await refused('application/merge-patch+json', '{"data":nul}', '?fieldValidation=Strict', `error decoding patch: ${nul}`);
      await refused('application/merge-patch+json', '{"data":nul}', '?fieldValidation=Ignore', 'Invalid JSON Patch');
      const key = "invalid character '}' looking for beginning of object key string";
      await refused('application/json-patch+json', '[{"op":"add",}]', '', `error decoding patch: ${key}`);
      await refused('application/json-patch+json', '[{"op":"add",}]', '?fieldValidation=Ignore', key);
      await refused('application/strategic-merge-patch+json', '{"metadata":', '', 'unexpected end of JSON input');
      await refused('application/strategic-merge-patch+json', '{"metadata":', '?fieldValidation=Ignore', 'unexpected end of JSON input');
    });

    it('checks the patched object: a wrong type is 422, unknown fields warn or fail per fieldValidation', async () => {
      await createSA(server, ns, 'validate');
      const wrong = await patch(server, sa('validate'), 'application/merge-patch+json', { automountServiceAccountToken: 'yes' });
      assert.equal(wrong.status, 422, wrong.body);
      const warned = await patch(server, sa('validate'), 'application/merge-patch+json', { bogus: 1 });
      assert.equal(warned.status, 200);
      assert.match(String(warned.headers.warning), /unknown field \\"bogus\\"/);
      const strict = await patch(server, sa('validate'), 'application/merge-patch+json', { bogus: 1 }, '?fieldValidation=Strict');
      assert.equal(strict.status, 400);
      assert.match(strict.json.message, /strict decoding error: unknown field "bogus"/);
    });

    it('dryRun=All applies every patch type without storing anything', async () => {
      const created = await createSA(server, ns, 'dry', { labels: { v: '0' } });
      const bodies: Array<[string, unknown]> = [
        ['application/json-patch+json', [{ op: 'replace', path: '/metadata/labels/v', value: '1' }]],
        ['application/merge-patch+json', { metadata: { labels: { v: '2' } } }],
        ['application/strategic-merge-patch+json', { metadata: { labels: { v: '3' } } }],
      ];
      for (const [type, body] of bodies) {
        const r = await patch(server, sa('dry'), type, body, '?dryRun=All');
        assert.equal(r.status, 200, r.body);
        assert.notEqual(r.json.metadata.labels.v, '0', `${type} was applied to the response`);
      }
      const apply = await patch(server, sa('dry'), 'application/apply-patch+yaml', 'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: dry\n  labels: {v: "4"}\n', '?dryRun=All&fieldManager=dry&force=true');
      assert.equal(apply.status, 200, apply.body);
      const after = (await request(server, sa('dry'))).json;
      assert.equal(after.metadata.resourceVersion, created.metadata.resourceVersion);
      assert.equal(after.metadata.labels.v, '0');
    });
  });

  describe('server-side apply', () => {
    const applyBody = (name: string, labels: Record<string, string>, extra = '') =>
      `apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: ${name}\n  labels: ${JSON.stringify(labels)}\n${extra}`;
    const apply = (name: string, body: string, query: string): Promise<HttpResponse> =>
      patch(server, sa(name), 'application/apply-patch+yaml', body, query);

    it('requires a fieldManager and refuses managedFields in the body', async () => {
      const none = await apply('ssa-req', applyBody('ssa-req', { a: '1' }), '');
      assert.equal(none.status, 422);
      assert.match(none.json.message, /fieldManager: Required value: is required for apply patch/);
      const withManaged = await apply('ssa-req', `${applyBody('ssa-req', { a: '1' })}  managedFields: [{manager: x}]\n`.replace('  labels', '  managedFields: [{manager: x}]\n  labels'), '?fieldManager=m');
      assert.equal(withManaged.status, 400);
    });

    it('creates when missing (201), records an Apply entry, and accepts JSON as YAML', async () => {
      const created = await apply('ssa-create', applyBody('ssa-create', { app: 'web' }), '?fieldManager=creator');
      assert.equal(created.status, 201, created.body);
      assert.deepEqual(managers(created.json), ['creator/Apply']);
      assert.deepEqual(created.json.metadata.managedFields[0].fieldsV1, { 'f:metadata': { 'f:labels': { 'f:app': {} } } });
      const json = await apply('ssa-create', JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'ssa-create', labels: { app: 'web', tier: 'fe' } } }), '?fieldManager=creator');
      assert.equal(json.status, 200);
      assert.deepEqual(json.json.metadata.labels, { app: 'web', tier: 'fe' });
    });

    it('conflicts with another manager (409 naming field and manager), force takes ownership', async () => {
      await apply('ssa-own', applyBody('ssa-own', { owner: 'one' }), '?fieldManager=one');
      const conflict = await apply('ssa-own', applyBody('ssa-own', { owner: 'two' }), '?fieldManager=two');
      assert.equal(conflict.status, 409);
      assert.equal(conflict.json.reason, 'Conflict');
      assert.equal(conflict.json.message, 'Apply failed with 1 conflict: conflict with "one": .metadata.labels.owner');
      assert.deepEqual(conflict.json.details.causes, [{ reason: 'FieldManagerConflict', message: 'conflict with "one"', field: '.metadata.labels.owner' }]);
      const forced = await apply('ssa-own', applyBody('ssa-own', { owner: 'two' }), '?fieldManager=two&force=true');
      assert.equal(forced.status, 200);
      assert.equal(forced.json.metadata.labels.owner, 'two');
      const one = forced.json.metadata.managedFields.find((m: { manager: string }) => m.manager === 'one');
      assert.equal(one, undefined, 'the loser owned nothing else and is dropped');
    });

    it('shares ownership of an equal value, keeps a co-owned value, removes a field only its applier owned', async () => {
      await apply('ssa-share', applyBody('ssa-share', { shared: 'x', mine: 'y' }), '?fieldManager=a');
      const same = await apply('ssa-share', applyBody('ssa-share', { shared: 'x' }), '?fieldManager=b');
      assert.equal(same.status, 200, 'applying the live value is no conflict');
      const dropped = await apply('ssa-share', applyBody('ssa-share', {}), '?fieldManager=a');
      assert.deepEqual(dropped.json.metadata.labels, { shared: 'x' }, 'mine (only a) removed; shared (also b) kept');
    });

    it('PUT and non-apply PATCH never conflict and take ownership', async () => {
      await apply('ssa-update', applyBody('ssa-update', { x: '1' }), '?fieldManager=applier');
      const r = await patch(server, sa('ssa-update'), 'application/merge-patch+json', { metadata: { labels: { x: '2' } } }, '?fieldManager=patcher');
      assert.equal(r.status, 200);
      assert.deepEqual(managers(r.json), ['patcher/Update']);
      const again = await apply('ssa-update', applyBody('ssa-update', { x: '3' }), '?fieldManager=applier');
      assert.equal(again.status, 409, 'the applier now conflicts with the patcher');
    });
  });

  describe('real clients', () => {
    it('kubectl label, annotate and patch --type=json|merge|strategic', (t) => {
      if (!kubectlAvailable(t)) return;
      assert.equal(kubectl('create', 'sa', 'kc').status, 0);
      assert.equal(kubectl('label', 'sa', 'kc', 'app=web').status, 0);
      assert.equal(kubectl('annotate', 'sa', 'kc', 'note=hi').status, 0);
      assert.equal(kubectl('patch', 'sa', 'kc', '--type=json', '-p', '[{"op":"add","path":"/metadata/labels/tier","value":"fe"}]').status, 0);
      assert.equal(kubectl('patch', 'sa', 'kc', '--type=merge', '-p', '{"automountServiceAccountToken":false}').status, 0);
      assert.equal(kubectl('patch', 'sa', 'kc', '--type=strategic', '-p', '{"secrets":[{"name":"s1"}]}').status, 0);
      const got = JSON.parse(kubectl('get', 'sa', 'kc', '-o', 'json').stdout);
      assert.deepEqual(got.metadata.labels, { app: 'web', tier: 'fe' });
      assert.equal(got.metadata.annotations.note, 'hi');
      assert.equal(got.automountServiceAccountToken, false);
      assert.deepEqual(got.secrets, [{ name: 's1' }]);
    });

    it('kubectl apply -f twice with a changed file (client-side apply)', (t) => {
      if (!kubectlAvailable(t)) return;
      const dir = mkdtempSync(join(tmpdir(), 'orch-apply-'));
      const file = join(dir, 'sa.yaml');
      writeFileSync(file, `apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: csa\n  labels: {a: "1", b: "1"}\nsecrets: [{name: s1}, {name: s2}]\n`);
      assert.equal(kubectl('apply', '-f', file).status, 0);
      writeFileSync(file, `apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: csa\n  labels: {a: "2"}\nsecrets: [{name: s2}, {name: s3}]\n`);
      const second = kubectl('apply', '-f', file);
      assert.equal(second.status, 0, second.stderr);
      const got = JSON.parse(kubectl('get', 'sa', 'csa', '-o', 'json').stdout);
      assert.deepEqual(got.metadata.labels, { a: '2' });
      assert.deepEqual(got.secrets.map((s: { name: string }) => s.name).sort(), ['s2', 's3']);
    });

    it('kubectl apply --server-side by two managers: conflict, then --force-conflicts', (t) => {
      if (!kubectlAvailable(t)) return;
      const dir = mkdtempSync(join(tmpdir(), 'orch-ssa-'));
      const file = (owner: string) => { const f = join(dir, `${owner}.yaml`); writeFileSync(f, `apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: kssa\n  labels: {owner: ${owner}}\n`); return f; };
      assert.equal(kubectl('apply', '--server-side', '--field-manager=one', '-f', file('one')).status, 0);
      const conflict = kubectl('apply', '--server-side', '--field-manager=two', '-f', file('two'));
      assert.notEqual(conflict.status, 0);
      assert.match(conflict.stderr, /Apply failed with 1 conflict: conflict with "one": \.metadata\.labels\.owner/);
      assert.equal(kubectl('apply', '--server-side', '--field-manager=two', '--force-conflicts', '-f', file('two')).status, 0);
      assert.equal(JSON.parse(kubectl('get', 'sa', 'kssa', '-o', 'json').stdout).metadata.labels.owner, 'two');
    });

    it('kubectl diff: nothing after apply or server-side apply, the change after an edit', (t) => {
      if (!kubectlAvailable(t)) return;
      const dir = mkdtempSync(join(tmpdir(), 'orch-diff-'));
      const file = (name: string, data: string) => {
        const f = join(dir, `${name}.yaml`);
        writeFileSync(f, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  labels: {app: web}\ndata: {k: ${data}}\n`);
        return f;
      };
      assert.equal(kubectl('apply', '-f', file('diff-csa', 'v')).status, 0);
      const same = kubectl('diff', '-f', file('diff-csa', 'v'));
      assert.equal(same.status, 0, `no difference after kubectl apply: ${same.stdout}${same.stderr}`);
      const changed = kubectl('diff', '-f', file('diff-csa', 'w'));
      assert.equal(changed.status, 1, changed.stderr);
      assert.match(changed.stdout, /^-\s+k: v$/m);
      assert.match(changed.stdout, /^\+\s+k: w$/m);
      // the client-side dry run kubectl diff sends after a server-side apply patches
      // `metadata.annotations: {}` (the last-applied annotation taken out): Go's omitempty drops it
      assert.equal(kubectl('apply', '--server-side', '-f', file('diff-ssa', 'v')).status, 0);
      const afterSsa = kubectl('diff', '-f', file('diff-ssa', 'v'));
      assert.equal(afterSsa.status, 0, `no difference after kubectl apply --server-side: ${afterSsa.stdout}${afterSsa.stderr}`);
      assert.equal(kubectl('diff', '--server-side', '-f', file('diff-ssa', 'v')).status, 0);
    });

    it('kubectl explain and kubectl create -f with server-side field validation', (t) => {
      if (!kubectlAvailable(t)) return;
      const explain = kubectl('explain', 'sa.secrets');
      assert.equal(explain.status, 0, explain.stderr);
      assert.match(explain.stdout, /FIELD: secrets <\[\]ObjectReference>/);
      const dir = mkdtempSync(join(tmpdir(), 'orch-create-'));
      const bad = join(dir, 'bad.yaml');
      writeFileSync(bad, 'apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: strict}\nbogus: 1\n');
      const refused = kubectl('create', '-f', bad);
      assert.notEqual(refused.status, 0);
      assert.match(refused.stderr, /unknown field "bogus"/);
    });

    it('client-node patches with merge, strategic and JSON patch types', async () => {
      const kc = new KubeConfig();
      kc.loadFromFile(server.kubeconfig);
      const api = kc.makeApiClient(CoreV1Api);
      await createSA(server, ns, 'cn');
      await api.patchNamespacedServiceAccount({ name: 'cn', namespace: ns, body: { metadata: { labels: { via: 'merge' } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
      await api.patchNamespacedServiceAccount({ name: 'cn', namespace: ns, body: { secrets: [{ name: 'k1' }] } }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch));
      const final = await api.patchNamespacedServiceAccount({ name: 'cn', namespace: ns, body: [{ op: 'add', path: '/metadata/labels/json', value: 'yes' }] }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch));
      assert.deepEqual(final.metadata?.labels, { via: 'merge', json: 'yes' });
      assert.deepEqual(JSON.parse(JSON.stringify(final.secrets)), [{ name: 'k1' }]);
    });
  });

  describe('OpenAPI documents', () => {
    it('serves /openapi/v2 and the /openapi/v3 index with hashed, immutable documents', async () => {
      const v2 = await request(server, '/openapi/v2');
      assert.equal(v2.status, 200);
      assert.equal(v2.json.swagger, '2.0');
      const secrets = v2.json.definitions['io.orch.api.core.v1.ServiceAccount'].properties.secrets;
      assert.equal(secrets['x-orch-patch-merge-key'], 'name');
      assert.equal(secrets['x-orch-list-type'], 'map');
      const index = await request(server, '/openapi/v3');
      const url = index.json.paths['api/v1'].serverRelativeURL as string;
      assert.match(url, /^\/openapi\/v3\/api\/v1\?hash=[0-9A-F]{128}$/);
      const doc = await request(server, url);
      assert.equal(doc.status, 200);
      assert.equal(doc.headers['cache-control'], 'public, immutable');
      const etag = String(doc.headers.etag);
      assert.equal((await request(server, '/openapi/v3/api/v1', { headers: { 'if-none-match': etag } })).status, 304);
      // kube-openapi's computeETag over the bytes served: fmt.Sprintf("%X", sha512.Sum512(json))
      for (const [key, entry] of Object.entries(index.json.paths as Record<string, { serverRelativeURL: string }>)) {
        const served = await request(server, `/openapi/v3/${key}`);
        const hash = createHash('sha512').update(Buffer.from(served.body, 'utf8')).digest('hex').toUpperCase();
        assert.equal(entry.serverRelativeURL, `/openapi/v3/${key}?hash=${hash}`, key);
        assert.equal(served.headers.etag, `"${hash}"`, key);
      }
      const stale = await request(server, '/openapi/v3/api/v1?hash=00');
      assert.equal(stale.status, 301);
      assert.equal(stale.headers.location, url);
      assert.ok(doc.json.components.schemas['io.orch.api.core.v1.ServiceAccount']);
      assert.ok((await request(server, '/openapi/v3/apis/events.orch.io/v1')).json.paths['/apis/events.orch.io/v1/namespaces/{namespace}/events']);
    });
  });
});
