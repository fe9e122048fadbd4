/**
 * Validation ratcheting (CRDValidationRatcheting): on update, errors of schema keywords and of
 * CEL rules without oldSelf are dropped on values equal to their correlated old value (properties
 * by name, map-list items by key, plain-list items by index; set and atomic lists as a whole);
 * a changed value is still refused, and transition rules never ratchet.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Correlated } from '../../src/api/schema/correlation.js';
import { parseStructural, type SchemaProblem, type Structural } from '../../src/api/schema/structural.js';
import { validateValue } from '../../src/api/schema/value-validation.js';
import { RuleValidator } from '../../src/apiextensions/cel/rule-validator.js';
import { formatFieldError } from '../../src/status/status-error.js';

function parse(raw: unknown): Structural {
  const problems: SchemaProblem[] = [];
  const out = parseStructural(raw, 'schema', problems);
  assert.deepEqual(problems, []);
  return out;
}

const schema = parse({
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 3 },
    other: { type: 'string' },
    ports: {
      type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'],
      items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer', maximum: 100 } } },
    },
    plain: { type: 'array', items: { type: 'integer', maximum: 10 } },
    tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string', maxLength: 2 } },
  },
});

const ratcheted = (value: any, old: any) => validateValue(schema, value, '', new Correlated(value, old, schema)).map(formatFieldError); // eslint-disable-line @typescript-eslint/no-explicit-any

describe('validation ratcheting of schema keywords', () => {
  const old = { name: 'toolong', other: 'a', ports: [{ name: 'a', port: 500 }, { name: 'b', port: 1 }], plain: [50, 1], tags: ['xyz'] };

  it('drops errors of values that did not change', () => {
    assert.deepEqual(ratcheted({ ...old, other: 'b' }, old), []);
    assert.equal(validateValue(schema, { ...old, other: 'b' }, '').length, 4, 'without a correlation every error stays');
  });

  it('keeps errors of changed values', () => {
    assert.deepEqual(ratcheted({ ...old, name: 'stilltoolong' }, old), ['name: Too long: may not be more than 3 bytes']);
    assert.deepEqual(ratcheted({ ...old, plain: [60, 1] }, old), ['plain[0]: Invalid value: 60: plain[0] in body should be less than or equal to 10']);
  });

  it('correlates map-list items by key, wherever they move', () => {
    const reordered = { ...old, ports: [{ name: 'c', port: 2 }, { name: 'b', port: 3 }, { name: 'a', port: 500 }] };
    assert.deepEqual(ratcheted(reordered, old), []);
    const changed = { ...old, ports: [{ name: 'a', port: 600 }, { name: 'b', port: 1 }] };
    assert.deepEqual(ratcheted(changed, old), ['ports[0].port: Invalid value: 600: ports[0].port in body should be less than or equal to 100']);
  });

  it('compares set items only as a whole list', () => {
    assert.deepEqual(ratcheted({ ...old, tags: ['xyz', 'a'] }, old), ['tags[0]: Too long: may not be more than 2 bytes']);
    assert.deepEqual(ratcheted({ ...old, tags: ['xyz'] }, old), []);
  });

  it('caches equality through the tree', () => {
    const c = new Correlated({ a: { b: [1, 2] } }, { a: { b: [1, 2] } }, parse({ type: 'object', properties: { a: { type: 'object', properties: { b: { type: 'array', items: { type: 'integer' } } } } } }));
    assert.equal(c.deepEqual(), true);
    assert.equal(c.key('a')?.key('b')?.index(1)?.deepEqual(), true);
    assert.equal(new Correlated({ a: 1 }, { a: 1, b: 2 }, schema).deepEqual(), false);
  });
});

describe('validation ratcheting of CEL rules', () => {
  const rules = parse({
    type: 'object',
    properties: {
      count: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self <= 10', message: 'at most 10' }] },
      mode: { type: 'string', 'x-kubernetes-validations': [{ rule: "self != 'legacy' || oldSelf != 'legacy'", message: 'leave legacy mode' }] },
      other: { type: 'string' },
    },
  });
  const validator = new RuleValidator(rules);
  const run = (value: unknown, old: unknown) => validator.validate(value, old, undefined, new Correlated(value, old, rules)).map(formatFieldError);

  it('drops failures of rules without oldSelf on unchanged values, not of changed ones', () => {
    const old = { count: 50, other: 'a' };
    assert.deepEqual(run({ count: 50, other: 'b' }, old), []);
    assert.deepEqual(run({ count: 60, other: 'a' }, old), ['count: Invalid value: "integer": at most 10']);
  });

  it('never drops failures of transition rules', () => {
    const old = { mode: 'legacy', other: 'a' };
    assert.deepEqual(run({ mode: 'legacy', other: 'b' }, old), ['mode: Invalid value: "string": leave legacy mode']);
  });
});
