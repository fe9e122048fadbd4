import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { namespaceKind } from '../../src/api/core/namespace.js';
import { serviceAccountKind } from '../../src/api/core/service-account.js';
import { eventKind } from '../../src/api/events/event.js';
import type { Schema, StructSchema } from '../../src/api/schema.js';
import { s } from '../../src/api/schema/builtin-structural.js';
import { internalOf } from '../../src/api/schema/to-internal.js';
import { acceptedPatchTypes, applyJsonPatch, patchTypeOf, type PatchOptions } from '../../src/patch/json-patch.js';
import { applyMergePatch } from '../../src/patch/merge-patch.js';
import { applyStrategicMergePatch } from '../../src/patch/strategic-merge.js';
import { StatusError, type StatusDetails } from '../../src/status/status-error.js';

/** Inputs are frozen so that any mutation of them throws. */
function frozen<T>(v: T): T {
  if (v && typeof v === 'object') {
    for (const child of Object.values(v)) frozen(child);
    Object.freeze(v);
  }
  return v;
}

interface Expected { code: number; reason: string; message: string; details?: StatusDetails }

function assertStatus(fn: () => unknown, expected: Expected): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof StatusError, `expected a StatusError, got ${String(err)}`);
    assert.deepEqual({ code: err.code, reason: err.reason, message: err.message, details: err.details },
      { details: undefined, ...expected });
    return true;
  });
}

const rejected: Expected = {
  code: 422, reason: 'Invalid', message: 'the server rejected our request due to an error in our request', details: {},
};

const untyped = (message: string): Expected => ({ code: 500, reason: '', message });
const badRequest = (message: string): Expected => ({ code: 400, reason: 'BadRequest', message });

/** The result of a patch that turns the object into an array, as the patch handler reports it. */
function arrayResult(json: string): Expected {
  const detail = `couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`;
  const body = `Invalid value: ${JSON.stringify(json)}: ${detail}`;
  return {
    code: 422, reason: 'Invalid', message: ` "" is invalid: patch: ${body}`,
    details: { causes: [{ reason: 'FieldValueInvalid', message: body, field: 'patch' }] },
  };
}

/**
 * The test type of Kubernetes' strategicpatch tests (MergeItem), in the internal form: the type
 * contains itself, which a structural schema (a tree) cannot say; its leaves are declared.
 */
const mergeItem: StructSchema = (() => {
  const fields: Record<string, Schema> = {};
  const item: StructSchema = { type: 'struct', goName: 'MergeItem', fields };
  const string = internalOf(s.string());
  const simpleMap = internalOf(s.map(s.string()));
  const mergingIntList = internalOf(s.setList(s.int64(), undefined, { strategy: 'merge' }));
  const mergingList = (): Schema => ({ type: 'list', items: item, listType: 'map', listMapKeys: ['name'], patchStrategy: 'merge', patchMergeKey: 'name' });
  const nonMergingList = (): Schema => ({ type: 'list', items: item, listType: 'atomic' });
  const retainKeysItem: StructSchema = {
    type: 'struct', goName: 'RetainKeysMergeItem',
    fields: { name: string, value: string, other: string, simpleMap, mergingIntList, mergingList: mergingList(), nonMergingList: nonMergingList() },
  };
  Object.assign(fields, {
    name: string, value: string, other: string,
    mergingList: mergingList(),
    nonMergingList: nonMergingList(),
    mergingIntList,
    nonMergingIntList: internalOf(s.atomicList(s.int64())),
    mergeItemPtr: mergingList(),
    simpleMap,
    retainKeysMap: retainKeysItem,
    retainKeysMergingList: { type: 'list', items: item, listType: 'map', listMapKeys: ['name'], patchStrategy: 'merge,retainKeys', patchMergeKey: 'name' },
  });
  return item;
})();

type Case = [name: string, original: object, patch: unknown, expected: object];

