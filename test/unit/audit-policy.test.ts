/** The audit policy: loading and validation (messages naming file, rule and field), and rule matching. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadPolicyFile, parsePolicy } from '../../src/audit/policy.js';
import { PolicyEvaluator } from '../../src/audit/policy-evaluator.js';
import { requestInfo } from '../../src/http/request-info.js';
import type { UserInfo } from '../../src/auth/user.js';

const dir = mkdtempSync(join(tmpdir(), 'audit-policy-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function policyFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('loading an audit policy', () => {
  it('accepts audit.orch.io/v1 and Kubernetes\' audit.k8s.io/v1, in YAML or JSON', () => {
    const yaml = 'kind: Policy\nrules:\n- level: Metadata\n';
    assert.equal(parsePolicy(`apiVersion: audit.orch.io/v1\n${yaml}`).rules[0].level, 'Metadata');
    assert.equal(parsePolicy(`apiVersion: audit.k8s.io/v1\n${yaml}`).rules[0].level, 'Metadata');
    assert.equal(parsePolicy(JSON.stringify({ apiVersion: 'audit.k8s.io/v1', kind: 'Policy', rules: [{ level: 'None' }] })).rules[0].level, 'None');
  });

  it('loads Kubernetes\' documented example policy unchanged', () => {
    // the example of kubernetes.io/docs/tasks/debug/debug-cluster/audit/ (trimmed of comments)
    const policy = parsePolicy(`apiVersion: audit.k8s.io/v1
kind: Policy
omitStages:
  - "RequestReceived"
rules:
  - level: RequestResponse
    resources:
    - group: ""
      resources: ["pods"]
  - level: Metadata
    resources:
    - group: ""
      resources: ["pods/log", "pods/status"]
  - level: None
    resources:
    - group: ""
      resources: ["configmaps"]
      resourceNames: ["controller-leader"]
  - level: None
    users: ["system:kube-proxy"]
    verbs: ["watch"]
    resources:
    - group: ""
      resources: ["endpoints", "services"]
  - level: None
    userGroups: ["system:authenticated"]
    nonResourceURLs:
    - "/api*"
    - "/version"
  - level: Request
    resources:
    - group: ""
      resources: ["configmaps"]
    namespaces: ["kube-system"]
  - level: Metadata
    resources:
    - group: ""
      resources: ["secrets", "configmaps"]
  - level: Request
    resources:
    - group: ""
    - group: "extensions"
  - level: Metadata
    omitStages:
      - "RequestReceived"
`);
    assert.equal(policy.rules.length, 9);
    assert.deepEqual(policy.omitStages, ['RequestReceived']);
  });

  it('refuses a malformed policy naming the file, the rule\'s index and the field', () => {
    const path = policyFile('bad-level.yaml', 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n- level: Everything\n');
    assert.throws(() => loadPolicyFile(path), {
      message: `loading audit policy file: rules[1].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse": from file ${path}`,
    });
  });

  it('reports every problem, each with its field path', () => {
    const text = `apiVersion: audit.orch.io/v1
kind: Policy
rules:
- users: [a]
- level: Request
  omitStages: [Sometime]
  resources:
  - group: apps/v1
  - group: ""
    resourceNames: [x]
- level: None
  nonResourceURLs: ["healthz", "/a*b"]
- level: None
  nonResourceURLs: ["/x"]
  namespaces: [""]
- level: None
  verb: [get]
`;
    assert.throws(() => parsePolicy(text), (err: Error) => {
      for (const part of [
        'rules[0].level: Required value',
        'rules[1].omitStages[0]: Invalid value: "Sometime": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic',
        'rules[1].resources[0].group: Invalid value: "apps/v1"',
        'rules[1].resources[1].resourceNames: Invalid value: []string{"x"}: using resourceNames requires at least one resource',
        'rules[2].nonResourceURLs[0]: Invalid value: "healthz": non-resource URL rules must begin with a \'/\' character',
        'rules[2].nonResourceURLs[1]: Invalid value: "/a*b": non-resource URL wildcards \'*\' must be the final character of the rule',
        'rules[3].nonResourceURLs: Invalid value: []string{"/x"}: rules cannot apply to both regular resources and non-resource URLs',
        'rules[4].verb: Unsupported value: "verb"',
      ]) assert.ok(err.message.includes(part), `missing ${JSON.stringify(part)} in ${err.message}`);
      return true;
    });
  });

  it('refuses other group versions, other kinds, and a policy without rules', () => {
    assert.throws(() => parsePolicy('apiVersion: audit.k8s.io/v1beta2\nkind: Policy\nrules: [{level: None}]\n'), /unknown group version field audit.k8s.io\/v1beta2 in policy/);
    assert.throws(() => parsePolicy('kind: Policy\nrules: [{level: None}]\n'), /Object 'apiVersion' is missing/);
    assert.throws(() => parsePolicy('apiVersion: audit.k8s.io/v1\nkind: Pod\nrules: [{level: None}]\n'), /kind "Pod" is not Policy/);
    assert.throws(() => parsePolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n'), /loaded illegal policy with 0 rules/);
    assert.throws(() => loadPolicyFile(join(dir, 'missing.yaml')), /failed to read file path/);
  });
});

const admin: UserInfo = { name: 'admin', groups: ['system:masters', 'system:authenticated'] };
const jane: UserInfo = { name: 'jane', groups: ['dev', 'system:authenticated'] };

/** `user` null: authentication failed */
function levelOf(policyYaml: string, method: string, path: string, user: UserInfo | null = jane, query = '') {
  const evaluator = new PolicyEvaluator(parsePolicy(`apiVersion: audit.orch.io/v1\nkind: Policy\n${policyYaml}`));
  return evaluator.evaluate(requestInfo(method, path, new URLSearchParams(query)), user ?? undefined).level;
}

