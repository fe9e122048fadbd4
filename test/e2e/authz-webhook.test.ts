/**
 * The Webhook authorization mode (legacy flags) and `--authorization-config`: a
 * SubjectAccessReview webhook served over HTTPS by the test, its cache, failure behaviour,
 * match conditions, reloading, kubectl against it, and configurations that refuse to start.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { userFor } from '../support/certs.js';
import { kubectlFor, kubectlMissingReason } from '../support/kubectl.js';
import { ReviewWebhook, type Review } from '../support/review-webhook.js';
import { mainScript, request, startServer, type TestServer } from '../support/server.js';

const dir = mkdtempSync(join(tmpdir(), 'orch-authz-webhook-'));
const skipKubectl = kubectlMissingReason();

/** alice may read config maps, bob is denied them outright, everything else gets no opinion */
function answer(review: Review): Review['status'] {
  const spec = review.spec;
  const r = spec.resourceAttributes;
  if (spec.user === 'alice' && r?.resource === 'configmaps' && ['get', 'list', 'watch'].includes(r.verb)) return { allowed: true };
  if (spec.user === 'bob' && r?.resource === 'configmaps') return { allowed: false, denied: true, reason: 'bob is banned' };
  return { allowed: false, reason: 'no opinion on this' };
}

const asked = (webhook: ReviewWebhook, user: string) => webhook.requests.filter((r) => r.spec.user === user).length;