describe('applyStrategicMergePatch: Kubernetes strategicpatch test corpus', () => {
  const cases: Case[] = [
    // customStrategicMergePatchTestCaseData
    ['unique scalars when merging lists', { mergingIntList: [1, 2] }, { mergingIntList: [2, 3] }, { mergingIntList: [1, 2, 3] }],
    ['delete map from nested map', { simpleMap: { key1: '1', key2: '1' } }, { simpleMap: { $patch: 'delete' } }, { simpleMap: {} }],
    ['delete all items from merging list', { mergingList: [{ name: 1 }, { name: 2 }] }, { mergingList: [{ $patch: 'replace' }] }, { mergingList: [] }],
    ['merge empty merging lists', { mergingList: [] }, { mergingList: [] }, { mergingList: [] }],
    ['delete all keys from map', { name: 1, value: 1 }, { $patch: 'replace' }, {}],
    ['add key and delete all keys from map', { name: 1, value: 1 }, { other: 'a', $patch: 'replace' }, { other: 'a' }],
    ['delete all duplicate entries in a merging list',
      { mergingList: [{ name: 1 }, { name: 1 }, { name: 2, value: 'a' }, { name: 3 }, { name: 3 }] },
      { mergingList: [{ name: 1, $patch: 'delete' }, { name: 3, $patch: 'delete' }] },
      { mergingList: [{ name: 2, value: 'a' }] }],
    ['retainKeys map can delete a field when no retainKeys directive present',
      { retainKeysMap: { name: 'foo', value: 'a' } }, { retainKeysMap: { value: null } }, { retainKeysMap: { name: 'foo' } }],
    ['retainKeys list can change a field when no retainKeys directive present',
      { retainKeysMergingList: [{ name: 'bar' }, { name: 'foo', value: 'a' }] },
      { retainKeysMergingList: [{ name: 'foo', value: 'b' }] },
      { retainKeysMergingList: [{ name: 'bar' }, { name: 'foo', value: 'b' }] }],
    ['preserve the order from the patch in a merging list',
      { mergingList: [{ name: 1 }, { name: 2, value: 'b' }, { name: 3 }] },
      { mergingList: [{ name: 3, value: 'c' }, { name: 1, value: 'a' }, { name: 2, other: 'x' }] },
      { mergingList: [{ name: 3, value: 'c' }, { name: 1, value: 'a' }, { name: 2, value: 'b', other: 'x' }] }],
    ['preserve the order from the patch in a merging list 2',
      { mergingList: [{ name: 1 }, { name: 2, value: 'b' }, { name: 3 }] },
      { mergingList: [{ name: 3, value: 'c' }, { name: 1, value: 'a' }] },
      { mergingList: [{ name: 2, value: 'b' }, { name: 3, value: 'c' }, { name: 1, value: 'a' }] }],
    ['preserve the order from the patch in a merging int list', { mergingIntList: [1, 2, 3] }, { mergingIntList: [3, 1, 2] }, { mergingIntList: [3, 1, 2] }],
    ['preserve the order from the patch in a merging int list 2', { mergingIntList: [1, 2, 3] }, { mergingIntList: [3, 1] }, { mergingIntList: [2, 3, 1] }],
    // customStrategicMergePatchRawTestCases
    ['$setElementOrder contains item that is not present in the list to be merged',
      { mergingList: [{ name: 1 }, { name: 3 }] },
      { '$setElementOrder/mergingList': [{ name: 3 }, { name: 2 }, { name: 1 }], mergingList: [{ name: 3, value: 3 }, { name: 1, value: 1 }] },
      { mergingList: [{ name: 3, value: 3 }, { name: 1, value: 1 }] }],
    ['$setElementOrder contains item that is not present in the int list to be merged',
      { mergingIntList: [1, 3] }, { '$setElementOrder/mergingIntList': [3, 2, 1] }, { mergingIntList: [3, 1] }],
    // createStrategicMergePatchTestCaseData (three-way patch applied to current)
    ['add field and delete field from map', { name: 1, other: 'a' }, { name: null, value: 1 }, { value: 1, other: 'a' }],
    ['delete field from nested map with conflict',
      { simpleMap: { key1: 'a', key2: '1', other: 'a' } }, { simpleMap: { key1: '1', key2: null } }, { simpleMap: { key1: '1', other: 'a' } }],
    ['replace list of scalars with conflict', { nonMergingIntList: [1, 4] }, { nonMergingIntList: [2, 3] }, { nonMergingIntList: [2, 3] }],
    ['delete all maps from empty merging list', { mergingList: [] },
      { mergingList: [{ name: 1, $patch: 'delete' }, { name: 2, $patch: 'delete' }] }, { mergingList: [] }],
    ['defined null values should propagate removing original fields',
      { name: 'original-name', value: 'original-value', other: 'current-other' },
      { name: 'modified-name', value: null }, { name: 'modified-name', other: 'current-other' }],
    // strategicMergePatchRawTestCases (three-way patch applied to current)
    ['delete items in lists of scalars', { mergingIntList: [1, 2, 3, 4] },
      { '$setElementOrder/mergingIntList': [1, 2], '$deleteFromPrimitiveList/mergingIntList': [3] }, { mergingIntList: [1, 2, 4] }],
    ['delete all duplicate items in lists of scalars', { mergingIntList: [1, 2, 3, 3, 4] },
      { '$setElementOrder/mergingIntList': [1, 2], '$deleteFromPrimitiveList/mergingIntList': [3] }, { mergingIntList: [1, 2, 4] }],
    ['add and delete items in lists of scalars', { mergingIntList: [1, 2, 3] },
      { '$setElementOrder/mergingIntList': [1, 2, 4], '$deleteFromPrimitiveList/mergingIntList': [3], mergingIntList: [4] },
      { mergingIntList: [1, 2, 4] }],
    ['merge lists of maps',
      { mergingList: [{ name: 1, other: 'a' }, { name: 2, value: 2, other: 'b' }] },
      { '$setElementOrder/mergingList': [{ name: 4 }, { name: 1 }, { name: 2 }, { name: 3 }], mergingList: [{ name: 4, value: 4 }, { name: 3, value: 3 }] },
      { mergingList: [{ name: 4, value: 4 }, { name: 1, other: 'a' }, { name: 2, value: 2, other: 'b' }, { name: 3, value: 3 }] }],
    ['merge lists of maps with conflict',
      { mergingList: [{ name: 1, other: 'a' }, { name: 2, value: 3, other: 'b' }] },
      { '$setElementOrder/mergingList': [{ name: 1 }, { name: 2 }, { name: 3 }], mergingList: [{ name: 2, value: 2 }, { name: 3, value: 3 }] },
      { mergingList: [{ name: 1, other: 'a' }, { name: 2, value: 2, other: 'b' }, { name: 3, value: 3 }] }],
    ['retainKeys map deletes nested merging list',
      { retainKeysMap: { name: 'foo', mergingList: [{ name: 'a' }, { name: 'b' }] } },
      { retainKeysMap: { $retainKeys: ['name', 'value'], value: 'bar', mergingList: null } },
      { retainKeysMap: { name: 'foo', value: 'bar' } }],
    ['retainKeys map deletes an item in nested merging list',
      { retainKeysMap: { name: 'foo', mergingList: [{ name: 'a' }, { name: 'b' }, { name: 'x' }] } },
      { retainKeysMap: { $retainKeys: ['mergingList', 'name'], '$setElementOrder/mergingList': [{ name: 'a' }], mergingList: [{ name: 'b', $patch: 'delete' }] } },
      { retainKeysMap: { name: 'foo', mergingList: [{ name: 'a' }, { name: 'x' }] } }],
    ['retainKeys list of maps clears a field',
      { retainKeysMergingList: [{ name: 'bar' }, { name: 'foo', value: 'a', other: 'x' }] },
      { '$setElementOrder/retainKeysMergingList': [{ name: 'bar' }, { name: 'foo' }], retainKeysMergingList: [{ $retainKeys: ['name', 'value'], name: 'foo' }] },
      { retainKeysMergingList: [{ name: 'bar' }, { name: 'foo', value: 'a' }] }],
    ['retainKeys list of maps deletes a field',
      { retainKeysMergingList: [{ name: 'bar' }, { name: 'foo', value: 'a' }] },
      { '$setElementOrder/retainKeysMergingList': [{ name: 'bar' }, { name: 'foo' }], retainKeysMergingList: [{ $retainKeys: ['name'], name: 'foo', value: null }] },
      { retainKeysMergingList: [{ name: 'bar' }, { name: 'foo' }] }],
    ['delete and reorder in one list, reorder in another',
      { mergingList: [{ name: 'a', value: 'a' }, { name: 'b', value: 'b' }], mergeItemPtr: [{ name: 'c', value: 'c' }, { name: 'd', value: 'd' }] },
      { '$setElementOrder/mergingList': [{ name: 'b' }], '$setElementOrder/mergeItemPtr': [{ name: 'd' }, { name: 'c' }], mergingList: [{ $patch: 'delete', name: 'a' }] },
      { mergingList: [{ name: 'b', value: 'b' }], mergeItemPtr: [{ name: 'd', value: 'd' }, { name: 'c', value: 'c' }] }],
    // values added where the object had nothing (kubernetes#107705, kubernetes#117568)
    ['nulls are dropped from an added value', {}, { retainKeysMap: { name: 'x', value: null, simpleMap: { a: null, b: 'c' } } },
      { retainKeysMap: { name: 'x', simpleMap: { b: 'c' } } }],
    ['directives are dropped from an added list', {}, { mergingList: [{ name: 'a' }, { name: 'b', $patch: 'delete' }] }, { mergingList: [{ name: 'a' }] }],
    ['a directive map added where nothing was is dropped', { name: 'n' }, { simpleMap: { $patch: 'replace', a: 'b' } }, { name: 'n' }],
    ['a deletion list for a missing list deletes nothing', { name: 'n' }, { '$deleteFromPrimitiveList/mergingIntList': [1] }, { name: 'n' }],
    ['a null patch changes nothing', { name: 'n', mergingIntList: [1] }, null, { name: 'n', mergingIntList: [1] }],
  ];
  for (const [name, original, patch, expected] of cases) {
    it(name, () => {
      assert.deepEqual(applyStrategicMergePatch(frozen(original), frozen(patch), mergeItem), expected);
    });
  }
});

