import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { secretKind } from '../../src/api/core/secret.js';
import {
  aggregatedDiscovery,
  aggregatedDiscoveryMediaType,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  discoveryEtag,
} from '../../src/api/discovery.js';
import { eventKind } from '../../src/api/events/event.js';
import type { KindDeclaration } from '../../src/api/kind.js';
import { withKubernetesAliases } from '../../src/api/registry/alias.js';
import { ApiRegistry } from '../../src/api/registry/api-registry.js';
import { builtinKinds } from '../../src/api/registry/builtin.js';

const registry = new ApiRegistry(builtinKinds);
/** as the server registers them by default: with Kubernetes' group names beside ours */
const withAliases = new ApiRegistry(withKubernetesAliases(builtinKinds));

/** Same values and the same key order: clients byte-compare discovery fixtures and hash them. */
function assertJson(actual: unknown, expected: unknown): void {
  assert.deepStrictEqual(actual, expected);
  assert.equal(JSON.stringify(actual), JSON.stringify(expected));
}

const allVerbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const namespaceVerbs = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];
const eventsGroupVersion = { groupVersion: 'events.orch.io/v1', version: 'v1' };
const authGroupVersion = { groupVersion: 'authentication.orch.io/v1', version: 'v1' };
const coordinationGroupVersion = { groupVersion: 'coordination.orch.io/v1', version: 'v1' };
const apiextensionsGroupVersion = { groupVersion: 'apiextensions.orch.io/v1', version: 'v1' };
const authzGroupVersion = { groupVersion: 'authorization.orch.io/v1', version: 'v1' };
const rbacGroupVersion = { groupVersion: 'rbac.authorization.orch.io/v1', version: 'v1' };
const flowcontrolGroupVersion = { groupVersion: 'flowcontrol.apiserver.orch.io/v1', version: 'v1' };

