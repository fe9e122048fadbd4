/** The ABAC mode: a policy file of JSON lines, its matching rules, and files that refuse to start. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { userFor } from '../support/certs.js';
import { mainScript, request, startServer, type TestServer } from '../support/server.js';

const dir = mkdtempSync(join(tmpdir(), 'orch-abac-'));
const policy = (spec: object) => JSON.stringify({ apiVersion: 'abac.authorization.kubernetes.io/v1beta1', kind: 'Policy', spec });

function writePolicies(name: string, lines: string[]): string {
  const path = join(dir, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

describe('authorization with --authorization-mode ABAC', () => {
  let server: TestServer;
  before(async () => {
    const file = writePolicies('policy.jsonl', [
      '# alice reads config maps in team-a; the dev group may do anything with events anywhere',
      policy({ user: 'alice', namespace: 'team-a', resource: 'configmaps', apiGroup: '', readonly: true }),
      policy({ group: 'dev', namespace: '*', resource: 'events', apiGroup: '*' }),
      '',
      policy({ group: 'system:authenticated', readonly: true, nonResourcePath: '/version' }),
      policy({ group: 'system:authenticated', namespace: '*', apiGroup: 'authorization.k8s.io', resource: 'selfsubjectrulesreviews' }),
      // v0: no subject means every authenticated user, no resource all resources, readonly
      JSON.stringify({ user: 'bob', readonly: true }),
    ]);
    server = await startServer({ args: ['--authorization-mode', 'ABAC', '--authorization-policy-file', file] });
  });
  after(async () => { await server?.dispose(); });

  it('allows what a policy matches and answers others with Kubernetes\' 403 and "No policy matched."', async () => {
    const alice = userFor(server, 'alice');
    assert.equal((await request(server, '/api/v1/namespaces/team-a/configmaps', { credentials: alice })).status, 200);
    const write = await request(server, '/api/v1/namespaces/team-a/configmaps', { method: 'POST', credentials: alice, body: { metadata: { name: 'x' } } });
    assert.equal(write.status, 403);
    assert.equal(write.json.message, 'configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "team-a": No policy matched.');
    assert.equal((await request(server, '/api/v1/namespaces/default/configmaps', { credentials: alice })).status, 403);
    assert.equal((await request(server, '/version', { credentials: alice })).status, 200);
    assert.equal((await request(server, '/apis', { credentials: alice })).status, 403);
    const dev = userFor(server, 'dave', ['dev']);
    assert.equal((await request(server, '/apis/events.orch.io/v1/namespaces/default/events', { credentials: dev })).status, 200);
    const bob = userFor(server, 'bob');
    assert.equal((await request(server, '/api/v1/namespaces', { credentials: bob })).status, 200);
    assert.equal((await request(server, '/api/v1/namespaces', { method: 'POST', credentials: bob, body: { metadata: { name: 'b' } } })).status, 403);
  });

  it('lists the matching policies as rules in a SelfSubjectRulesReview', async () => {
    const res = await request(server, '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      method: 'POST', credentials: userFor(server, 'alice'),
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: 'team-a' } },
    });
    assert.equal(res.status, 201, res.body);
    assert.deepEqual(res.json.status.resourceRules, [
      { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['configmaps'] },
      { verbs: ['*'], apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectrulesreviews'] },
    ]);
    assert.deepEqual(res.json.status.nonResourceRules, [{ verbs: ['get', 'list', 'watch'], nonResourceURLs: ['/version'] }]);
  });
});

describe('ABAC configuration errors refuse to start', () => {
  const run = (args: string[]) => spawnSync(process.execPath, [mainScript, '--data-dir', join(dir, 'data'), '--secure-port', '1', ...args], { encoding: 'utf8', timeout: 60_000 });

  it('names the file, line and problem of a malformed policy file', () => {
    const file = writePolicies('bad.jsonl', [policy({ user: 'a', resource: '*' }), '{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"readonly": "yes"}}']);
    const r = run(['--authorization-mode', 'ABAC', '--authorization-policy-file', file]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, new RegExp(`error reading policy file ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}, line 2: .*: spec\\.readonly: must be a boolean`));
    const broken = writePolicies('broken.jsonl', ['{not json']);
    assert.match(run(['--authorization-mode', 'ABAC', '--authorization-policy-file', broken]).stderr, /broken\.jsonl, line 1: \{not json: couldn't get version\/kind; json parse error: invalid character 'n' looking for beginning of object key string/);
    assert.match(run(['--authorization-mode', 'ABAC', '--authorization-policy-file', join(dir, 'missing')]).stderr, /error reading policy file .*missing: ENOENT/);
  });

  it('needs the file with ABAC, and ABAC with the file', () => {
    assert.match(run(['--authorization-mode', 'ABAC']).stderr, /authorization-mode ABAC's authorization policy file not passed/);
    assert.match(run(['--authorization-policy-file', join(dir, 'policy.jsonl')]).stderr, /cannot specify --authorization-policy-file without mode ABAC/);
  });
});
