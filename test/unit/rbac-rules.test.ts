/** RBAC rule matching and the escalation check's coverage, as Kubernetes' rbac and validation packages decide them. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Attributes } from '../../src/auth/authz/authorizer.js';
import { compactRules, compactString, uncoveredRules } from '../../src/auth/authz/rbac/covers.js';
import { compileRule, ruleAllows } from '../../src/auth/authz/rbac/rule.js';

const user = { name: 'jane', groups: [] };
const resource = (verb: string, apiGroup: string, res: string, extra: Partial<Attributes> = {}): Attributes => ({
  user, verb, isResourceRequest: true, path: '', namespace: 'ns', apiGroup, apiVersion: 'v1', resource: res, subresource: '', name: '', ...extra,
});
const path = (verb: string, p: string): Attributes => ({ ...resource(verb, '', ''), isResourceRequest: false, path: p });

describe('ruleAllows', () => {
  it('matches verbs, groups, resources and names, with wildcards', () => {
    const rule = compileRule({ verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] });
    assert.ok(ruleAllows(resource('get', '', 'configmaps', { name: 'a' }), rule));
    assert.ok(!ruleAllows(resource('get', '', 'configmaps', { name: 'b' }), rule));
    assert.ok(!ruleAllows(resource('list', '', 'configmaps'), rule), 'a named rule never covers a list');
    assert.ok(!ruleAllows(resource('get', 'apps', 'configmaps', { name: 'a' }), rule));
    assert.ok(ruleAllows(resource('delete', 'x.io', 'things'), compileRule({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] })));
  });

  it('matches subresources exactly or through */<subresource>', () => {
    const attrs = resource('update', '', 'namespaces', { subresource: 'finalize' });
    assert.ok(!ruleAllows(attrs, compileRule({ verbs: ['update'], apiGroups: [''], resources: ['namespaces'] })));
    assert.ok(ruleAllows(attrs, compileRule({ verbs: ['update'], apiGroups: [''], resources: ['namespaces/finalize'] })));
    assert.ok(ruleAllows(attrs, compileRule({ verbs: ['update'], apiGroups: [''], resources: ['*/finalize'] })));
  });

  it('treats either name of a group as the same group', () => {
    const rule = compileRule({ verbs: ['get'], apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'] });
    assert.ok(ruleAllows(resource('get', 'rbac.authorization.orch.io', 'roles'), rule));
    assert.ok(ruleAllows(resource('get', 'rbac.authorization.k8s.io', 'roles'), rule));
  });

  it('matches non-resource URLs exactly or by a trailing *', () => {
    const rule = compileRule({ verbs: ['get'], nonResourceURLs: ['/healthz', '/apis/*'] });
    assert.ok(ruleAllows(path('get', '/healthz'), rule));
    assert.ok(!ruleAllows(path('get', '/healthz/etcd'), rule));
    assert.ok(ruleAllows(path('get', '/apis/x/v1'), rule));
    assert.ok(!ruleAllows(path('post', '/healthz'), rule));
    assert.ok(!ruleAllows(resource('get', '', 'healthz'), rule));
  });
});

describe('uncoveredRules', () => {
  it('breaks granted rules into atoms that some owned rule must cover', () => {
    const owned = [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['configmaps', '*/status'] }, { verbs: ['get'], nonResourceURLs: ['/api/*'] }];
    assert.deepEqual(uncoveredRules(owned, [{ verbs: ['get'], apiGroups: [''], resources: ['configmaps', 'pods/status'] }, { verbs: ['get'], nonResourceURLs: ['/api/v1'] }]), []);
    assert.deepEqual(uncoveredRules(owned, [{ verbs: ['get', 'delete'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }]),
      [{ verbs: ['delete'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }]);
    assert.deepEqual(uncoveredRules([{ verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['a'] }],
      [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }]).length, 1, 'a named rule does not cover all names');
  });

  it('prints missing rules as Kubernetes\' CompactString, merging verbs per group and resource', () => {
    const missing = uncoveredRules([], [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['secrets'] }, { verbs: ['get'], nonResourceURLs: ['/x'] }]);
    assert.deepEqual(compactRules(missing).map(compactString), ['{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}', '{NonResourceURLs:["/x"], Verbs:["get"]}']);
  });
});
