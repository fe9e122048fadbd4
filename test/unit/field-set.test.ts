/**
 * Field sets: FieldsV1 as Kubernetes writes it (key order, where `.` appears), path computation
 * on our kinds (ToFieldSet for apply, Compare for updates), path strings, list-type fallbacks.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';

import type { ListSchema, StructSchema } from '../../src/api/schema.js';
import { s } from '../../src/api/schema/builtin-structural.js';
import { internalOf } from '../../src/api/schema/to-internal.js';
import type { KObject } from '../../src/api/meta.js';
import { serviceAccountKind } from '../../src/api/core/service-account.js';
import { eventKind } from '../../src/api/events/event.js';
import { namespaceKind } from '../../src/api/core/namespace.js';
import { compareElements, pathKey, pathString, type PathKey } from '../../src/patch/field-path.js';
import { orderedPaths, parseFieldsV1, recursiveDifference, toFieldsV1 } from '../../src/patch/field-set.js';
import { listKindOf } from '../../src/patch/typed-schema.js';
import { toFieldSet } from '../../src/patch/typed-walks.js';
import { updateManagedFields } from '../../src/patch/managed-fields.js';

const set = (...paths: string[][]): Set<PathKey> => new Set(paths.map(pathKey));
const now = Date.UTC(2025, 0, 2, 3, 4, 5);

/** The fieldsV1 a create by one writer records. */
function createdFields(kind: typeof serviceAccountKind, obj: Omit<KObject, 'metadata'> & { metadata?: KObject['metadata'] }): unknown {
  const full: KObject = { ...obj, metadata: { name: 'x', namespace: 'ns', uid: 'u', creationTimestamp: '2025-01-01T00:00:00Z', ...obj.metadata } };
  const [entry] = updateManagedFields(full, undefined, { kind, manager: 'w', now });
  return entry?.fieldsV1;
}

describe('FieldsV1 serialization (fieldpath/serialize.go)', () => {
  it('writes keys in path-element order with `.` last, byte for byte', () => {
    const fields = toFieldsV1(set(
      ['f:secrets', 'k:{"name":"b"}'], ['f:secrets'], ['f:metadata', 'f:labels', 'f:b'], ['f:metadata', 'f:labels', 'f:a'],
      ['f:metadata', 'f:labels'], ['f:automountServiceAccountToken'], ['f:secrets', 'k:{"name":"a"}', 'f:name'], ['f:secrets', 'k:{"name":"a"}'],
    ));
    assert.equal(JSON.stringify(fields),
      '{"f:automountServiceAccountToken":{},"f:metadata":{"f:labels":{"f:a":{},"f:b":{},".":{}}},' +
      '"f:secrets":{"k:{\\"name\\":\\"a\\"}":{"f:name":{},".":{}},"k:{\\"name\\":\\"b\\"}":{},".":{}}}');
  });

  it('orders field names, then keys, then set values, then indexes; keys and values by value, numbers numerically', () => {
    const elements = ['i:2', 'v:"b"', 'k:{"port":10}', 'f:z', 'k:{"port":9}', 'v:3', 'f:a', 'i:10', 'v:"a"', 'v:true'];
    assert.deepEqual([...elements].sort(compareElements), ['f:a', 'f:z', 'k:{"port":9}', 'k:{"port":10}', 'v:3', 'v:"a"', 'v:"b"', 'v:true', 'i:2', 'i:10']);
    assert.ok(compareElements('k:{"a":"x","b":"y"}', 'k:{"a":"x"}') > 0, 'a longer key sorts after its prefix');
  });

  it('round-trips sets through FieldsV1', () => {
    const cases = [
      set(['f:metadata', 'f:labels', 'f:a']),
      set(['f:metadata', 'f:labels'], ['f:metadata', 'f:labels', 'f:a'], ['f:metadata', 'f:finalizers', 'v:"x"']),
      set(['f:secrets', 'k:{"name":"a"}'], ['f:secrets', 'k:{"name":"a"}', 'f:name'], ['f:imagePullSecrets']),
      set(['f:list', 'i:0'], ['f:list', 'v:{"a":1}']),
    ];
    for (const c of cases) assert.deepEqual(parseFieldsV1(toFieldsV1(c)), c);
  });

  it('reads back any set it writes, keyed as pathKey keys the paths (names with quotes, backslashes, any character)', () => {
    const element = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 6 }).map((n) => `f:${n}`),
      fc.string({ maxLength: 4 }).map((n) => `k:${JSON.stringify({ name: n })}`),
      fc.string({ maxLength: 4 }).map((n) => `v:${JSON.stringify(n)}`),
      fc.nat(5).map((i) => `i:${i}`),
    );
    fc.assert(fc.property(fc.array(fc.array(element, { minLength: 1, maxLength: 4 }), { maxLength: 8 }), (paths) => {
      const written = set(...paths);
      assert.deepEqual(parseFieldsV1(toFieldsV1(written)), written);
    }));
  });

  it('reads `.` as membership of the node, an empty object as a member, and drops unknown element types', () => {
    assert.deepEqual(parseFieldsV1({ 'f:a': { '.': {}, 'f:b': {} }, 'f:c': {}, 'x:ignored': {}, 'f:d': { 'q:x': {} } }),
      set(['f:a'], ['f:a', 'f:b'], ['f:c'], ['f:d']));
    assert.deepEqual(parseFieldsV1({ 'f:a': { '.': {} } }), set(['f:a']));
    assert.throws(() => parseFieldsV1({ nocolon: {} }), /missing colon/);
    assert.throws(() => parseFieldsV1({ 'k:{bad': {} }));
  });

  it('lists a set in fieldpath.Set.Iterate order: a level\'s members before its children', () => {
    const paths = orderedPaths(set(['f:metadata', 'f:labels', 'f:a'], ['f:zeta'], ['f:alpha'], ['f:metadata', 'f:annotations', 'f:n']));
    assert.deepEqual(paths.map(pathString), ['.alpha', '.zeta', '.metadata.annotations.n', '.metadata.labels.a']);
  });
});

