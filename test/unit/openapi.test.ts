/**
 * The OpenAPI documents against what kube-apiserver 1.32 publishes (api/openapi-spec/swagger.json
 * and v3/*_openapi.json) and against what kubectl 1.32 reads from them: explain's GVK lookup, client-
 * side apply's patch metadata, the fieldValidation probe on PATCH operations.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';

import { secretKind } from '../../src/api/core/secret.js';
import {
  openApiHash, openApiV2, openApiV3Document, openApiV3GroupVersion, openApiV3Index,
} from '../../src/api/openapi/documents.js';
import { withKubernetesAliases } from '../../src/api/registry/alias.js';
import { ApiRegistry } from '../../src/api/registry/api-registry.js';
import { builtinKinds } from '../../src/api/registry/builtin.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Doc = any;

const registry = new ApiRegistry(builtinKinds);
const v2: Doc = openApiV2(registry);
const core: Doc = openApiV3GroupVersion(registry, '', 'v1');
const events: Doc = openApiV3GroupVersion(registry, 'events.orch.io', 'v1');

const meta = 'io.orch.apimachinery.pkg.apis.meta.v1';
const saName = 'io.orch.api.core.v1.ServiceAccount';
const saGvk = { group: '', kind: 'ServiceAccount', version: 'v1' };
const indexKeys = [
  'api', 'api/v1', 'apis', 'apis/apiextensions.orch.io', 'apis/apiextensions.orch.io/v1', 'apis/authentication.orch.io', 'apis/authentication.orch.io/v1',
  'apis/authorization.orch.io', 'apis/authorization.orch.io/v1', 'apis/coordination.orch.io', 'apis/coordination.orch.io/v1', 'apis/events.orch.io', 'apis/events.orch.io/v1',
  'apis/flowcontrol.apiserver.orch.io', 'apis/flowcontrol.apiserver.orch.io/v1',
  'apis/rbac.authorization.orch.io', 'apis/rbac.authorization.orch.io/v1',
];

/** Both spellings of an extension, which must agree (kubectl reads only the Kubernetes one). */
function ext(node: Doc, name: string): unknown {
  assert.deepEqual(node[`x-orch-${name}`], node[`x-kubernetes-${name}`], `x-orch-${name} and x-kubernetes-${name} differ`);
  return node[`x-kubernetes-${name}`];
}

function refsIn(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => refsIn(v, out));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref') out.push(v as string);
      else refsIn(v, out);
    }
  }
  return out;
}

function operations(doc: Doc): Array<{ path: string; method: string; op: Doc }> {
  return Object.entries(doc.paths as Record<string, Doc>).flatMap(([path, item]) => Object.entries(item)
    .filter(([method]) => method !== 'parameters').map(([method, op]) => ({ path, method, op })));
}

/** The operation-level parameter names (what kubectl's QueryParamVerifierV3 looks at). */
const opParams = (op: Doc): string[] => (op.parameters ?? []).map((p: Doc) => p.name);