describe('matching audit policy rules', () => {
  it('takes the first matching rule; nothing matched is None', () => {
    const rules = 'rules:\n- level: Request\n  verbs: [create]\n- level: Metadata\n  verbs: [create, get]\n';
    assert.equal(levelOf(rules, 'POST', '/api/v1/namespaces/a/serviceaccounts'), 'Request');
    assert.equal(levelOf(rules, 'GET', '/api/v1/namespaces/a/serviceaccounts/x'), 'Metadata');
    assert.equal(levelOf(rules, 'DELETE', '/api/v1/namespaces/a/serviceaccounts/x'), 'None');
  });

  it('selects by users and by userGroups; a request without a user matches neither', () => {
    const rules = 'rules:\n- level: RequestResponse\n  users: [admin]\n- level: Request\n  userGroups: [dev]\n- level: Metadata\n';
    assert.equal(levelOf(rules, 'GET', '/api/v1/namespaces', admin), 'RequestResponse');
    assert.equal(levelOf(rules, 'GET', '/api/v1/namespaces', jane), 'Request');
    assert.equal(levelOf(rules, 'GET', '/api/v1/namespaces', null), 'Metadata');
  });

  it('selects by verb, the watch verb included', () => {
    const rules = 'rules:\n- level: None\n  verbs: [watch]\n- level: Metadata\n';
    assert.equal(levelOf(rules, 'GET', '/api/v1/namespaces', jane, 'watch=true'), 'None');
    assert.equal(levelOf(rules, 'GET', '/api/v1/namespaces'), 'Metadata');
  });

  it('selects resources by group, name, `*`, `resource/subresource`, `*/subresource` and `resource/*`', () => {
    const rules = `rules:
- level: RequestResponse
  resources: [{group: "", resources: [serviceaccounts], resourceNames: [special]}]
- level: Request
  resources: [{group: "", resources: [namespaces/status]}]
- level: Metadata
  resources: [{group: "", resources: ["*/finalize"]}]
- level: Request
  resources: [{group: "events.orch.io", resources: ["events/*"]}]
- level: Metadata
  resources: [{group: "", resources: [secrets]}]
- level: RequestResponse
  resources: [{group: "apps", resources: ["*"]}]
`;
    assert.equal(levelOf(rules, 'GET', '/api/v1/namespaces/a/serviceaccounts/special'), 'RequestResponse');
    assert.equal(levelOf(rules, 'GET', '/api/v1/namespaces/a/serviceaccounts/other'), 'None');
    assert.equal(levelOf(rules, 'PUT', '/api/v1/namespaces/a/status'), 'Request');
    assert.equal(levelOf(rules, 'GET', '/api/v1/namespaces/a'), 'None', 'namespaces/status does not select namespaces');
    assert.equal(levelOf(rules, 'PUT', '/api/v1/namespaces/a/finalize'), 'Metadata');
    assert.equal(levelOf(rules, 'GET', '/apis/events.orch.io/v1/namespaces/a/events'), 'Request', 'events/* selects events too');
    assert.equal(levelOf(rules, 'GET', '/apis/events.orch.io/v1/namespaces/a/events/e/status'), 'Request');
    assert.equal(levelOf(rules, 'GET', '/api/v1/namespaces/a/secrets/s'), 'Metadata');
    assert.equal(levelOf(rules, 'GET', '/api/v1/namespaces/a/secrets/s/status'), 'None', 'secrets does not select its subresources');
    assert.equal(levelOf(rules, 'GET', '/apis/apps/v1/namespaces/a/deployments/d/scale'), 'RequestResponse', '* selects subresources too');
  });

  it('selects namespaces, "" for cluster-scoped resources', () => {
    const rules = 'rules:\n- level: Request\n  namespaces: [""]\n- level: Metadata\n  namespaces: [kube-system]\n';
    assert.equal(levelOf(rules, 'GET', '/api/v1/namespaces'), 'Request');
    assert.equal(levelOf(rules, 'GET', '/api/v1/namespaces/kube-system/secrets'), 'Metadata');
    assert.equal(levelOf(rules, 'GET', '/api/v1/namespaces/other/secrets'), 'None');
    assert.equal(levelOf(rules, 'GET', '/healthz'), 'None', 'a namespace rule never matches a non-resource request');
  });

  it('selects non-resource URLs exactly, by `*` suffix, or all with `*`; never resource requests', () => {
    const rules = 'rules:\n- level: None\n  nonResourceURLs: [/healthz*, /version]\n- level: Metadata\n  nonResourceURLs: ["*"]\n- level: Request\n';
    assert.equal(levelOf(rules, 'GET', '/healthz'), 'None');
    assert.equal(levelOf(rules, 'GET', '/healthz/etcd'), 'None');
    assert.equal(levelOf(rules, 'GET', '/version'), 'None');
    assert.equal(levelOf(rules, 'GET', '/version/x'), 'Metadata');
    assert.equal(levelOf(rules, 'GET', '/openapi/v2'), 'Metadata');
    assert.equal(levelOf(rules, 'GET', '/api/v1/namespaces'), 'Request');
  });

  it('unions policy-wide omitStages with each rule\'s; omitManagedFields per rule overrides the policy', () => {
    const evaluator = new PolicyEvaluator(parsePolicy(`apiVersion: audit.orch.io/v1
kind: Policy
omitStages: [RequestReceived]
omitManagedFields: true
rules:
- level: Metadata
  verbs: [get]
  omitStages: [ResponseStarted]
  omitManagedFields: false
- level: Request
`));
    const get = evaluator.evaluate(requestInfo('GET', '/api/v1/namespaces/a', new URLSearchParams()), jane);
    assert.deepEqual([...get.omitStages].sort(), ['RequestReceived', 'ResponseStarted']);
    assert.equal(get.omitManagedFields, false);
    const create = evaluator.evaluate(requestInfo('POST', '/api/v1/namespaces', new URLSearchParams()), jane);
    assert.deepEqual([...create.omitStages], ['RequestReceived']);
    assert.equal(create.omitManagedFields, true);
  });
});
