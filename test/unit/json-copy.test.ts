/** The write path's copies of objects: deep, equal, independent, and keys kept as data. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { atResourceVersion, copyJson } from '../../src/api/json-copy.js';

/** JSON values whose object keys include the names Object.prototype has */
const json = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.boolean(), fc.double({ noNaN: true }), fc.string(), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(fc.oneof(fc.string(), fc.constantFrom('__proto__', 'constructor', 'toString')), tie('value'), { maxKeys: 4, noNullPrototype: true }),
})).value;

/** every object and array of a value, depth first */
function containers(v: unknown, out: unknown[] = []): unknown[] {
  if (typeof v === 'object' && v !== null) {
    out.push(v);
    for (const x of Object.values(v)) containers(x, out);
  }
  return out;
}

describe('copyJson', () => {
  it('copies any JSON value deeply: equal, sharing no object or array, with the same own keys', () => {
    fc.assert(fc.property(json, (value) => {
      const copy = copyJson(value);
      assert.deepStrictEqual(copy, value);
      assert.equal(JSON.stringify(copy), JSON.stringify(value));
      const originals = new Set(containers(value));
      for (const c of containers(copy)) assert.ok(!originals.has(c), 'a container is shared with the original');
      for (const c of containers(copy)) if (!Array.isArray(c)) assert.equal(Object.getPrototypeOf(c), Object.prototype);
    }), { numRuns: 300 });
  });

  it('keeps a `__proto__` key as data, never as the prototype', () => {
    const value = JSON.parse('{"metadata":{"labels":{"__proto__":"x","constructor":"y"}}}') as { metadata: { labels: Record<string, string> } };
    const copy = copyJson(value);
    assert.deepEqual(Object.keys(copy.metadata.labels), ['__proto__', 'constructor']);
    assert.equal(Object.getPrototypeOf(copy.metadata.labels), Object.prototype);
    assert.equal(Object.getOwnPropertyDescriptor(copy.metadata.labels, '__proto__')?.value, 'x');
  });

  it('hands values that are not plain JSON to structuredClone', () => {
    const bytes = new Uint8Array([1, 2, 3]);
    const copy = copyJson({ bytes });
    assert.ok(copy.bytes instanceof Uint8Array);
    assert.notEqual(copy.bytes, bytes);
    assert.deepEqual([...copy.bytes], [1, 2, 3]);
  });
});

describe('atResourceVersion', () => {
  it('changes the resourceVersion of a new object and metadata, leaving the original as it was', () => {
    const obj = { kind: 'ConfigMap', metadata: { name: 'a', resourceVersion: '5', labels: { a: 'b' } }, data: { k: 'v' } };
    const at = atResourceVersion(obj, '9');
    assert.equal(at.metadata.resourceVersion, '9');
    assert.equal(obj.metadata.resourceVersion, '5');
    assert.deepEqual(Object.keys(at.metadata), ['name', 'resourceVersion', 'labels'], 'key order kept');
    assert.deepEqual({ ...at, metadata: { ...at.metadata, resourceVersion: '5' } }, obj);
  });
});