describe('definitions (v2)', () => {
  it('names types by Go package, ours in place of k8s', () => {
    for (const name of [
      saName, `${saName}List`, 'io.orch.api.core.v1.Namespace', 'io.orch.api.core.v1.NamespaceList', 'io.orch.api.core.v1.Secret',
      'io.orch.api.core.v1.ObjectReference', 'io.orch.api.core.v1.LocalObjectReference',
      'io.orch.api.events.v1.Event', 'io.orch.api.events.v1.EventList', 'io.orch.api.events.v1.EventSeries',
      `${meta}.ObjectMeta`, `${meta}.ListMeta`, `${meta}.OwnerReference`, `${meta}.ManagedFieldsEntry`, `${meta}.Status`,
      `${meta}.StatusDetails`, `${meta}.StatusCause`, `${meta}.DeleteOptions`, `${meta}.Preconditions`, `${meta}.WatchEvent`,
      `${meta}.Patch`, `${meta}.Time`, `${meta}.MicroTime`, `${meta}.APIResourceList`, 'io.orch.apimachinery.pkg.runtime.RawExtension',
    ]) assert.ok(v2.definitions[name], `definition ${name}`);
    assert.equal(v2.swagger, '2.0');
    assert.deepEqual(v2.securityDefinitions.BearerToken, { description: 'Bearer Token authentication', in: 'header', name: 'authorization', type: 'apiKey' });
  });

  it('marks ServiceAccount.secrets as a map list merged on name, imagePullSecrets atomic', () => {
    const sa = v2.definitions[saName];
    const secrets = sa.properties.secrets;
    assert.equal(secrets.type, 'array');
    assert.deepEqual(secrets.items, { $ref: '#/definitions/io.orch.api.core.v1.ObjectReference' });
    assert.equal(ext(secrets, 'list-type'), 'map');
    assert.deepEqual(ext(secrets, 'list-map-keys'), ['name']);
    assert.equal(ext(secrets, 'patch-strategy'), 'merge');
    assert.equal(ext(secrets, 'patch-merge-key'), 'name');
    const pull = sa.properties.imagePullSecrets;
    assert.equal(ext(pull, 'list-type'), 'atomic');
    assert.equal(ext(pull, 'patch-strategy'), undefined);
    assert.equal(ext(v2.definitions['io.orch.api.core.v1.ObjectReference'], 'map-type'), 'atomic');
  });

  it('writes primitives as Kubernetes does: labels, times, bytes, integers', () => {
    const om = v2.definitions[`${meta}.ObjectMeta`].properties;
    assert.deepEqual(om.labels.additionalProperties, { type: 'string' }, 'v2 carries no defaults');
    assert.equal(om.labels.type, 'object');
    assert.deepEqual(om.creationTimestamp, { $ref: `#/definitions/${meta}.Time`, description: om.creationTimestamp.description });
    assert.equal(ext(om.finalizers, 'list-type'), 'set');
    assert.deepEqual(ext(om.ownerReferences, 'list-map-keys'), ['uid']);
    for (const time of ['Time', 'MicroTime']) {
      const { type, format } = v2.definitions[`${meta}.${time}`];
      assert.deepEqual({ type, format }, { type: 'string', format: 'date-time' }, time);
    }
    assert.deepEqual(v2.definitions['io.orch.api.core.v1.Secret'].properties.data.additionalProperties, { type: 'string', format: 'byte' });
    assert.equal(om.generation.format, 'int64');
    assert.equal(v2.definitions['io.orch.api.events.v1.Event'].properties.eventTime.$ref, `#/definitions/${meta}.MicroTime`);
  });

  it('carries group-version-kinds: kinds, lists, Status, and the options types in every group-version', () => {
    assert.deepEqual(ext(v2.definitions[saName], 'group-version-kind'), [saGvk]);
    assert.deepEqual(ext(v2.definitions[`${saName}List`], 'group-version-kind'), [{ group: '', kind: 'ServiceAccountList', version: 'v1' }]);
    assert.deepEqual(v2.definitions[`${saName}List`].required, ['items']);
    assert.deepEqual(ext(v2.definitions['io.orch.api.events.v1.Event'], 'group-version-kind'), [{ group: 'events.orch.io', kind: 'Event', version: 'v1' }]);
    assert.deepEqual(ext(v2.definitions[`${meta}.Status`], 'group-version-kind'), [{ group: '', kind: 'Status', version: 'v1' }]);
    for (const kind of ['DeleteOptions', 'WatchEvent']) {
      assert.deepEqual(ext(v2.definitions[`${meta}.${kind}`], 'group-version-kind'), [
        { group: '', kind, version: 'v1' }, { group: 'apiextensions.orch.io', kind, version: 'v1' }, { group: 'authentication.orch.io', kind, version: 'v1' },
        { group: 'authorization.orch.io', kind, version: 'v1' }, { group: 'coordination.orch.io', kind, version: 'v1' }, { group: 'events.orch.io', kind, version: 'v1' },
        { group: 'flowcontrol.apiserver.orch.io', kind, version: 'v1' },
        { group: 'rbac.authorization.orch.io', kind, version: 'v1' },
      ]);
    }
    assert.equal(ext(v2.definitions[`${meta}.ObjectMeta`], 'group-version-kind'), undefined);
  });

  it('lists the required fields of every type as kube-apiserver 1.32 does, and no others', () => {
    const expected: Record<string, string[] | undefined> = {
      [saName]: undefined, [`${saName}List`]: ['items'],
      'io.orch.api.core.v1.Namespace': undefined, 'io.orch.api.core.v1.NamespaceList': ['items'],
      'io.orch.api.core.v1.NamespaceSpec': undefined, 'io.orch.api.core.v1.NamespaceStatus': undefined,
      'io.orch.api.core.v1.NamespaceCondition': ['type', 'status'],
      'io.orch.api.core.v1.Secret': undefined, 'io.orch.api.core.v1.SecretList': ['items'],
      'io.orch.api.core.v1.ObjectReference': undefined, 'io.orch.api.core.v1.LocalObjectReference': undefined,
      'io.orch.api.core.v1.ConfigMap': undefined, 'io.orch.api.core.v1.ConfigMapList': ['items'],
      'io.orch.api.core.v1.Event': ['metadata', 'involvedObject'], 'io.orch.api.core.v1.EventList': ['items'],
      'io.orch.api.core.v1.EventSeries': undefined, 'io.orch.api.core.v1.EventSource': undefined,
      'io.orch.api.coordination.v1.Lease': undefined, 'io.orch.api.coordination.v1.LeaseList': ['items'],
      'io.orch.api.coordination.v1.LeaseSpec': undefined,
      'io.orch.api.events.v1.Event': ['eventTime'], 'io.orch.api.events.v1.EventList': ['items'],
      'io.orch.api.events.v1.EventSeries': ['count', 'lastObservedTime'],
      'io.orch.api.apiextensions.v1.CustomResourceDefinition': ['spec'], 'io.orch.api.apiextensions.v1.CustomResourceDefinitionList': ['items'],
      'io.orch.api.apiextensions.v1.CustomResourceDefinitionSpec': ['group', 'names', 'scope', 'versions'],
      'io.orch.api.apiextensions.v1.CustomResourceDefinitionNames': ['plural', 'kind'],
      'io.orch.api.apiextensions.v1.CustomResourceDefinitionVersion': ['name', 'served', 'storage'],
      'io.orch.api.apiextensions.v1.CustomResourceValidation': undefined, 'io.orch.api.apiextensions.v1.CustomResourceSubresources': undefined,
      'io.orch.api.apiextensions.v1.CustomResourceSubresourceStatus': undefined,
      'io.orch.api.apiextensions.v1.CustomResourceSubresourceScale': ['specReplicasPath', 'statusReplicasPath'],
      'io.orch.api.apiextensions.v1.CustomResourceColumnDefinition': ['name', 'type', 'jsonPath'],
      'io.orch.api.apiextensions.v1.SelectableField': ['jsonPath'],
      'io.orch.api.apiextensions.v1.CustomResourceConversion': ['strategy'], 'io.orch.api.apiextensions.v1.WebhookConversion': ['conversionReviewVersions'],
      'io.orch.api.apiextensions.v1.WebhookClientConfig': undefined, 'io.orch.api.apiextensions.v1.ServiceReference': ['namespace', 'name'],
      'io.orch.api.apiextensions.v1.CustomResourceDefinitionStatus': undefined,
      'io.orch.api.apiextensions.v1.CustomResourceDefinitionCondition': ['type', 'status'],
      'io.orch.api.authentication.v1.BoundObjectReference': undefined,
      'io.orch.api.authentication.v1.SelfSubjectReview': undefined, 'io.orch.api.authentication.v1.SelfSubjectReviewStatus': undefined,
      'io.orch.api.authentication.v1.TokenRequest': ['spec'], 'io.orch.api.authentication.v1.TokenRequestSpec': ['audiences'],
      'io.orch.api.authentication.v1.TokenRequestStatus': ['token', 'expirationTimestamp'],
      'io.orch.api.authentication.v1.TokenReview': ['spec'], 'io.orch.api.authentication.v1.TokenReviewSpec': undefined,
      'io.orch.api.authentication.v1.TokenReviewStatus': undefined, 'io.orch.api.authentication.v1.UserInfo': undefined,
      'io.orch.api.authorization.v1.LocalSubjectAccessReview': ['spec'], 'io.orch.api.authorization.v1.SelfSubjectAccessReview': ['spec'],
      'io.orch.api.authorization.v1.SelfSubjectRulesReview': ['spec'], 'io.orch.api.authorization.v1.SubjectAccessReview': ['spec'],
      'io.orch.api.authorization.v1.NonResourceAttributes': undefined, 'io.orch.api.authorization.v1.ResourceAttributes': undefined,
      'io.orch.api.authorization.v1.FieldSelectorAttributes': undefined, 'io.orch.api.authorization.v1.LabelSelectorAttributes': undefined,
      'io.orch.api.authorization.v1.NonResourceRule': ['verbs'], 'io.orch.api.authorization.v1.ResourceRule': ['verbs'],
      'io.orch.api.authorization.v1.SelfSubjectAccessReviewSpec': undefined, 'io.orch.api.authorization.v1.SelfSubjectRulesReviewSpec': undefined,
      'io.orch.api.authorization.v1.SubjectAccessReviewSpec': undefined, 'io.orch.api.authorization.v1.SubjectAccessReviewStatus': ['allowed'],
      'io.orch.api.authorization.v1.SubjectRulesReviewStatus': ['resourceRules', 'nonResourceRules', 'incomplete'],
      'io.orch.api.rbac.v1.Role': undefined, 'io.orch.api.rbac.v1.RoleList': ['items'],
      'io.orch.api.rbac.v1.ClusterRole': undefined, 'io.orch.api.rbac.v1.ClusterRoleList': ['items'],
      'io.orch.api.rbac.v1.RoleBinding': ['roleRef'], 'io.orch.api.rbac.v1.RoleBindingList': ['items'],
      'io.orch.api.rbac.v1.ClusterRoleBinding': ['roleRef'], 'io.orch.api.rbac.v1.ClusterRoleBindingList': ['items'],
      'io.orch.api.rbac.v1.PolicyRule': ['verbs'], 'io.orch.api.rbac.v1.AggregationRule': undefined,
      'io.orch.api.rbac.v1.Subject': ['kind', 'name'], 'io.orch.api.rbac.v1.RoleRef': ['apiGroup', 'kind', 'name'],
      'io.orch.api.flowcontrol.v1.FlowSchema': undefined, 'io.orch.api.flowcontrol.v1.FlowSchemaList': ['items'], 'io.orch.api.flowcontrol.v1.FlowSchemaSpec': ['priorityLevelConfiguration'],
      'io.orch.api.flowcontrol.v1.FlowSchemaStatus': undefined, 'io.orch.api.flowcontrol.v1.FlowSchemaCondition': undefined, 'io.orch.api.flowcontrol.v1.FlowDistinguisherMethod': ['type'],
      'io.orch.api.flowcontrol.v1.PriorityLevelConfigurationReference': ['name'], 'io.orch.api.flowcontrol.v1.PolicyRulesWithSubjects': ['subjects'], 'io.orch.api.flowcontrol.v1.Subject': ['kind'],
      'io.orch.api.flowcontrol.v1.UserSubject': ['name'], 'io.orch.api.flowcontrol.v1.GroupSubject': ['name'], 'io.orch.api.flowcontrol.v1.ServiceAccountSubject': ['namespace', 'name'],
      'io.orch.api.flowcontrol.v1.ResourcePolicyRule': ['verbs', 'apiGroups', 'resources'], 'io.orch.api.flowcontrol.v1.NonResourcePolicyRule': ['verbs', 'nonResourceURLs'],
      'io.orch.api.flowcontrol.v1.PriorityLevelConfiguration': undefined, 'io.orch.api.flowcontrol.v1.PriorityLevelConfigurationList': ['items'],
      'io.orch.api.flowcontrol.v1.PriorityLevelConfigurationSpec': ['type'], 'io.orch.api.flowcontrol.v1.PriorityLevelConfigurationStatus': undefined,
      'io.orch.api.flowcontrol.v1.PriorityLevelConfigurationCondition': undefined, 'io.orch.api.flowcontrol.v1.LimitedPriorityLevelConfiguration': undefined,
      'io.orch.api.flowcontrol.v1.ExemptPriorityLevelConfiguration': undefined, 'io.orch.api.flowcontrol.v1.LimitResponse': ['type'], 'io.orch.api.flowcontrol.v1.QueuingConfiguration': undefined,
      [`${meta}.ObjectMeta`]: undefined, [`${meta}.ListMeta`]: undefined, [`${meta}.ManagedFieldsEntry`]: undefined,
      [`${meta}.OwnerReference`]: ['apiVersion', 'kind', 'name', 'uid'],
      [`${meta}.LabelSelector`]: undefined, [`${meta}.LabelSelectorRequirement`]: ['key', 'operator'],
      [`${meta}.FieldSelectorRequirement`]: ['key', 'operator'],
      [`${meta}.Status`]: undefined, [`${meta}.StatusDetails`]: undefined, [`${meta}.StatusCause`]: undefined,
      [`${meta}.DeleteOptions`]: undefined, [`${meta}.Preconditions`]: undefined, [`${meta}.Patch`]: undefined,
      [`${meta}.WatchEvent`]: ['type', 'object'],
      [`${meta}.APIVersions`]: ['versions', 'serverAddressByClientCIDRs'],
      [`${meta}.APIGroupList`]: ['groups'], [`${meta}.APIGroup`]: ['name', 'versions'],
      [`${meta}.GroupVersionForDiscovery`]: ['groupVersion', 'version'],
      [`${meta}.ServerAddressByClientCIDR`]: ['clientCIDR', 'serverAddress'],
      [`${meta}.APIResourceList`]: ['groupVersion', 'resources'],
      [`${meta}.APIResource`]: ['name', 'singularName', 'namespaced', 'kind', 'verbs'],
      [`${meta}.Time`]: undefined, [`${meta}.MicroTime`]: undefined, 'io.orch.apimachinery.pkg.runtime.RawExtension': undefined,
    };
    assert.deepEqual(Object.keys(v2.definitions).sort(), Object.keys(expected).sort(), 'every definition is listed here');
    for (const [name, required] of Object.entries(expected)) {
      assert.deepEqual(v2.definitions[name].required, required, name);
      for (const field of required ?? []) assert.ok(v2.definitions[name].properties[field], `${name} requires a field it has: ${field}`);
    }
  });

  it('declares the catalog kinds as Kubernetes does: core Event and ConfigMap, coordination Lease', () => {
    const coreEvent = v2.definitions['io.orch.api.core.v1.Event'];
    assert.deepEqual(coreEvent.required, ['metadata', 'involvedObject']);
    assert.deepEqual(v2.definitions['io.orch.api.events.v1.Event'].required, ['eventTime']);
    assert.deepEqual(v2.definitions['io.orch.api.events.v1.EventSeries'].required, ['count', 'lastObservedTime']);
    assert.equal(v2.definitions['io.orch.api.core.v1.EventSeries'].required, undefined);
    assert.deepEqual(ext(coreEvent, 'group-version-kind'), [{ group: '', kind: 'Event', version: 'v1' }]);
    assert.equal(coreEvent.properties.involvedObject.$ref, '#/definitions/io.orch.api.core.v1.ObjectReference');
    assert.equal(coreEvent.properties.firstTimestamp.$ref, `#/definitions/${meta}.Time`);
    assert.equal(coreEvent.properties.eventTime.$ref, `#/definitions/${meta}.MicroTime`);
    // EventSource is core's, shared by the events group's deprecatedSource
    assert.equal(coreEvent.properties.source.$ref, '#/definitions/io.orch.api.core.v1.EventSource');
    assert.equal(v2.definitions['io.orch.api.events.v1.Event'].properties.deprecatedSource.$ref, '#/definitions/io.orch.api.core.v1.EventSource');
    const configMap = v2.definitions['io.orch.api.core.v1.ConfigMap'];
    assert.deepEqual(configMap.properties.binaryData.additionalProperties, { type: 'string', format: 'byte' });
    assert.deepEqual(configMap.properties.data.additionalProperties, { type: 'string' });
    assert.equal(configMap.properties.immutable.type, 'boolean');
    const spec = v2.definitions['io.orch.api.coordination.v1.LeaseSpec'];
    assert.deepEqual(Object.keys(spec.properties).sort(), ['acquireTime', 'holderIdentity', 'leaseDurationSeconds', 'leaseTransitions', 'preferredHolder', 'renewTime', 'strategy']);
    assert.equal(spec.properties.renewTime.$ref, `#/definitions/${meta}.MicroTime`);
    assert.equal(spec.properties.leaseDurationSeconds.format, 'int32');
    assert.deepEqual(ext(v2.definitions['io.orch.api.coordination.v1.Lease'], 'group-version-kind'), [{ group: 'coordination.orch.io', kind: 'Lease', version: 'v1' }]);
  });

  it('resolves every $ref', () => {
    const refs = refsIn(v2);
    assert.ok(refs.length > 100);
    for (const ref of refs) {
      assert.ok(ref.startsWith('#/definitions/'), ref);
      assert.ok(v2.definitions[ref.slice('#/definitions/'.length)], `dangling ${ref}`);
    }
  });
});

