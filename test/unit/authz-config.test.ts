/**
 * AuthorizationConfiguration loading and validation, match conditions, the webhook's review
 * spec, and the union's error aggregation: unit tests and properties over arbitrary input.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { UnionAuthorizer, type Attributes, type Authorizer } from '../../src/auth/authz/authorizer.js';
import { parseAuthorizationConfiguration } from '../../src/auth/authz/config/authorization-config.js';
import { validateAuthorizationConfiguration } from '../../src/auth/authz/config/validation.js';
import { MatchConditions } from '../../src/auth/authz/webhook/match-conditions.js';
import { reviewSpec } from '../../src/auth/authz/webhook/webhook-authorizer.js';
import { aggregateFieldErrors } from '../../src/status/status-error.js';

const header = 'apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthorizationConfiguration\n';

const attributes = (over: Partial<Attributes> = {}): Attributes => ({
  user: { name: 'jane', groups: ['dev', 'system:authenticated'], uid: 'u-1', extra: { scopes: ['a'] } },
  verb: 'list', isResourceRequest: true, path: '/api/v1/namespaces/ns/configmaps', namespace: 'ns', apiGroup: '',
  apiVersion: 'v1', resource: 'configmaps', subresource: '', name: '', ...over,
});

describe('AuthorizationConfiguration files', () => {
  it('reads both group names in every version, with Kubernetes\' defaults', () => {
    for (const apiVersion of ['apiserver.config.k8s.io/v1', 'apiserver.config.orch.io/v1beta1', 'apiserver.config.k8s.io/v1alpha1']) {
      const config = parseAuthorizationConfiguration(`apiVersion: ${apiVersion}\nkind: AuthorizationConfiguration\nauthorizers:
- type: Webhook
  name: w
  webhook: {timeout: 2s, subjectAccessReviewVersion: v1, failurePolicy: Deny, connectionInfo: {type: InClusterConfig}}
- {type: RBAC, name: rbac}
`);
      assert.equal(config.authorizers.length, 2);
      const w = config.authorizers[0].webhook;
      assert.ok(w);
      assert.equal(w.timeoutMs, 2000);
      assert.equal(w.authorizedTtlMs, 300_000);
      assert.equal(w.unauthorizedTtlMs, 30_000);
      assert.equal(w.cacheAuthorizedRequests, true);
      assert.equal(config.authorizers[1].webhook, undefined);
    }
  });

  it('validates a good configuration without errors and compiles its conditions', async () => {
    const config = parseAuthorizationConfiguration(`${header}authorizers:
- type: Webhook
  name: first
  webhook:
    timeout: 30s
    subjectAccessReviewVersion: v1beta1
    matchConditionSubjectAccessReviewVersion: v1
    failurePolicy: NoOpinion
    connectionInfo: {type: InClusterConfig}
    matchConditions: [{expression: "request.user != 'root'"}]
- {type: Node, name: node}
- {type: RBAC, name: rbac}
`);
    const validated = await validateAuthorizationConfiguration(config);
    assert.deepEqual(validated.errors, []);
    assert.ok(validated.matchConditions.get('first'));
  });

  it('names names: required, duplicate, and not a DNS subdomain', async () => {
    const config = parseAuthorizationConfiguration(`${header}authorizers:\n- {type: RBAC}\n- {type: Node, name: Bad_Name}\n- {type: AlwaysAllow, name: Bad_Name}\n`);
    const message = aggregateFieldErrors((await validateAuthorizationConfiguration(config)).errors);
    assert.match(message, /authorizers\[0\]\.name: Required value/);
    assert.match(message, /authorizers\[1\]\.name: Invalid value: "Bad_Name": authorizer name is invalid: a lowercase RFC 1123 subdomain/);
    assert.match(message, /authorizers\[2\]\.name: Duplicate value: "Bad_Name"/);
  });

  it('never throws anything but an Error with a message on arbitrary input (property)', async () => {
    await fc.assert(fc.asyncProperty(fc.oneof(fc.jsonValue(), fc.record({
      apiVersion: fc.constant('apiserver.config.k8s.io/v1'),
      kind: fc.constant('AuthorizationConfiguration'),
      authorizers: fc.array(fc.record({
        type: fc.oneof(fc.constantFrom('Webhook', 'RBAC', 'Node', 'ABAC', 'AlwaysAllow'), fc.string()),
        name: fc.string(),
        webhook: fc.option(fc.dictionary(fc.constantFrom('timeout', 'failurePolicy', 'subjectAccessReviewVersion', 'matchConditions', 'connectionInfo', 'authorizedTTL'),
          fc.oneof(fc.string(), fc.integer(), fc.array(fc.record({ expression: fc.string() })), fc.jsonValue())), { nil: undefined }),
      }, { requiredKeys: [] }), { maxLength: 4 }),
    })), async (value) => {
      try {
        const config = parseAuthorizationConfiguration(JSON.stringify(value));
        const validated = await validateAuthorizationConfiguration(config);
        for (const e of validated.errors) assert.ok(e.field.startsWith('authorizers'), e.field);
      } catch (err) {
        assert.ok(err instanceof Error && err.message.length > 0, String(err));
      }
    }), { numRuns: 300 });
  });
});

describe('match conditions', () => {
  it('match when every condition holds; one false skips even beside errors', async () => {
    const { conditions, errors } = await MatchConditions.compile([
      "'dev' in request.groups",
      "request.resourceAttributes.resource == 'configmaps'",
    ], 'm');
    assert.deepEqual(errors, []);
    assert.ok(conditions);
    assert.deepEqual(conditions.evaluate(reviewSpec(attributes())), { matches: true });
    assert.deepEqual(conditions.evaluate(reviewSpec(attributes({ resource: 'secrets' }))), { matches: false });
    // a non-resource request has no resourceAttributes: the second condition errors, the first (false) decides
    assert.deepEqual(conditions.evaluate(reviewSpec(attributes({ isResourceRequest: false, user: { name: 'x', groups: ['ops'] } }))), { matches: false });
    // an absent field is an error, as in Kubernetes (guard with has())
    assert.match(conditions.evaluate(reviewSpec(attributes({ user: { name: 'x', groups: [] } }))).error ?? '', /'dev' in request\.groups' resulted in error/);
    const failing = conditions.evaluate(reviewSpec(attributes({ isResourceRequest: false })));
    assert.equal(failing.matches, false);
    assert.match(failing.error ?? '', /^cel evaluation error: expression 'request\.resourceAttributes\.resource == 'configmaps'' resulted in error/);
  });

  it('refuses a non-boolean result when evaluated', async () => {
    const { conditions } = await MatchConditions.compile(['request.user'], 'm');
    assert.match(conditions?.evaluate(reviewSpec(attributes())).error ?? '', /eval result type should be bool but got string/);
  });

  it('reports empty, duplicate and uncompilable expressions by index', async () => {
    const { errors } = await MatchConditions.compile(['', 'true', 'true', 'request.('], 'w.matchConditions');
    assert.deepEqual(errors.map((e) => `${e.field} ${e.type}`), [
      'w.matchConditions[0].expression FieldValueRequired',
      'w.matchConditions[2].expression FieldValueDuplicate',
      'w.matchConditions[3].expression FieldValueInvalid',
    ]);
  });
});

describe('the webhook\'s review spec', () => {
  it('carries the user and the resource attributes, leaving empty ones out', () => {
    assert.deepEqual(reviewSpec(attributes({ name: 'cm', subresource: '' })), {
      resourceAttributes: { namespace: 'ns', verb: 'list', version: 'v1', resource: 'configmaps', name: 'cm' },
      user: 'jane', groups: ['dev', 'system:authenticated'], extra: { scopes: ['a'] }, uid: 'u-1',
    });
    assert.deepEqual(reviewSpec(attributes({ isResourceRequest: false, verb: 'get', path: '/healthz', user: { name: 'system:anonymous', groups: [] } })), {
      nonResourceAttributes: { path: '/healthz', verb: 'get' }, user: 'system:anonymous',
    });
  });
});

describe('the union of authorizers', () => {
  const mode = (name: string, decision: 'Allow' | 'Deny' | 'NoOpinion', error?: string): Authorizer => ({
    name, authorize: () => ({ decision, reason: `${name} says so`, ...(error ? { error } : {}) }),
  });

  it('lets a later Allow win over an earlier failure, and aggregates failures as Kubernetes prints them', async () => {
    assert.equal((await new UnionAuthorizer([mode('a', 'NoOpinion', 'down'), mode('b', 'Allow')]).authorize(attributes())).decision, 'Allow');
    const one = await new UnionAuthorizer([mode('a', 'NoOpinion', 'down'), mode('b', 'NoOpinion')]).authorize(attributes());
    assert.deepEqual(one, { decision: 'NoOpinion', reason: 'a says so\nb says so', error: 'down' });
    const two = await new UnionAuthorizer([mode('a', 'NoOpinion', 'down'), mode('b', 'NoOpinion', 'gone')]).authorize(attributes());
    assert.equal(two.error, '[down, gone]');
    const denied = await new UnionAuthorizer([mode('a', 'Deny', 'fail closed'), mode('b', 'Allow')]).authorize(attributes());
    assert.deepEqual(denied, { decision: 'Deny', reason: 'a says so', error: 'fail closed' });
  });
});