describe('applyStrategicMergePatch: our kinds', () => {
  const sa = {
    apiVersion: 'v1', kind: 'ServiceAccount',
    metadata: {
      name: 'sa', namespace: 'ns', labels: { x: '1', y: '2' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Namespace', name: 'ns', uid: 'u1' }],
    },
    secrets: [{ name: 'a' }, { name: 'b' }],
    imagePullSecrets: [{ name: 'p1' }],
  };
  const cases: Array<[name: string, original: object, patch: unknown, expected: object, schema: StructSchema]> = [
    ['labels merge key by key, null deletes; secrets merge by name (new ones first); imagePullSecrets are replaced', sa,
      { metadata: { labels: { y: null, z: '3' } }, secrets: [{ name: 'c' }], imagePullSecrets: [{ name: 'p2' }] },
      { ...sa, metadata: { ...sa.metadata, labels: { x: '1', z: '3' } }, secrets: [{ name: 'c' }, { name: 'a' }, { name: 'b' }], imagePullSecrets: [{ name: 'p2' }] },
      serviceAccountKind.schema],
    ['a secret merges into the one with its name, in place', sa, { secrets: [{ name: 'b', namespace: 'ns' }] },
      { ...sa, secrets: [{ name: 'a' }, { name: 'b', namespace: 'ns' }] }, serviceAccountKind.schema],
    ['$patch: delete removes a secret', sa, { secrets: [{ name: 'a', $patch: 'delete' }] }, { ...sa, secrets: [{ name: 'b' }] }, serviceAccountKind.schema],
    ['$patch: replace replaces the secrets', sa, { secrets: [{ $patch: 'replace' }, { name: 'z' }] }, { ...sa, secrets: [{ name: 'z' }] }, serviceAccountKind.schema],
    ['$setElementOrder orders the merged secrets (as kubectl apply sends it)', sa,
      { '$setElementOrder/secrets': [{ name: 'b' }, { name: 'c' }, { name: 'a' }], secrets: [{ name: 'c' }] },
      { ...sa, secrets: [{ name: 'b' }, { name: 'c' }, { name: 'a' }] }, serviceAccountKind.schema],
    ['$patch: replace on labels replaces the map', sa, { metadata: { labels: { $patch: 'replace', w: '0' } } },
      { ...sa, metadata: { ...sa.metadata, labels: { w: '0' } } }, serviceAccountKind.schema],
    ['$retainKeys on metadata clears what it does not list', sa, { metadata: { $retainKeys: ['name', 'namespace'] } },
      { ...sa, metadata: { name: 'sa', namespace: 'ns' } }, serviceAccountKind.schema],
    ['ownerReferences merge by uid', sa, { metadata: { ownerReferences: [{ uid: 'u1', controller: true }] } },
      { ...sa, metadata: { ...sa.metadata, ownerReferences: [{ ...sa.metadata.ownerReferences[0], controller: true }] } },
      serviceAccountKind.schema],
    ['namespace conditions merge by type',
      { metadata: { name: 'n' }, status: { phase: 'Active', conditions: [{ type: 'A', status: 'True' }] } },
      { status: { conditions: [{ type: 'A', status: 'False' }, { type: 'B', status: 'True' }] } },
      { metadata: { name: 'n' }, status: { phase: 'Active', conditions: [{ type: 'A', status: 'False' }, { type: 'B', status: 'True' }] } },
      namespaceKind.schema],
    ['an event reference merges field by field (no patch strategy on it)',
      { metadata: { name: 'e' }, regarding: { kind: 'Pod', name: 'p' } }, { regarding: { name: 'q' } },
      { metadata: { name: 'e' }, regarding: { kind: 'Pod', name: 'q' } }, eventKind.schema],
  ];
  for (const [name, original, patch, expected, schema] of cases) {
    it(name, () => {
      assert.deepEqual(applyStrategicMergePatch(frozen(original), frozen(patch), schema), expected);
    });
  }
});

describe('applyStrategicMergePatch: errors', () => {
  const cases: Array<[name: string, original: object, patch: unknown, expected: Expected]> = [
    ['a patch that is not an object', {}, [1], badRequest('json: cannot unmarshal array into Go value of type map[string]interface {}')],
    ['a string patch', {}, 'x', badRequest('json: cannot unmarshal string into Go value of type map[string]interface {}')],
    ['$patch: merge on a map', {}, { $patch: 'merge', name: 'x' }, untyped('unknown patch type: merge in map: map[$patch:merge name:x]')],
    ['$patch: merge on a list element', { mergingList: [{ name: 1 }] }, { mergingList: [{ $patch: 'merge', name: 1 }] },
      untyped('merging lists cannot yet be specified in the patch')],
    ['an unknown $patch on a list element', { mergingList: [{ name: 'a' }] }, { mergingList: [{ $patch: 'foo', name: 'a' }] },
      untyped('unknown patch type: foo in map: map[$patch:foo name:a]')],
    ['a $patch that is not a string', { simpleMap: {} }, { simpleMap: { $patch: 1 } }, untyped('unknown patch type: %!s(int64=1) in map: map[$patch:1]')],
    ['missing merge key should error out', { mergingList: [{ name: 1, value: 'a' }] }, { mergingList: [{ value: 'b' }] },
      untyped('map: map[value:b] does not contain declared merge key: name')],
    ['should check if order in $setElementOrder and patch list match',
      { mergingList: [{ name: 1 }, { name: 3 }, { name: 2 }] },
      { '$setElementOrder/mergingList': [{ name: 1 }, { name: 2 }, { name: 3 }], mergingList: [{ name: 3, value: 3 }, { name: 1, value: 1 }] },
      untyped("The order in patch list:\n[map[name:3 value:3] map[name:1 value:1]]\n doesn't match $setElementOrder list:\n[map[name:1] map[name:2] map[name:3]]\n")],
    ['should check if order in $setElementOrder and patch int list match',
      { mergingIntList: [1, 3, 2] }, { '$setElementOrder/mergingIntList': [1, 2, 3], mergingIntList: [3, 1] },
      untyped("The order in patch list:\n[3 1]\n doesn't match $setElementOrder list:\n[1 2 3]\n")],
    ['$setElementOrder that is not a list', { mergingIntList: [1] }, { '$setElementOrder/mergingIntList': 'x' },
      untyped('expected a []interface {}, but received a string')],
    ['$retainKeys that is not a list', { name: 'a' }, { $retainKeys: 'name' }, badRequest('invalid patch format of retainKeys')],
    ['a patched field missing from $retainKeys', { name: 'a' }, { $retainKeys: ['name'], value: 'v' }, badRequest('invalid patch format of retainKeys')],
    ['$deleteFromPrimitiveList without a list name', { mergingIntList: [1] }, { $deleteFromPrimitiveListmergingIntList: [1] },
      badRequest('invalid patch format of primitive list')],
    ['$setElementOrder without a list name', { mergingIntList: [1] }, { '$setElementOrder-mergingIntList': [1] },
      badRequest('invalid patch format of setElementOrder list')],
    ['a list of lists', { mergingIntList: [] }, { mergingIntList: [[1]] }, rejected],
    ['list elements of different types', { mergingIntList: [1] }, { mergingIntList: ['a'] }, untyped('list element types are not identical: [[1] [a]]')],
    ['a field the type does not have', { unknownMap: { a: '1' } }, { unknownMap: { b: '2' } },
      untyped('unable to find api field in struct MergeItem for the json field "unknownMap"')],
  ];
  for (const [name, original, patch, expected] of cases) {
    it(name, () => assertStatus(() => applyStrategicMergePatch(frozen(original), frozen(patch), mergeItem), expected));
  }
});

describe('applyMergePatch', () => {
  const cases: Case[] = [
    // RFC 7386 appendix A, for object targets
    ['replaces a member', { a: 'b' }, { a: 'c' }, { a: 'c' }],
    ['adds a member', { a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    ['null deletes', { a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    ['a scalar replaces an array', { a: ['b'] }, { a: 'c' }, { a: 'c' }],
    ['an array replaces a scalar', { a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    ['nested maps merge', { a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    ['arrays are replaced whole', { a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    ['target nulls are kept', { e: null }, { a: 1 }, { e: null, a: 1 }],
    ['nulls are pruned from added objects', {}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
    // evanphx/json-patch v4 beyond the RFC
    ['null elements are pruned from an array replacing a scalar', { a: 'x' }, { a: [null, 1] }, { a: [1] }],
    ['an array replacing an object is kept verbatim', { a: { k: 1 } }, { a: [null, 1] }, { a: [null, 1] }],
    ['an added array loses null elements and null members', {}, { a: [{ b: null }, null] }, { a: [{}] }],
    ['labels of a service account', { metadata: { name: 'sa', labels: { x: '1' } }, secrets: [{ name: 'a' }] },
      { metadata: { labels: { x: null, y: '2' } }, secrets: [{ name: 'b' }] },
      { metadata: { name: 'sa', labels: { y: '2' } }, secrets: [{ name: 'b' }] }],
  ];
  for (const [name, original, patch, expected] of cases) {
    it(name, () => assert.deepEqual(applyMergePatch(frozen(original), frozen(patch)), expected));
  }

  const errorCases: Array<[name: string, patch: unknown, options: PatchOptions, expected: Expected]> = [
    ['an array (Warn)', [1], {}, badRequest('error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}')],
    ['a string (Strict)', 'x', { fieldValidation: 'Strict' }, badRequest('error decoding patch: json: cannot unmarshal string into Go value of type map[string]interface {}')],
    ['a number (Warn)', 1, {}, badRequest('error decoding patch: json: cannot unmarshal number into Go value of type map[string]interface {}')],
    ['a boolean (Warn)', true, {}, badRequest('error decoding patch: json: cannot unmarshal bool into Go value of type map[string]interface {}')],
    ['null (Warn)', null, {}, badRequest('Invalid JSON Patch')],
    ['null (Ignore)', null, { fieldValidation: 'Ignore' }, badRequest('Invalid JSON Patch')],
    ['a string (Ignore)', 'x', { fieldValidation: 'Ignore' }, badRequest('Invalid JSON Patch')],
    ['an array (Ignore) becomes the object', [1, null], { fieldValidation: 'Ignore' }, arrayResult('[1]')],
  ];
  for (const [name, patch, options, expected] of errorCases) {
    it(`rejects ${name}`, () => assertStatus(() => applyMergePatch(frozen({ a: 1 }), frozen(patch), options), expected));
  }

  it('keeps a __proto__ member as data', () => {
    const result = applyMergePatch({}, JSON.parse('{"__proto__":{"polluted":true},"a":{"__proto__":{"x":1}}}')) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(result), Object.prototype);
    assert.ok(Object.hasOwn(result, '__proto__'));
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.deepEqual(JSON.parse(JSON.stringify(result)), JSON.parse('{"__proto__":{"polluted":true},"a":{"__proto__":{"x":1}}}'));
  });
});

describe('applyJsonPatch', () => {
  const sa = {
    metadata: { name: 'sa', labels: { x: '1' }, annotations: {} },
    secrets: [{ name: 'a' }, { name: 'b' }],
  };
  const cases: Array<[name: string, ops: unknown, expected: object]> = [
    ['add a member', [{ op: 'add', path: '/metadata/labels/y', value: '2' }],
      { ...sa, metadata: { ...sa.metadata, labels: { x: '1', y: '2' } } }],
    ['replace a member', [{ op: 'replace', path: '/metadata/labels/x', value: '9' }],
      { ...sa, metadata: { ...sa.metadata, labels: { x: '9' } } }],
    ['replace of a missing member adds it (v4)', [{ op: 'replace', path: '/metadata/labels/z', value: '3' }],
      { ...sa, metadata: { ...sa.metadata, labels: { x: '1', z: '3' } } }],
    ['remove a member', [{ op: 'remove', path: '/metadata/labels/x' }], { ...sa, metadata: { ...sa.metadata, labels: {} } }],
    ['append with -', [{ op: 'add', path: '/secrets/-', value: { name: 'c' } }], { ...sa, secrets: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] }],
    ['insert at an index', [{ op: 'add', path: '/secrets/0', value: { name: 'c' } }], { ...sa, secrets: [{ name: 'c' }, { name: 'a' }, { name: 'b' }] }],
    ['add at -1 appends (v4 counts from the grown array)', [{ op: 'add', path: '/secrets/-1', value: { name: 'c' } }],
      { ...sa, secrets: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] }],
    ['remove at -1 removes the last element (v4)', [{ op: 'remove', path: '/secrets/-1' }], { ...sa, secrets: [{ name: 'a' }] }],
    ['indices parse like strconv.Atoi', [{ op: 'replace', path: '/secrets/+01/name', value: 'z' }], { ...sa, secrets: [{ name: 'a' }, { name: 'z' }] }],
    ['move a member', [{ op: 'move', from: '/metadata/labels/x', path: '/metadata/annotations/x' }],
      { ...sa, metadata: { ...sa.metadata, labels: {}, annotations: { x: '1' } } }],
    ['copy an element', [{ op: 'copy', from: '/secrets/1', path: '/secrets/0' }], { ...sa, secrets: [{ name: 'b' }, { name: 'a' }, { name: 'b' }] }],
    ['copy from a missing member copies null (v4)', [{ op: 'copy', from: '/metadata/labels/none', path: '/metadata/labels/y' }],
      { ...sa, metadata: { ...sa.metadata, labels: { x: '1', y: null } } }],
    ['a missing value adds null (v4)', [{ op: 'add', path: '/metadata/labels/y' }], { ...sa, metadata: { ...sa.metadata, labels: { x: '1', y: null } } }],
    ['escaped tokens', [{ op: 'add', path: '/metadata/annotations/a~1b~0c', value: 'v' }],
      { ...sa, metadata: { ...sa.metadata, annotations: { 'a/b~c': 'v' } } }],
    ['what precedes the first / is ignored (v4)', [{ op: 'add', path: 'ignored/extra', value: 1 }], { ...sa, extra: 1 }],
    ['a passing test', [{ op: 'test', path: '/metadata/name', value: 'sa' }, { op: 'add', path: '/metadata/labels/t', value: 'y' }],
      { ...sa, metadata: { ...sa.metadata, labels: { x: '1', t: 'y' } } }],
    ['a test of a missing member with null passes (v4)', [{ op: 'test', path: '/metadata/labels/none', value: null }], sa],
    ['a test of an object ignores members only the value has (v4)', [{ op: 'test', path: '/metadata/labels', value: { x: '1', y: '2' } }], sa],
    ['a test of the whole document', [{ op: 'test', path: '', value: sa }], sa],
    ['replace the whole document with an object', [{ op: 'replace', path: '', value: { metadata: { name: 'new' } } }], { metadata: { name: 'new' } }],
    ['a null body changes nothing', null, sa],
  ];
  for (const [name, ops, expected] of cases) {
    it(name, () => assert.deepEqual(applyJsonPatch(frozen(sa), frozen(ops)), expected));
  }

  const errorCases: Array<[name: string, ops: unknown, options: PatchOptions, expected: Expected]> = [
    ['a failing test', [{ op: 'test', path: '/metadata/name', value: 'other' }], {}, rejected],
    ['a test of a missing member', [{ op: 'test', path: '/metadata/labels/none', value: 'x' }], {}, rejected],
    ['a test of an object missing one of the document\'s members', [{ op: 'test', path: '/metadata/labels', value: {} }], {}, rejected],
    ['removing a missing member', [{ op: 'remove', path: '/metadata/labels/none' }], {}, rejected],
    ['a path through a missing member', [{ op: 'replace', path: '/spec/x', value: 1 }], {}, rejected],
    ['an index past the end', [{ op: 'add', path: '/secrets/3', value: {} }], {}, rejected],
    ['an index that is not a number', [{ op: 'replace', path: '/secrets/x', value: {} }], {}, rejected],
    ['- outside add', [{ op: 'remove', path: '/secrets/-' }], {}, rejected],
    ['adding at the root', [{ op: 'add', path: '', value: {} }], {}, rejected],
    ['replacing the root with a scalar', [{ op: 'replace', path: '', value: 1 }], {}, rejected],
    ['moving a missing member', [{ op: 'move', from: '/metadata/labels/none', path: '/metadata/labels/y' }], {}, rejected],
    ['an unknown op', [{ op: 'merge', path: '/a', value: 1 }], {}, rejected],
    ['an operation without op', [{ path: '/a', value: 1 }], {}, rejected],
    ['a null operation', [null], {}, rejected],
    ['an operation without path', [{ op: 'add', value: 1 }], {}, rejected],
    ['a later failing operation (nothing applies)', [{ op: 'add', path: '/a', value: 1 }, { op: 'remove', path: '/b' }], {}, rejected],
    ['a __proto__ segment', [{ op: 'add', path: '/__proto__/polluted', value: true }], {}, rejected],
    ['a constructor segment', [{ op: 'add', path: '/metadata/constructor/prototype/polluted', value: true }], {}, rejected],
    ['an op that is not a string (Ignore)', [{ op: 1, path: '/a' }], { fieldValidation: 'Ignore' }, rejected],
    ['an op that is not a string (Warn)', [{ op: 1, path: '/a' }], {},
      badRequest('error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.op of type string')],
    ['a path that is not a string (Strict)', [{ op: 'add', path: ['a'] }], { fieldValidation: 'Strict' },
      badRequest('error decoding patch: json: cannot unmarshal array into Go struct field jsonPatchOp.path of type string')],
    ['a body that is not a list (Warn)', { op: 'add' }, {},
      badRequest('error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp')],
    ['a body that is not a list (Ignore)', { op: 'add' }, { fieldValidation: 'Ignore' },
      badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch')],
    ['an operation that is not an object (Warn)', [1], {},
      badRequest('error decoding patch: json: cannot unmarshal number into Go value of type handlers.jsonPatchOp')],
    ['an operation that is not an object (Ignore)', ['x'], { fieldValidation: 'Ignore' },
      badRequest('json: cannot unmarshal string into Go value of type jsonpatch.Operation')],
    ['more than 10000 operations', Array.from({ length: 10001 }, () => ({ op: 'test', path: '/metadata/name', value: 'sa' })), {},
      { code: 413, reason: 'RequestEntityTooLarge', message: 'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001' }],
    ['replacing the object with an array', [{ op: 'replace', path: '', value: [1] }], {}, arrayResult('[1]')],
  ];
  for (const [name, ops, options, expected] of errorCases) {
    it(`rejects ${name}`, () => assertStatus(() => applyJsonPatch(frozen(sa), frozen(ops), options), expected));
  }

  it('does not reach Object.prototype', () => {
    for (const path of ['/__proto__/polluted', '/constructor/prototype/polluted', '/metadata/labels/constructor/polluted']) {
      assert.throws(() => applyJsonPatch({ metadata: { labels: {} } }, [{ op: 'add', path, value: true }]));
    }
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('keeps __proto__ and constructor members as plain data, as v4 does for any key', () => {
    const doc = { metadata: { labels: {} } };
    const ops = [
      { op: 'add', path: '/metadata/labels/__proto__', value: 'a' },
      { op: 'add', path: '/metadata/labels/constructor', value: 'b' },
      { op: 'copy', from: '/metadata/labels/__proto__', path: '/metadata/labels/toString' },
      { op: 'copy', from: '/prototype', path: '/x' },
    ];
    const result = applyJsonPatch(doc, ops) as { metadata: { labels: Record<string, unknown> }; x: unknown };
    assert.equal(Object.getPrototypeOf(result.metadata.labels), Object.prototype);
    assert.deepEqual(Object.entries(result.metadata.labels), [['__proto__', 'a'], ['constructor', 'b'], ['toString', 'a']]);
    assert.equal(result.x, null, 'a copy from a missing member copies null');
    const removed = applyJsonPatch(result, [{ op: 'remove', path: '/metadata/labels/__proto__' }]) as typeof result;
    assert.deepEqual(Object.keys(removed.metadata.labels), ['constructor', 'toString']);
  });
});

describe('patch media types', () => {
  const builtin = acceptedPatchTypes({ cbor: false, strategicMerge: true });

  it('lists the types kube-apiserver accepts, in its order', () => {
    assert.deepEqual(builtin, ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml']);
    assert.deepEqual(acceptedPatchTypes({ cbor: true, strategicMerge: false }),
      ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml', 'application/apply-patch+cbor']);
  });

  const cases: Array<[contentType: string | undefined, expected: string | undefined]> = [
    ['application/merge-patch+json', 'application/merge-patch+json'],
    ['application/strategic-merge-patch+json; charset=utf-8', 'application/strategic-merge-patch+json'],
    ['application/apply-patch+yaml;charset=utf-8', 'application/apply-patch+yaml'],
    ['application/json', undefined],
    ['Application/Merge-Patch+JSON', undefined],
    [' application/merge-patch+json', undefined],
    ['application/apply-patch+cbor', undefined],
    [undefined, undefined],
  ];
  for (const [contentType, expected] of cases) {
    it(`reads ${JSON.stringify(contentType)}`, () => {
      if (expected) {
        assert.equal(patchTypeOf(contentType, builtin), expected);
      } else {
        assertStatus(() => patchTypeOf(contentType, builtin), {
          code: 415, reason: 'UnsupportedMediaType',
          message: `the body of the request was in an unknown format - accepted media types include: ${builtin.join(', ')}`,
        });
      }
    });
  }
});