describe('paths and operations (v2)', () => {
  const op = (path: string, method: string): Doc => {
    const found = v2.paths[path]?.[method];
    assert.ok(found, `${method} ${path}`);
    return found;
  };

  it('serves every verb at the paths Kubernetes registers, with its operation ids', () => {
    const expected: Array<[string, string, string, string]> = [
      ['/api/v1/namespaces/{namespace}/serviceaccounts', 'get', 'listCoreV1NamespacedServiceAccount', 'list'],
      ['/api/v1/namespaces/{namespace}/serviceaccounts', 'post', 'createCoreV1NamespacedServiceAccount', 'post'],
      ['/api/v1/namespaces/{namespace}/serviceaccounts', 'delete', 'deleteCoreV1CollectionNamespacedServiceAccount', 'deletecollection'],
      ['/api/v1/namespaces/{namespace}/serviceaccounts/{name}', 'get', 'readCoreV1NamespacedServiceAccount', 'get'],
      ['/api/v1/namespaces/{namespace}/serviceaccounts/{name}', 'put', 'replaceCoreV1NamespacedServiceAccount', 'put'],
      ['/api/v1/namespaces/{namespace}/serviceaccounts/{name}', 'patch', 'patchCoreV1NamespacedServiceAccount', 'patch'],
      ['/api/v1/namespaces/{namespace}/serviceaccounts/{name}', 'delete', 'deleteCoreV1NamespacedServiceAccount', 'delete'],
      ['/api/v1/serviceaccounts', 'get', 'listCoreV1ServiceAccountForAllNamespaces', 'list'],
      ['/api/v1/watch/serviceaccounts', 'get', 'watchCoreV1ServiceAccountListForAllNamespaces', 'watchlist'],
      ['/api/v1/watch/namespaces/{namespace}/serviceaccounts', 'get', 'watchCoreV1NamespacedServiceAccountList', 'watchlist'],
      ['/api/v1/watch/namespaces/{namespace}/serviceaccounts/{name}', 'get', 'watchCoreV1NamespacedServiceAccount', 'watch'],
      ['/api/v1/namespaces', 'post', 'createCoreV1Namespace', 'post'],
      ['/api/v1/namespaces/{name}', 'delete', 'deleteCoreV1Namespace', 'delete'],
      ['/api/v1/watch/namespaces/{name}', 'get', 'watchCoreV1Namespace', 'watch'],
      ['/api/v1/namespaces/{name}/status', 'get', 'readCoreV1NamespaceStatus', 'get'],
      ['/api/v1/namespaces/{name}/status', 'patch', 'patchCoreV1NamespaceStatus', 'patch'],
      ['/api/v1/namespaces/{name}/finalize', 'put', 'replaceCoreV1NamespaceFinalize', 'put'],
      ['/apis/events.orch.io/v1/namespaces/{namespace}/events/{name}', 'get', 'readEventsV1NamespacedEvent', 'get'],
      ['/apis/events.orch.io/v1/events', 'get', 'listEventsV1EventForAllNamespaces', 'list'],
    ];
    for (const [path, method, id, action] of expected) {
      const o = op(path, method);
      assert.equal(o.operationId, id);
      assert.equal(ext(o, 'action'), action);
    }
    assert.deepEqual(ext(op('/api/v1/namespaces/{name}/finalize', 'put'), 'group-version-kind'), { group: '', kind: 'Namespace', version: 'v1' });
    assert.equal(op('/api/v1/namespaces/{namespace}/serviceaccounts', 'post').description, 'create a ServiceAccount');
    assert.equal(op('/apis/events.orch.io/v1/namespaces/{namespace}/events', 'post').description, 'create an Event');
    assert.equal(op('/api/v1/namespaces/{name}/status', 'put').description, 'replace status of the specified Namespace');
    assert.equal(op('/apis/', 'get').operationId, 'getAPIVersions');
    assert.equal(op('/apis/events.orch.io/', 'get').operationId, 'getEventsAPIGroup');
    assert.equal(op('/api/v1/', 'get').operationId, 'getCoreV1APIResources');
  });

  it('serves only the declared verbs: no deletecollection of namespaces, finalize is update only', () => {
    assert.equal(v2.paths['/api/v1/namespaces'].delete, undefined);
    assert.deepEqual(Object.keys(v2.paths['/api/v1/namespaces/{name}/finalize']).sort(), ['parameters', 'put']);
    assert.deepEqual(Object.keys(v2.paths['/api/v1/namespaces/{name}/status']).sort(), ['get', 'parameters', 'patch', 'put']);
  });

  it('has unique operation ids', () => {
    const ids = operations(v2).map(({ op: o }) => o.operationId);
    assert.equal(new Set(ids).size, ids.length);
  });

  it('takes fieldManager and fieldValidation on create, update and patch; force and the patch types on patch', () => {
    for (const [path, method] of [
      ['/api/v1/namespaces/{namespace}/serviceaccounts', 'post'],
      ['/api/v1/namespaces/{namespace}/serviceaccounts/{name}', 'put'],
      ['/api/v1/namespaces/{namespace}/serviceaccounts/{name}', 'patch'],
    ]) {
      const names = opParams(op(path, method));
      assert.ok(names.includes('fieldValidation') && names.includes('fieldManager') && names.includes('dryRun'), `${method} ${path}: ${names}`);
    }
    const patch = op('/api/v1/namespaces/{namespace}/serviceaccounts/{name}', 'patch');
    assert.deepEqual(opParams(patch), ['body', 'dryRun', 'fieldManager', 'fieldValidation', 'force']);
    assert.deepEqual(patch.parameters[0], { in: 'body', name: 'body', required: true, schema: { $ref: `#/definitions/${meta}.Patch` } });
    assert.deepEqual(patch.consumes, ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml']);
    assert.deepEqual(Object.keys(patch.responses), ['200', '201', '401']);
  });

  it('puts shared parameters on the path item, as kube-openapi does', () => {
    const item = v2.paths['/api/v1/namespaces/{namespace}/serviceaccounts/{name}'];
    assert.deepEqual(item.parameters.map((p: Doc) => p.name), ['name', 'namespace', 'pretty']);
    assert.deepEqual(item.parameters[0], { description: 'name of the ServiceAccount', in: 'path', name: 'name', required: true, type: 'string', uniqueItems: true });
    assert.equal(item.get.parameters, undefined);
    const watch = v2.paths['/api/v1/watch/namespaces/{namespace}/serviceaccounts'];
    assert.deepEqual(watch.parameters.map((p: Doc) => p.name), [
      'allowWatchBookmarks', 'continue', 'fieldSelector', 'labelSelector', 'limit', 'namespace', 'pretty',
      'resourceVersion', 'resourceVersionMatch', 'sendInitialEvents', 'timeoutSeconds', 'watch',
    ]);
    assert.deepEqual(opParams(op('/api/v1/namespaces/{namespace}/serviceaccounts', 'delete')), [
      'body', 'continue', 'dryRun', 'fieldSelector', 'gracePeriodSeconds', 'labelSelector', 'limit',
      'orphanDependents', 'propagationPolicy', 'resourceVersion', 'resourceVersionMatch', 'sendInitialEvents', 'timeoutSeconds',
    ]);
  });

  it('answers with the object, the list, a Status or watch events as each verb does', () => {
    const schema = (path: string, method: string, code = '200'): string => op(path, method).responses[code].schema.$ref;
    assert.equal(schema('/api/v1/namespaces/{namespace}/serviceaccounts', 'get'), `#/definitions/${saName}List`);
    assert.equal(schema('/api/v1/namespaces/{namespace}/serviceaccounts', 'post', '202'), `#/definitions/${saName}`);
    assert.equal(schema('/api/v1/namespaces/{namespace}/serviceaccounts', 'delete'), `#/definitions/${meta}.Status`);
    // DELETE answers per the kind's returnDeletedObject
    assert.equal(schema('/api/v1/namespaces/{namespace}/serviceaccounts/{name}', 'delete', '202'), `#/definitions/${saName}`);
    assert.equal(schema('/api/v1/namespaces/{namespace}/secrets/{name}', 'delete'), `#/definitions/${meta}.Status`);
    assert.equal(schema('/api/v1/watch/serviceaccounts', 'get'), `#/definitions/${meta}.WatchEvent`);
    assert.ok(op('/api/v1/serviceaccounts', 'get').produces.includes('application/json;stream=watch'));
    assert.equal(op('/api/v1/namespaces/{namespace}/serviceaccounts/{name}', 'delete').parameters[0].required, undefined, 'DeleteOptions body is optional');
  });
});

describe('OpenAPI v3 documents', () => {
  it('wraps described references in allOf, with the defaults Kubernetes writes', () => {
    const sa = core.components.schemas[saName];
    assert.deepEqual(sa.properties.metadata, { allOf: [{ $ref: `#/components/schemas/${meta}.ObjectMeta` }], default: {} });
    assert.deepEqual(sa.properties.secrets.items, { allOf: [{ $ref: '#/components/schemas/io.orch.api.core.v1.ObjectReference' }], default: {} });
    assert.equal(ext(sa.properties.secrets, 'patch-merge-key'), 'name');
    const om = core.components.schemas[`${meta}.ObjectMeta`].properties;
    assert.deepEqual(om.labels.additionalProperties, { default: '', type: 'string' });
    assert.deepEqual(om.creationTimestamp.allOf, [{ $ref: `#/components/schemas/${meta}.Time` }]);
    assert.deepEqual(om.finalizers.items, { default: '', type: 'string' });
    assert.equal(core.openapi, '3.0.0');
  });

  it('gives required scalars and times their zero value as default (v3 only); required lists none', () => {
    const schemas = events.components.schemas;
    const series = schemas['io.orch.api.events.v1.EventSeries'].properties;
    assert.equal(series.count.default, 0);
    assert.deepEqual(series.lastObservedTime.default, {});
    assert.deepEqual(schemas['io.orch.api.events.v1.Event'].properties.eventTime.default, {});
    assert.equal(schemas['io.orch.api.events.v1.Event'].properties.note.default, undefined, 'an optional field has none');
    const resource = schemas[`${meta}.APIResource`].properties;
    assert.equal(resource.name.default, '');
    assert.equal(resource.namespaced.default, false);
    assert.equal(resource.verbs.default, undefined);
    assert.equal(resource.group.default, undefined);
    assert.equal(core.components.schemas[`${meta}.OwnerReference`].properties.uid.default, '');
    assert.equal(v2.definitions['io.orch.api.events.v1.EventSeries'].properties.count.default, undefined, 'v2 writes no defaults');
  });

  it('describes request bodies and responses by media type', () => {
    const item = core.paths['/api/v1/namespaces/{namespace}/serviceaccounts/{name}'];
    assert.deepEqual(Object.keys(item.patch.requestBody.content).sort(),
      ['application/apply-patch+yaml', 'application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json']);
    assert.equal(item.patch.requestBody.required, true);
    assert.deepEqual(item.put.requestBody, { content: { '*/*': { schema: { $ref: `#/components/schemas/${saName}` } } }, required: true });
    assert.deepEqual(item.delete.requestBody, { content: { '*/*': { schema: { $ref: `#/components/schemas/${meta}.DeleteOptions` } } } });
    assert.deepEqual(Object.keys(item.get.responses['200'].content), ['application/json', 'application/vnd.orch.protobuf', 'application/yaml']);
    assert.equal(item.get.responses['401'].description, 'Unauthorized');
    assert.deepEqual(item.parameters[2], {
      description: item.parameters[2].description, in: 'query', name: 'pretty', schema: { type: 'string', uniqueItems: true },
    });
  });

  it('lets kubectl find fieldValidation on every PATCH of a kind (QueryParamVerifierV3)', () => {
    for (const doc of [core, events]) {
      const gvks = new Set(operations(doc).filter(({ op }) => op['x-kubernetes-group-version-kind']).map(({ op }) => JSON.stringify(op['x-kubernetes-group-version-kind'])));
      for (const gvk of gvks) {
        const ofKind = operations(doc).filter(({ op }) => JSON.stringify(op['x-kubernetes-group-version-kind']) === gvk);
        // a kind only ever created (a subresource's TokenRequest) has no PATCH, in Kubernetes too: kubectl falls back to v2
        if (ofKind.every(({ method }) => method === 'post')) continue;
        const patches = ofKind.filter(({ method }) => method === 'patch');
        assert.ok(patches.length > 0, `a PATCH for ${gvk}`);
        // kubectl takes the first PATCH it meets for the GVK (Go map order), so every one must have it
        for (const { path, op } of patches) assert.ok(opParams(op).includes('fieldValidation'), `${path}`);
      }
    }
  });

  it('lets kubectl explain find sa.secrets: GVK from the resource path, schema by GVK, items resolved', () => {
    const gvk = ext(core.paths['/api/v1/serviceaccounts'].get, 'group-version-kind');
    assert.deepEqual(gvk, saGvk);
    const schemas = Object.values(core.components.schemas as Record<string, Doc>)
      .filter((schema) => (schema['x-kubernetes-group-version-kind'] ?? []).some((g: Doc) => JSON.stringify(g) === JSON.stringify(gvk)));
    assert.equal(schemas.length, 1);
    const items = schemas[0].properties.secrets.items;
    const target = core.components.schemas[items.allOf[0].$ref.slice('#/components/schemas/'.length)];
    assert.deepEqual(Object.keys(target.properties).sort(), ['apiVersion', 'fieldPath', 'kind', 'name', 'namespace', 'resourceVersion', 'uid']);
  });

  it('holds only its group-version: paths under its prefix, schemas they reach', () => {
    assert.ok(Object.keys(events.paths).every((path) => path.startsWith('/apis/events.orch.io/v1/')));
    assert.ok(Object.keys(core.paths).every((path) => path.startsWith('/api/v1/')));
    assert.ok(core.paths['/api/v1/']);
    const schemas = Object.keys(events.components.schemas);
    assert.ok(schemas.includes('io.orch.api.events.v1.Event'));
    assert.ok(schemas.includes('io.orch.api.core.v1.ObjectReference'), 'shared types keep the package that declares them');
    assert.ok(!schemas.includes(saName));
    assert.ok(schemas.includes(`${meta}.APIResourceList`));
    assert.equal(openApiV3GroupVersion(registry, 'events.orch.io', 'v2'), undefined);
    assert.equal(openApiV3GroupVersion(registry, 'apps', 'v1'), undefined);
    assert.equal(openApiV3Document(registry, 'apis/events.orch.io/v1/events'), undefined);
  });

  it('resolves every $ref within each document of the index', () => {
    for (const key of indexKeys) {
      const doc: Doc = openApiV3Document(registry, key);
      assert.ok(doc, key);
      const refs = refsIn(doc);
      assert.ok(refs.length > 0, key);
      for (const ref of refs) {
        assert.ok(ref.startsWith('#/components/schemas/'), ref);
        assert.ok(doc.components.schemas[ref.slice('#/components/schemas/'.length)], `${key}: dangling ${ref}`);
      }
    }
    const apis: Doc = openApiV3Document(registry, 'apis');
    assert.equal(apis.paths['/apis/'].get.responses['200'].content['application/json'].schema.$ref, `#/components/schemas/${meta}.APIGroupList`);
  });
});

/** kube-openapi's computeETag, written out here: fmt.Sprintf("%X", sha512.Sum512(jsonBytes)) */
const kubeOpenApiHash = (json: string) => createHash('sha512').update(Buffer.from(json, 'utf8')).digest('hex').toUpperCase();

describe('the v3 index and hashes', () => {
  it('lists every document with a URL carrying its hash', () => {
    const index: Doc = openApiV3Index(registry);
    assert.deepEqual(Object.keys(index.paths), indexKeys);
    for (const key of indexKeys) {
      const served = JSON.stringify(openApiV3Document(registry, key));
      assert.deepEqual(index.paths[key], { serverRelativeURL: `/openapi/v3/${key}?hash=${kubeOpenApiHash(served)}` });
    }
  });

  it('hashes as kube-openapi does: SHA-512 of the JSON, upper-case hex', () => {
    const hash = openApiHash(core);
    assert.match(hash, /^[0-9A-F]{128}$/);
    assert.equal(hash, kubeOpenApiHash(JSON.stringify(core)));
  });

  it('is stable across builds and changes only for the documents whose declarations change', () => {
    assert.deepEqual(openApiV3Index(new ApiRegistry(builtinKinds)), openApiV3Index(registry));
    assert.equal(JSON.stringify(openApiV2(new ApiRegistry(builtinKinds))), JSON.stringify(v2));
    const before: Doc = openApiV3Index(registry);
    const after: Doc = openApiV3Index(new ApiRegistry(builtinKinds.filter((k) => k !== secretKind)));
    assert.notEqual(after.paths['api/v1'].serverRelativeURL, before.paths['api/v1'].serverRelativeURL);
    for (const key of ['api', 'apis', 'apis/coordination.orch.io', 'apis/coordination.orch.io/v1', 'apis/events.orch.io', 'apis/events.orch.io/v1']) {
      assert.equal(after.paths[key].serverRelativeURL, before.paths[key].serverRelativeURL, key);
    }
  });
});

describe('creates that store nothing', () => {
  const auth: Doc = openApiV3GroupVersion(registry, 'authentication.orch.io', 'v1');

  it('serves TokenReview and SelfSubjectReview as create only, with no list type', () => {
    assert.deepEqual(Object.keys(auth.paths).sort(), ['/apis/authentication.orch.io/v1/', '/apis/authentication.orch.io/v1/selfsubjectreviews', '/apis/authentication.orch.io/v1/tokenreviews']);
    const create = auth.paths['/apis/authentication.orch.io/v1/tokenreviews'].post;
    assert.equal(create.operationId, 'createAuthenticationV1TokenReview');
    assert.deepEqual(create['x-kubernetes-group-version-kind'], { group: 'authentication.orch.io', kind: 'TokenReview', version: 'v1' });
    assert.ok(!v2.definitions['io.orch.api.authentication.v1.TokenReviewList']);
    assert.deepEqual(ext(v2.definitions['io.orch.api.authentication.v1.TokenReview'], 'group-version-kind'), [
      { group: 'authentication.orch.io', kind: 'TokenReview', version: 'v1' },
    ]);
    // with Kubernetes' group name served beside ours, one definition names both kinds
    const aliased: Doc = openApiV2(new ApiRegistry(withKubernetesAliases(builtinKinds)));
    assert.deepEqual(ext(aliased.definitions['io.orch.api.authentication.v1.TokenReview'], 'group-version-kind'), [
      { group: 'authentication.orch.io', kind: 'TokenReview', version: 'v1' }, { group: 'authentication.k8s.io', kind: 'TokenReview', version: 'v1' },
    ]);
  });

  it('describes the token subresource of a ServiceAccount with TokenRequest bodies', () => {
    const create = core.paths['/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token'].post;
    assert.equal(create.operationId, 'createCoreV1NamespacedServiceAccountToken');
    assert.equal(create.description, 'create token of a ServiceAccount');
    assert.deepEqual(create['x-kubernetes-group-version-kind'], { group: 'authentication.orch.io', kind: 'TokenRequest', version: 'v1' });
    assert.deepEqual(create.requestBody.content['*/*'].schema, { $ref: '#/components/schemas/io.orch.api.authentication.v1.TokenRequest' });
    assert.deepEqual(create.responses['201'].content['application/json'].schema, { $ref: '#/components/schemas/io.orch.api.authentication.v1.TokenRequest' });
  });
});