describe('path strings (fieldpath.Path.String)', () => {
  it('prints fields, keys, set values and indexes as Kubernetes does', () => {
    assert.equal(pathString(pathKey(['f:metadata', 'f:labels', 'f:app.kubernetes.io/name'])), '.metadata.labels.app.kubernetes.io/name');
    assert.equal(pathString(pathKey(['f:secrets', 'k:{"name":"a"}', 'f:name'])), '.secrets[name="a"].name');
    assert.equal(pathString(pathKey(['f:ports', 'k:{"port":80,"protocol":"TCP"}'])), '.ports[port=80,protocol="TCP"]');
    assert.equal(pathString(pathKey(['f:metadata', 'f:finalizers', 'v:"x"'])), '.metadata.finalizers[="x"]');
    assert.equal(pathString(pathKey(['f:list', 'i:3'])), '.list[3]');
  });
});

describe('schema-driven paths on our kinds', () => {
  const sa = serviceAccountKind.schema;

  it('ToFieldSet (an applier\'s set): map-list items and map entries are members, granular maps and structs are not', () => {
    const applied = {
      apiVersion: 'v1', kind: 'ServiceAccount',
      metadata: {
        name: 'a', labels: { app: 'x' }, finalizers: ['f1'],
        ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'u1' }],
      },
      secrets: [{ name: 's1' }], imagePullSecrets: [{ name: 'r' }], automountServiceAccountToken: true,
    };
    assert.deepEqual(toFieldsV1(recursiveDifference(toFieldSet(sa, applied), set(['f:apiVersion'], ['f:kind'], ['f:metadata', 'f:name']))), {
      'f:automountServiceAccountToken': {},
      'f:imagePullSecrets': {},
      'f:metadata': {
        'f:finalizers': { 'v:"f1"': {} },
        'f:labels': { 'f:app': {} },
        'f:ownerReferences': { 'k:{"uid":"u1"}': { 'f:apiVersion': {}, 'f:kind': {}, 'f:name': {}, 'f:uid': {}, '.': {} } },
      },
      // ObjectReference is an atomic struct: the item is owned whole
      'f:secrets': { 'k:{"name":"s1"}': {} },
    });
  });

  it('Compare (a writer\'s set): what appeared as a whole is a member, so added maps and lists carry `.`', () => {
    assert.deepEqual(createdFields(serviceAccountKind, {
      apiVersion: 'v1', kind: 'ServiceAccount', metadata: { labels: { a: '1' }, finalizers: ['f'] }, secrets: [{ name: 's' }], automountServiceAccountToken: true,
    }), {
      'f:automountServiceAccountToken': {},
      'f:metadata': { 'f:finalizers': { 'v:"f"': {}, '.': {} }, 'f:labels': { 'f:a': {}, '.': {} } },
      'f:secrets': { 'k:{"name":"s"}': {}, '.': {} },
    });
  });

  it('a struct Go holds by pointer carries `.` when added; one held by value never does', () => {
    assert.deepEqual(createdFields(eventKind, {
      apiVersion: 'events.orch.io/v1', kind: 'Event', eventTime: '2025-01-01T00:00:00.000000Z',
      series: { count: 2, lastObservedTime: '2025-01-01T00:00:00.000000Z' },
      deprecatedSource: { component: 'c' },
      regarding: { kind: 'Pod', name: 'p' },
    }), {
      'f:deprecatedSource': { 'f:component': {} },
      'f:eventTime': {},
      'f:regarding': {},
      'f:series': { 'f:count': {}, 'f:lastObservedTime': {}, '.': {} },
    });
    assert.deepEqual(createdFields(namespaceKind, { apiVersion: 'v1', kind: 'Namespace', spec: { finalizers: ['orch'] } }),
      { 'f:spec': { 'f:finalizers': {} } });
  });
});