describe('--authorization-mode Webhook,RBAC', () => {
  let server: TestServer;
  let webhook: ReviewWebhook;
  before(async () => {
    webhook = await new ReviewWebhook('authz-webhook', answer).start();
    const kubeconfig = join(dir, 'webhook.kubeconfig');
    webhook.writeKubeconfig(kubeconfig);
    server = await startServer({ args: ['--authorization-mode', 'Webhook,RBAC', '--authorization-webhook-config-file', kubeconfig] });
  });
  after(async () => { await server?.dispose(); await webhook?.stop(); });

  it('asks the webhook with a v1beta1 SubjectAccessReview and follows its Allow', async () => {
    const alice = userFor(server, 'alice', ['dev']);
    assert.equal((await request(server, '/api/v1/namespaces/default/configmaps', { credentials: alice })).status, 200);
    const review = webhook.requests.find((r) => r.spec.user === 'alice');
    assert.equal(review.apiVersion, 'authorization.k8s.io/v1beta1');
    assert.equal(review.kind, 'SubjectAccessReview');
    // v1beta1 names the groups `group`
    assert.deepEqual(review.spec.group, ['dev', 'system:authenticated']);
    assert.equal(review.spec.groups, undefined);
    assert.deepEqual(review.spec.resourceAttributes, { namespace: 'default', verb: 'list', version: 'v1', resource: 'configmaps' });
  });

  it('answers a repeated request from its cache, without asking again', async () => {
    const alice = userFor(server, 'alice', ['dev']);
    const before = asked(webhook, 'alice');
    assert.equal((await request(server, '/api/v1/namespaces/default/configmaps', { credentials: alice })).status, 200);
    assert.equal(asked(webhook, 'alice'), before);
    assert.equal((await request(server, '/api/v1/namespaces/default/configmaps/x', { credentials: alice })).status, 404);
    assert.equal(asked(webhook, 'alice'), before + 1, 'another verb/name is another review');
  });

  it('forbids on a Deny with the webhook\'s reason, without asking RBAC', async () => {
    const res = await request(server, '/api/v1/namespaces/default/configmaps', { credentials: userFor(server, 'bob') });
    assert.equal(res.status, 403);
    assert.equal(res.json.message, 'configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the namespace "default": bob is banned');
  });

  it('passes on a NoOpinion to RBAC, which a binding then satisfies', async () => {
    const carol = userFor(server, 'carol');
    const denied = await request(server, '/api/v1/namespaces/default/secrets', { credentials: carol });
    assert.equal(denied.status, 403);
    assert.match(denied.json.message, /cannot list resource "secrets" .*: no opinion on this/);
    assert.equal((await request(server, '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', {
      method: 'POST',
      body: { metadata: { name: 'carol-view' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' }, subjects: [{ kind: 'User', name: 'carol', apiGroup: 'rbac.authorization.k8s.io' }] },
    })).status, 201);
    assert.equal((await request(server, '/api/v1/namespaces/default/secrets', { credentials: carol })).status, 200);
  });

  it('answers 500 while the webhook fails and no later mode allows; system:masters is unaffected', async () => {
    webhook.failures = [500, 500, 500, 500, 500];
    const res = await request(server, '/api/v1/namespaces/default/pods', { credentials: userFor(server, 'dave') });
    assert.equal(res.status, 500);
    assert.equal(res.json.reason, 'InternalError');
    assert.match(res.json.message, /^Internal error occurred: .*responded with 500/);
    assert.equal(webhook.failures.length, 0, 'retried five times');
    assert.equal((await request(server, '/api/v1/namespaces/default/configmaps')).status, 200);
  });

  it('kubectl auth can-i reads the webhook\'s decisions through SelfSubjectAccessReview', { skip: skipKubectl }, async () => {
    const kubectl = kubectlFor(server, mkdtempSync(join(dir, 'kubectl-')));
    assert.equal((await kubectl.ok(['auth', 'can-i', 'list', 'configmaps', '--as', 'alice', '-n', 'default'])).trim(), 'yes');
    const bob = await kubectl.run(['auth', 'can-i', 'list', 'configmaps', '--as', 'bob', '-n', 'default']);
    assert.equal(bob.code, 1);
    assert.match(bob.stdout, /^no/);
  });
});

function writeConfig(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const webhookAuthorizer = (kubeconfig: string, extra = '') => `
- type: Webhook
  name: team-a-webhook
  webhook:
    timeout: 3s
    subjectAccessReviewVersion: v1
    matchConditionSubjectAccessReviewVersion: v1
    failurePolicy: Deny
    connectionInfo:
      type: KubeConfigFile
      kubeConfigFile: ${kubeconfig}
    matchConditions:
    - expression: "'team-a' in request.groups"
    - expression: "!has(request.nonResourceAttributes)"${extra}`;

describe('--authorization-config', () => {
  let server: TestServer;
  let webhook: ReviewWebhook;
  let configFile: string;
  let kubeconfig: string;
  before(async () => {
    webhook = await new ReviewWebhook('authz-config', (review) => ({ allowed: review.spec.user === 'erin', reason: 'team-a rules' })).start();
    kubeconfig = join(dir, 'config-webhook.kubeconfig');
    webhook.writeKubeconfig(kubeconfig);
    configFile = writeConfig('authz.yaml', `apiVersion: apiserver.config.k8s.io/v1
kind: AuthorizationConfiguration
authorizers:${webhookAuthorizer(kubeconfig)}
- type: RBAC
  name: rbac
`);
    server = await startServer({ args: ['--authorization-config', configFile] });
  });
  after(async () => { await server?.dispose(); await webhook?.stop(); });

  it('asks the webhook only when every match condition holds, in v1', async () => {
    const erin = userFor(server, 'erin', ['team-a']);
    assert.equal((await request(server, '/api/v1/namespaces/default/configmaps', { credentials: erin })).status, 200);
    const review = webhook.requests.find((r) => r.spec.user === 'erin');
    assert.equal(review.apiVersion, 'authorization.k8s.io/v1');
    assert.deepEqual(review.spec.groups, ['team-a', 'system:authenticated']);
    // outside team-a: the webhook is skipped and RBAC forbids
    const frank = await request(server, '/api/v1/namespaces/default/configmaps', { credentials: userFor(server, 'frank') });
    assert.equal(frank.status, 403);
    assert.equal(asked(webhook, 'frank'), 0);
    // a non-resource request of team-a fails the second condition
    assert.equal((await request(server, '/version', { credentials: erin })).status, 200, 'RBAC lets every user read /version');
    assert.equal(webhook.requests.filter((r) => r.spec.nonResourceAttributes).length, 0);
  });

  it('tells the webhook what a list narrows itself to, and a review\'s selectors, as parsed requirements', async () => {
    const erin = userFor(server, 'erin', ['team-a']);
    const query = new URLSearchParams({ fieldSelector: 'metadata.name=a,metadata.namespace!=b', labelSelector: 'tier in (web,api),!gone,size>3' });
    assert.equal((await request(server, `/api/v1/namespaces/default/configmaps?${query}`, { credentials: erin })).status, 200);
    const listed = webhook.requests.filter((r) => r.spec.user === 'erin' && r.spec.resourceAttributes?.fieldSelector).at(-1);
    assert.deepEqual(listed?.spec.resourceAttributes, {
      namespace: 'default', verb: 'list', version: 'v1', resource: 'configmaps',
      // fields: `=` is In and `!=` NotIn, in the parser's order; labels sorted by key, values as a set (sorted), `gt` left out (no authorization/v1 form)
      fieldSelector: { requirements: [{ key: 'metadata.name', operator: 'In', values: ['a'] }, { key: 'metadata.namespace', operator: 'NotIn', values: ['b'] }] },
      labelSelector: { requirements: [{ key: 'gone', operator: 'DoesNotExist' }, { key: 'tier', operator: 'In', values: ['api', 'web'] }] },
    });
    // a selector that does not parse narrows nothing (the list itself then answers 400)
    const before = webhook.requests.length;
    await request(server, '/api/v1/namespaces/default/configmaps?labelSelector=%3D%3D%3D', { credentials: userFor(server, 'erin-2', ['team-a']) });
    const unparsed = webhook.requests.slice(before).find((r) => r.spec.user === 'erin-2');
    assert.equal(unparsed?.spec.resourceAttributes?.labelSelector, undefined);

    // a review's raw selector reaches the webhook parsed
    const review = await request(server, '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      method: 'POST', body: {
        apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview',
        spec: { user: 'erin', groups: ['team-a'], resourceAttributes: { verb: 'list', resource: 'secrets', labelSelector: { rawSelector: 'app=x' } } },
      },
    });
    assert.equal(review.status, 201, review.body);
    const asked = webhook.requests.filter((r) => r.spec.resourceAttributes?.resource === 'secrets' && r.spec.resourceAttributes?.labelSelector).at(-1);
    assert.deepEqual(asked?.spec.resourceAttributes?.labelSelector, { requirements: [{ key: 'app', operator: 'In', values: ['x'] }] });
    assert.equal(asked?.spec.resourceAttributes?.version, '*', 'a review naming no version asks about every version');
  });

  it('with failurePolicy Deny, a webhook that cannot be reached decides: 500, and RBAC is not asked', async () => {
    webhook.failures = [503, 503, 503, 503, 503];
    const res = await request(server, '/api/v1/namespaces/default/secrets', { credentials: userFor(server, 'gina', ['team-a']) });
    assert.equal(res.status, 500);
    assert.match(res.json.message, /^Internal error occurred: /);
  });

  it('follows the file as it changes, and keeps the chain in force when a change is invalid', async () => {
    const harry = userFor(server, 'harry');
    assert.equal((await request(server, '/api/v1/namespaces/default/configmaps', { credentials: harry })).status, 403);
    writeConfig('authz.yaml', 'apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthorizationConfiguration\nauthorizers:\n- {type: AlwaysAllow, name: allow}\n');
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      await sleep(100);
      status = (await request(server, '/api/v1/namespaces/default/configmaps', { credentials: harry })).status;
    }
    assert.equal(status, 200, 'the new chain allows');
    writeConfig('authz.yaml', 'apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthorizationConfiguration\nauthorizers:\n- {type: AlwaysDeny}\n');
    await sleep(2_500); // two polls of the file: an invalid change must not take effect
    assert.equal((await request(server, '/api/v1/namespaces/default/configmaps', { credentials: harry })).status, 200);
  });
});