describe('legacy discovery', () => {
  it('GET /api lists v1 and the server address, without apiVersion', () => {
    assertJson(apiVersions('10.0.0.1:6443'), {
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '10.0.0.1:6443' }],
    });
  });

  it('GET /apis lists the named groups only', () => {
    assertJson(apiGroupList(registry), {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: [
        { name: 'apiextensions.orch.io', versions: [apiextensionsGroupVersion], preferredVersion: apiextensionsGroupVersion },
        { name: 'authentication.orch.io', versions: [authGroupVersion], preferredVersion: authGroupVersion },
        { name: 'authorization.orch.io', versions: [authzGroupVersion], preferredVersion: authzGroupVersion },
        { name: 'coordination.orch.io', versions: [coordinationGroupVersion], preferredVersion: coordinationGroupVersion },
        { name: 'events.orch.io', versions: [eventsGroupVersion], preferredVersion: eventsGroupVersion },
        { name: 'flowcontrol.apiserver.orch.io', versions: [flowcontrolGroupVersion], preferredVersion: flowcontrolGroupVersion },
        { name: 'rbac.authorization.orch.io', versions: [rbacGroupVersion], preferredVersion: rbacGroupVersion },
      ],
    });
  });

  it('GET /apis/<group> answers served named groups only', () => {
    assertJson(apiGroup(registry, 'events.orch.io'), {
      kind: 'APIGroup',
      apiVersion: 'v1',
      name: 'events.orch.io',
      versions: [eventsGroupVersion],
      preferredVersion: eventsGroupVersion,
    });
    assert.equal(apiGroup(registry, ''), undefined);
    assert.equal(apiGroup(registry, 'apps'), undefined);
  });

  it('GET /api/v1 lists resources and subresources by path, unversioned, with Kubernetes\' storage version hashes', () => {
    assertJson(apiResourceList(registry, '', 'v1'), {
      kind: 'APIResourceList',
      groupVersion: 'v1',
      resources: [
        {
          name: 'configmaps', singularName: 'configmap', namespaced: true, kind: 'ConfigMap',
          verbs: allVerbs, shortNames: ['cm'], storageVersionHash: 'qFsyl6wFWjQ=',
        },
        // a view of the events.orch.io Events, hashed as the core Event Kubernetes stores
        {
          name: 'events', singularName: 'event', namespaced: true, kind: 'Event',
          verbs: allVerbs, shortNames: ['ev'], storageVersionHash: 'r2yiGXH7wu8=',
        },
        {
          name: 'namespaces', singularName: 'namespace', namespaced: false, kind: 'Namespace',
          verbs: namespaceVerbs, shortNames: ['ns'], storageVersionHash: 'Q3oi5N2YM8M=',
        },
        { name: 'namespaces/finalize', singularName: '', namespaced: false, kind: 'Namespace', verbs: ['update'] },
        { name: 'namespaces/status', singularName: '', namespaced: false, kind: 'Namespace', verbs: ['get', 'patch', 'update'] },
        // no shortNames: an empty list is omitted
        { name: 'secrets', singularName: 'secret', namespaced: true, kind: 'Secret', verbs: allVerbs, storageVersionHash: 'S6u1pOWzb84=' },
        {
          name: 'serviceaccounts', singularName: 'serviceaccount', namespaced: true, kind: 'ServiceAccount',
          verbs: allVerbs, shortNames: ['sa'], storageVersionHash: 'pbx9ZvyFpBE=',
        },
        // a subresource of another group-version-kind names it, as Kubernetes lists serviceaccounts/token
        {
          name: 'serviceaccounts/token', singularName: '', namespaced: true,
          group: 'authentication.orch.io', version: 'v1', kind: 'TokenRequest', verbs: ['create'],
        },
      ],
    });
  });

  it('lists create-only kinds that are never stored without a storage version hash', () => {
    for (const group of ['authentication.orch.io', 'authentication.k8s.io']) {
      assertJson(apiResourceList(withAliases, group, 'v1'), {
        kind: 'APIResourceList',
        apiVersion: 'v1',
        groupVersion: `${group}/v1`,
        resources: [
          { name: 'selfsubjectreviews', singularName: 'selfsubjectreview', namespaced: false, kind: 'SelfSubjectReview', verbs: ['create'] },
          { name: 'tokenreviews', singularName: 'tokenreview', namespaced: false, kind: 'TokenReview', verbs: ['create'] },
        ],
      });
    }
  });

  it('GET /apis/<group>/<version> carries apiVersion v1', () => {
    assertJson(apiResourceList(registry, 'events.orch.io', 'v1'), {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: 'events.orch.io/v1',
      resources: [{
        name: 'events', singularName: 'event', namespaced: true, kind: 'Event',
        // sha256("events.orch.io/v1/Event")[:8], base64
        verbs: allVerbs, shortNames: ['ev'], storageVersionHash: 'kzclftpbu10=',
      }],
    });
  });

  it('answers undefined for a group-version not served', () => {
    assert.equal(apiResourceList(registry, '', 'v2'), undefined);
    assert.equal(apiResourceList(registry, 'events.orch.io', 'v1beta1'), undefined);
    assert.equal(apiResourceList(registry, 'apps', 'v1'), undefined);
  });

  it('sorts verbs and writes categories after shortNames', () => {
    const custom: KindDeclaration = { ...secretKind, verbs: ['watch', 'list', 'get'], shortNames: ['s'], categories: ['all'] };
    assertJson(apiResourceList(new ApiRegistry([custom]), '', 'v1')?.resources, [{
      name: 'secrets', singularName: 'secret', namespaced: true, kind: 'Secret',
      verbs: ['get', 'list', 'watch'], shortNames: ['s'], categories: ['all'], storageVersionHash: 'S6u1pOWzb84=',
    }]);
  });
});