describe('list types', () => {
  const item = internalOf(s.struct('Item', { name: s.string(), value: s.string() }));
  const base = { type: 'list', items: item } as const;

  it('reads listType first, then the patch strategy markers, else atomic', () => {
    assert.deepEqual(listKindOf({ ...base, listType: 'map', listMapKeys: ['name'] }), { type: 'map', keys: ['name'] });
    assert.deepEqual(listKindOf({ ...base, listType: 'set' }), { type: 'set' });
    assert.deepEqual(listKindOf({ ...base, listType: 'atomic', patchStrategy: 'merge', patchMergeKey: 'name' }), { type: 'atomic' });
    const undeclared = (extra: Partial<ListSchema>): ListSchema => ({ ...base, ...extra } as unknown as ListSchema);
    assert.deepEqual(listKindOf(undeclared({ patchStrategy: 'merge', patchMergeKey: 'name' })), { type: 'map', keys: ['name'] });
    assert.deepEqual(listKindOf(undeclared({ patchStrategy: 'merge,retainKeys', patchMergeKey: 'name' })), { type: 'map', keys: ['name'] });
    assert.deepEqual(listKindOf(undeclared({ patchStrategy: 'merge' })), { type: 'set' });
    assert.deepEqual(listKindOf(undeclared({ patchStrategy: 'retainKeys' })), { type: 'atomic' });
    assert.deepEqual(listKindOf(undeclared({})), { type: 'atomic' });
  });

  it('writes key and set values as Go JSON (sorted keys, HTML escaped)', () => {
    const list: ListSchema = { ...base, listType: 'map', listMapKeys: ['value', 'name'] };
    const root: StructSchema = { type: 'struct', goName: 'Root', fields: { items: list, tags: internalOf(s.setList(s.string())) } };
    const fields = toFieldsV1(toFieldSet(root, { items: [{ value: 'a<b', name: 'n' }], tags: ['x&y'] }));
    assert.deepEqual(Object.keys(fields['f:items'] as object), ['k:{"name":"n","value":"a\\u003cb"}']);
    assert.deepEqual(Object.keys(fields['f:tags'] as object), ['v:"x\\u0026y"']);
  });
});
