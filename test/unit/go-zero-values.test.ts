/** fillGoZeros: what a Go type's encoder writes for fields a built-in object leaves unset. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { builtinKinds } from '../../src/api/registry/builtin.js';
import type { StructSchema } from '../../src/api/schema.js';
import { s } from '../../src/api/schema/builtin-structural.js';
import { fillGoZeros, zeroObjectOf } from '../../src/api/schema/go-zero-values.js';
import { internalStructOf } from '../../src/api/schema/to-internal.js';

const inner = s.struct('Inner', {
  name: s.string(),
  count: s.int32(),
  at: s.time(),
  maybe: s.stringPointer(),
}, undefined, { required: ['name'], withoutOmitEmpty: ['count', 'maybe'] });

const outer: StructSchema = internalStructOf(s.struct('Outer', {
  label: s.string(),
  flag: s.boolean(),
  tags: s.atomicList(s.string()),
  byValue: inner,
  byPointer: inner,
  nullable: inner,
  items: s.atomicList(inner),
  byKey: s.map(inner),
  when: s.microTime(),
  whenSet: s.microTime(),
}, undefined, { pointers: ['byPointer', 'nullable', 'whenSet'], withoutOmitEmpty: ['flag', 'tags', 'nullable'] }));

describe('Go zero values', () => {
  it('fills fields without omitempty, structs and times held by value, and nothing else', () => {
    const obj: Record<string, unknown> = {};
    fillGoZeros(outer, obj);
    assert.deepEqual(obj, {
      flag: false, tags: null,
      byValue: { name: '', count: 0, at: null, maybe: null },
      // a pointer without omitempty is written null; with it, left out
      nullable: null,
      when: null,
    });
  });

  it('keeps what is set and fills inside it: list items, map values, pointer structs', () => {
    const obj: Record<string, unknown> = {
      label: 'x', flag: true, tags: [], byValue: { name: 'n', count: 3 }, byPointer: {},
      items: [{ name: 'a' }, {}], byKey: { k: { at: '2025-01-01T00:00:00Z' } }, when: '2025-01-01T00:00:00.000001Z',
    };
    fillGoZeros(outer, obj);
    assert.deepEqual(obj, {
      label: 'x', flag: true, tags: [],
      byValue: { name: 'n', count: 3, at: null, maybe: null },
      byPointer: { name: '', count: 0, at: null, maybe: null },
      items: [{ name: 'a', count: 0, at: null, maybe: null }, { name: '', count: 0, at: null, maybe: null }],
      byKey: { k: { at: '2025-01-01T00:00:00Z', name: '', count: 0, maybe: null } },
      when: '2025-01-01T00:00:00.000001Z',
      nullable: null,
    });
  });

  it('leaves values of the wrong shape to validation, and fills twice to the same object', () => {
    const obj: Record<string, unknown> = { byValue: 'not an object', items: [null, 7, 'x'], byKey: [] };
    fillGoZeros(outer, obj);
    assert.equal(obj.byValue, 'not an object');
    assert.deepEqual(obj.items, [null, 7, 'x']);
    const again = structuredClone(obj);
    fillGoZeros(outer, again);
    assert.deepEqual(again, obj);
  });

  it('answers the zero object once per schema, frozen', () => {
    const zero = zeroObjectOf(outer);
    assert.equal(zeroObjectOf(outer), zero);
    assert.ok(Object.isFrozen(zero) && Object.isFrozen(zero.byValue));
    assert.deepEqual(zero.byValue, { name: '', count: 0, at: null, maybe: null });
  });

  it('descends a recursive type without looping', () => {
    const node: StructSchema = { type: 'struct', goName: 'Node', fields: {}, writesZero: ['name'] };
    (node.fields as Record<string, unknown>).name = { type: 'string' };
    (node.fields as Record<string, unknown>).children = { type: 'list', items: node, listType: 'atomic' };
    const tree: Record<string, unknown> = { children: [{ children: [{}] }] };
    fillGoZeros(node, tree);
    assert.deepEqual(tree, { name: '', children: [{ name: '', children: [{ name: '' }] }] });
  });

  it('fills any JSON value under every built-in kind without throwing, and a second fill changes nothing (fast-check)', () => {
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.boolean(), fc.integer(), fc.string(), tie('array'), tie('object')),
      array: fc.array(tie('value'), { maxLength: 3 }),
      object: fc.dictionary(fc.oneof(fc.string(), fc.constantFrom('metadata', 'spec', 'status', 'items', 'rules', 'source', 'ownerReferences', '__proto__')), tie('value'), { maxKeys: 4, noNullPrototype: true }),
    })).value;
    fc.assert(fc.property(fc.constantFrom(...builtinKinds), fc.dictionary(fc.constantFrom('metadata', 'spec', 'status', 'rules', 'source', 'involvedObject', 'series'), json, { maxKeys: 4 }), (kind, obj) => {
      fillGoZeros(kind.schema, obj);
      const once = JSON.stringify(obj);
      fillGoZeros(kind.schema, obj);
      assert.equal(JSON.stringify(obj), once);
    }), { numRuns: 500 });
  });
});