describe('aggregated discovery', () => {
  it('names its media type in the orch group', () => {
    assert.equal(aggregatedDiscoveryMediaType, 'application/json;g=apidiscovery.orch.io;v=v2;as=APIGroupDiscoveryList');
  });

  it('serves the core group alone at /api, with a nameless group', () => {
    const namespace = { group: '', version: '', kind: 'Namespace' };
    assertJson(aggregatedDiscovery(registry, 'api'), {
      kind: 'APIGroupDiscoveryList',
      apiVersion: 'apidiscovery.orch.io/v2',
      metadata: {},
      items: [{
        metadata: { creationTimestamp: null },
        versions: [{
          version: 'v1',
          resources: [
            {
              resource: 'configmaps', responseKind: { group: '', version: '', kind: 'ConfigMap' }, scope: 'Namespaced',
              singularResource: 'configmap', verbs: allVerbs, shortNames: ['cm'],
            },
            {
              resource: 'events', responseKind: { group: '', version: '', kind: 'Event' }, scope: 'Namespaced',
              singularResource: 'event', verbs: allVerbs, shortNames: ['ev'],
            },
            {
              resource: 'namespaces', responseKind: namespace, scope: 'Cluster', singularResource: 'namespace',
              verbs: namespaceVerbs, shortNames: ['ns'],
              subresources: [
                { subresource: 'finalize', responseKind: namespace, verbs: ['update'] },
                { subresource: 'status', responseKind: namespace, verbs: ['get', 'patch', 'update'] },
              ],
            },
            {
              resource: 'secrets', responseKind: { group: '', version: '', kind: 'Secret' }, scope: 'Namespaced',
              singularResource: 'secret', verbs: allVerbs,
            },
            {
              resource: 'serviceaccounts', responseKind: { group: '', version: '', kind: 'ServiceAccount' }, scope: 'Namespaced',
              singularResource: 'serviceaccount', verbs: allVerbs, shortNames: ['sa'],
              subresources: [
                { subresource: 'token', responseKind: { group: 'authentication.orch.io', version: 'v1', kind: 'TokenRequest' }, verbs: ['create'] },
              ],
            },
          ],
          freshness: 'Current',
        }],
      }],
    });
  });

  it('serves every named group at /apis', () => {
    assertJson(aggregatedDiscovery(registry, 'apis'), {
      kind: 'APIGroupDiscoveryList',
      apiVersion: 'apidiscovery.orch.io/v2',
      metadata: {},
      items: [{
        metadata: { name: 'apiextensions.orch.io', creationTimestamp: null },
        versions: [{
          version: 'v1',
          resources: [{
            resource: 'customresourcedefinitions', responseKind: { group: '', version: '', kind: 'CustomResourceDefinition' }, scope: 'Cluster',
            singularResource: 'customresourcedefinition', verbs: allVerbs, shortNames: ['crd', 'crds'], categories: ['api-extensions'],
            subresources: [{ subresource: 'status', responseKind: { group: '', version: '', kind: 'CustomResourceDefinition' }, verbs: ['get', 'patch', 'update'] }],
          }],
          freshness: 'Current',
        }],
      }, ...['authentication.orch.io'].map((name) => ({
        metadata: { name, creationTimestamp: null },
        versions: [{
          version: 'v1',
          resources: [
            {
              resource: 'selfsubjectreviews', responseKind: { group: '', version: '', kind: 'SelfSubjectReview' }, scope: 'Cluster',
              singularResource: 'selfsubjectreview', verbs: ['create'],
            },
            {
              resource: 'tokenreviews', responseKind: { group: '', version: '', kind: 'TokenReview' }, scope: 'Cluster',
              singularResource: 'tokenreview', verbs: ['create'],
            },
          ],
          freshness: 'Current',
        }],
      })), {
        metadata: { name: 'authorization.orch.io', creationTimestamp: null },
        versions: [{
          version: 'v1',
          resources: [
            { resource: 'localsubjectaccessreviews', responseKind: { group: '', version: '', kind: 'LocalSubjectAccessReview' }, scope: 'Namespaced', singularResource: 'localsubjectaccessreview', verbs: ['create'] },
            { resource: 'selfsubjectaccessreviews', responseKind: { group: '', version: '', kind: 'SelfSubjectAccessReview' }, scope: 'Cluster', singularResource: 'selfsubjectaccessreview', verbs: ['create'] },
            { resource: 'selfsubjectrulesreviews', responseKind: { group: '', version: '', kind: 'SelfSubjectRulesReview' }, scope: 'Cluster', singularResource: 'selfsubjectrulesreview', verbs: ['create'] },
            { resource: 'subjectaccessreviews', responseKind: { group: '', version: '', kind: 'SubjectAccessReview' }, scope: 'Cluster', singularResource: 'subjectaccessreview', verbs: ['create'] },
          ],
          freshness: 'Current',
        }],
      }, {
        metadata: { name: 'coordination.orch.io', creationTimestamp: null },
        versions: [{
          version: 'v1',
          resources: [{
            resource: 'leases', responseKind: { group: '', version: '', kind: 'Lease' }, scope: 'Namespaced',
            singularResource: 'lease', verbs: allVerbs,
          }],
          freshness: 'Current',
        }],
      }, {
        metadata: { name: 'events.orch.io', creationTimestamp: null },
        versions: [{
          version: 'v1',
          resources: [{
            // Kubernetes leaves responseKind's group and version empty for a resource's own kind
            resource: 'events', responseKind: { group: '', version: '', kind: 'Event' }, scope: 'Namespaced',
            singularResource: 'event', verbs: allVerbs, shortNames: ['ev'],
          }],
          freshness: 'Current',
        }],
      }, {
        metadata: { name: 'flowcontrol.apiserver.orch.io', creationTimestamp: null },
        versions: [{
          version: 'v1',
          resources: ['FlowSchema', 'PriorityLevelConfiguration'].map((kind) => ({
            resource: `${kind.toLowerCase()}s`, responseKind: { group: '', version: '', kind }, scope: 'Cluster',
            singularResource: kind.toLowerCase(), verbs: allVerbs,
            subresources: [{ subresource: 'status', responseKind: { group: '', version: '', kind }, verbs: ['get', 'patch', 'update'] }],
          })),
          freshness: 'Current',
        }],
      }, {
        metadata: { name: 'rbac.authorization.orch.io', creationTimestamp: null },
        versions: [{
          version: 'v1',
          resources: [
            { resource: 'clusterrolebindings', responseKind: { group: '', version: '', kind: 'ClusterRoleBinding' }, scope: 'Cluster', singularResource: 'clusterrolebinding', verbs: allVerbs },
            { resource: 'clusterroles', responseKind: { group: '', version: '', kind: 'ClusterRole' }, scope: 'Cluster', singularResource: 'clusterrole', verbs: allVerbs },
            { resource: 'rolebindings', responseKind: { group: '', version: '', kind: 'RoleBinding' }, scope: 'Namespaced', singularResource: 'rolebinding', verbs: allVerbs },
            { resource: 'roles', responseKind: { group: '', version: '', kind: 'Role' }, scope: 'Namespaced', singularResource: 'role', verbs: allVerbs },
          ],
          freshness: 'Current',
        }],
      }],
    });
  });

  it('does not depend on the order kinds are declared in', () => {
    const reversed = new ApiRegistry([...builtinKinds].reverse());
    for (const root of ['api', 'apis'] as const) {
      assertJson(aggregatedDiscovery(reversed, root), aggregatedDiscovery(registry, root));
    }
    assertJson(apiResourceList(reversed, '', 'v1'), apiResourceList(registry, '', 'v1'));
  });

  it('refuses a subresource it has no verbs for', () => {
    const scaled: KindDeclaration = { ...secretKind, subresources: { resize: (submitted) => submitted } };
    assert.throws(() => aggregatedDiscovery(new ApiRegistry([scaled]), 'api'), /no discovery verbs declared for subresource "resize"/);
  });
});