describe('authorization configurations that refuse to start', () => {
  const run = (args: string[]) => spawnSync(process.execPath, [mainScript, '--data-dir', join(dir, 'data'), '--secure-port', '1', ...args], { encoding: 'utf8', timeout: 60_000 });
  const refuses = (text: string, message: RegExp) => {
    const file = writeConfig(`bad-${Math.random().toString(36).slice(2)}.yaml`, text);
    const r = run(['--authorization-config', file]);
    assert.equal(r.status, 1, r.stderr);
    assert.ok(r.stderr.includes(file), `names the file: ${r.stderr}`);
    assert.match(r.stderr, message);
  };
  const header = 'apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\n';

  it('names the field at fault, with Kubernetes\' messages', () => {
    refuses(`${header}authorizers: []\n`, /authorizers: Required value: at least one authorization mode must be defined/);
    refuses(`${header}authorizers:\n- {type: RBAC, name: a}\n- {type: RBAC, name: b}\n`, /authorizers\[1\]\.type: Duplicate value: "RBAC"/);
    refuses(`${header}authorizers:\n- {type: Magic, name: a}\n`, /authorizers\[0\]\.type: Unsupported value: "Magic": supported values: "ABAC", "AlwaysAllow", "AlwaysDeny", "Node", "RBAC", "Webhook"/);
    refuses(`${header}authorizers:\n- {type: Webhook, name: w}\n`, /authorizers\[0\]\.webhook: Required value: required when type=Webhook/);
    refuses(`${header}authorizers:\n- type: Webhook\n  name: w\n  webhook: {timeout: 31s, subjectAccessReviewVersion: v1, failurePolicy: Deny, connectionInfo: {type: KubeConfigFile, kubeConfigFile: relative.kubeconfig}}\n`,
      /authorizers\[0\]\.webhook\.timeout: Invalid value: "31s": must be > 0s and <= 30s, authorizers\[0\]\.webhook\.connectionInfo\.kubeConfigFile: Invalid value: "relative\.kubeconfig": must be an absolute path/);
    refuses(`${header}authorizers:\n- type: Webhook\n  name: w\n  webhook: {subjectAccessReviewVersion: v2, failurePolicy: Maybe, connectionInfo: {type: InClusterConfig}}\n`,
      /authorizers\[0\]\.webhook\.timeout: Required value, authorizers\[0\]\.webhook\.subjectAccessReviewVersion: Unsupported value: "v2": supported values: "v1", "v1beta1", authorizers\[0\]\.webhook\.failurePolicy: Unsupported value: "Maybe"/);
  });

  it('refuses match conditions that do not compile, repeat, or are too many', () => {
    const kubeconfig = join(dir, 'webhook.kubeconfig');
    refuses(`${header}authorizers:${webhookAuthorizer(kubeconfig, '\n    - expression: "request.user =="')}\n`,
      /authorizers\[0\]\.webhook\.matchConditions\[2\]\.expression: Invalid value: "request\.user ==": compilation failed: ERROR/);
    refuses(`${header}authorizers:${webhookAuthorizer(kubeconfig, '\n    - expression: "secrets.size() > 0"')}\n`,
      /matchConditions\[2\]\.expression: Invalid value: "secrets\.size\(\) > 0": compilation failed: ERROR: <input>: undeclared reference to 'secrets'/);
    refuses(`${header}authorizers:${webhookAuthorizer(kubeconfig, '\n    - expression: "\'team-a\' in request.groups"')}\n`,
      /matchConditions\[2\]\.expression: Duplicate value: "'team-a' in request\.groups"/);
    const many = Array.from({ length: 63 }, (_, i) => `\n    - expression: "request.user != 'u${i}'"`).join('');
    refuses(`${header}authorizers:${webhookAuthorizer(kubeconfig, many)}\n`, /authorizers\[0\]\.webhook\.matchConditions: Too many/);
  });

  it('refuses unknown fields and malformed files', () => {
    refuses(`${header}authorizers:\n- {type: RBAC, name: rbac, color: blue}\n`, /strict decoding error: unknown field "authorizers\[0\]\.color"/);
    refuses('kind: AuthorizationConfiguration\napiVersion: apiserver.config.k8s.io/v9\n', /no kind "AuthorizationConfiguration" is registered for version "apiserver.config.k8s.io\/v9"/);
    refuses('authorizers: [\n', /yaml parse error/);
    refuses('- a list\n', /Object 'Kind' is missing in the configuration/);
  });

  it('is exclusive with the legacy flags', () => {
    const file = writeConfig('ok.yaml', `${header}authorizers:\n- {type: RBAC, name: rbac}\n`);
    const r = run(['--authorization-config', file, '--authorization-mode', 'RBAC']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /--authorization-config can not be specified when --authorization-mode or --authorization-webhook-\* flags are defined/);
  });
});