describe('discoveryEtag', () => {
  it('is a quoted upper-case SHA-512, stable across builds of the same kinds', () => {
    const etag = discoveryEtag(aggregatedDiscovery(registry, 'api'));
    assert.match(etag, /^"[0-9A-F]{128}"$/);
    assert.equal(discoveryEtag(aggregatedDiscovery(new ApiRegistry(builtinKinds), 'api')), etag);
    assert.equal(discoveryEtag(aggregatedDiscovery(new ApiRegistry([...builtinKinds].reverse()), 'api')), etag);
  });

  it('hashes the list as Kubernetes does, before kind and apiVersion are stamped', () => {
    const doc = aggregatedDiscovery(registry, 'apis');
    const { kind, apiVersion, ...body } = doc;
    assert.equal(kind, 'APIGroupDiscoveryList');
    assert.equal(apiVersion, 'apidiscovery.orch.io/v2');
    assert.equal(discoveryEtag(doc), discoveryEtag(body));
  });

  it('changes when the set of kinds changes', () => {
    const withoutEvents = new ApiRegistry(builtinKinds.filter((k) => k !== eventKind));
    const withoutSecrets = new ApiRegistry(builtinKinds.filter((k) => k !== secretKind));
    assert.notEqual(discoveryEtag(aggregatedDiscovery(withoutEvents, 'apis')), discoveryEtag(aggregatedDiscovery(registry, 'apis')));
    assert.notEqual(discoveryEtag(aggregatedDiscovery(withoutSecrets, 'api')), discoveryEtag(aggregatedDiscovery(registry, 'api')));
    // the core document does not change when only a named group does
    assert.equal(discoveryEtag(aggregatedDiscovery(withoutEvents, 'api')), discoveryEtag(aggregatedDiscovery(registry, 'api')));
  });
});
