/**
 * The structural schema: reading both extension prefixes, structural-ness with Kubernetes'
 * messages, value validation of every keyword, pruning, defaulting, the conversion to the internal
 * Schema, and built-in declarations in it. Properties (fast-check) check the validator against
 * generated values.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { applyDefaults } from '../../src/api/schema/defaulting.js';
import { prune } from '../../src/api/schema/prune.js';
import { parseStructural, toOpenApiSchema, type SchemaProblem, type Structural } from '../../src/api/schema/structural.js';
import { validateStructural } from '../../src/api/schema/structural-invariants.js';
import { toInternal } from '../../src/api/schema/to-internal.js';
import { jsonEqual, jsonTypeOf, validateValue } from '../../src/api/schema/value-validation.js';
import { s } from '../../src/api/schema/builtin-structural.js';
import { formatFieldError } from '../../src/status/status-error.js';
import { fuzzParams } from '../support/fuzz.js';

function parse(raw: unknown): Structural {
  const problems: SchemaProblem[] = [];
  const out = parseStructural(raw, 'openAPIV3Schema', problems);
  assert.deepEqual(problems, []);
  return out;
}

const messages = (schema: Structural, value: unknown) => validateValue(schema, value, '').map(formatFieldError);

describe('structural schema: reading', () => {
  it('accepts x-kubernetes-* and x-orch-* as the same extensions', () => {
    const k = parse({ type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' });
    const o = parse({ type: 'array', items: { type: 'string' }, 'x-orch-list-type': 'set' });
    assert.equal(k.listType, 'set');
    assert.deepEqual(k, o);
  });

  it('writes both prefixes into OpenAPI', () => {
    const out = toOpenApiSchema(parse({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }));
    assert.equal(out['x-kubernetes-preserve-unknown-fields'], true);
    assert.equal(out['x-orch-preserve-unknown-fields'], true);
  });

  it('reports keywords of the wrong JSON type', () => {
    const problems: SchemaProblem[] = [];
    parseStructural({ type: 'object', properties: { a: { type: 3 } } }, 'x', problems);
    assert.deepEqual(problems, [{ path: 'x.properties[a].type', value: 3, detail: 'must be a string' }]);
  });
});

describe('structural schema: structural-ness (ValidateStructural)', () => {
  const errs = (raw: unknown) => validateStructural(parse(raw), 'spec.versions[0].schema.openAPIV3Schema').map(formatFieldError);

  it('accepts a structural schema', () => {
    assert.deepEqual(errs({
      type: 'object',
      properties: {
        spec: { type: 'object', properties: { port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] } } },
        metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 10 } } },
      },
    }), []);
  });

  it('requires types, items, and object at the root, in sorted order', () => {
    assert.deepEqual(errs({ type: 'string' }), ['spec.versions[0].schema.openAPIV3Schema.type: Invalid value: "string": must be object at the root']);
    assert.deepEqual(errs({ type: 'object', properties: { a: {}, b: { type: 'array' } } }), [
      'spec.versions[0].schema.openAPIV3Schema.properties[a].type: Required value: must not be empty for specified object fields',
      'spec.versions[0].schema.openAPIV3Schema.properties[b].items: Required value: must be specified',
    ]);
  });

  it('forbids types and defaults inside value validations, and fields they alone define', () => {
    assert.deepEqual(errs({ type: 'object', properties: { a: { type: 'string', allOf: [{ type: 'string', default: 'x' }] } }, anyOf: [{ properties: { z: {} } }] }), [
      'spec.versions[0].schema.openAPIV3Schema.properties[a].allOf[0].default: Forbidden: must be undefined to be structural',
      'spec.versions[0].schema.openAPIV3Schema.properties[a].allOf[0].type: Forbidden: must be empty to be structural',
      'spec.versions[0].schema.openAPIV3Schema.properties[z]: Required value: because it is defined in spec.versions[0].schema.openAPIV3Schema.anyOf[0].properties[z]',
    ]);
  });

  it('restricts metadata at the root to name and generateName', () => {
    assert.deepEqual(errs({ type: 'object', properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } } }), [
      'spec.versions[0].schema.openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified',
    ]);
  });
});

describe('structural schema: value validation with kube-openapi messages', () => {
  const schema = parse({
    type: 'object', required: ['spec'],
    properties: {
      spec: {
        type: 'object', required: ['replicas'],
        properties: {
          replicas: { type: 'integer', minimum: 1, maximum: 100 },
          ratio: { type: 'number', exclusiveMaximum: true, maximum: 1, multipleOf: 0.25 },
          color: { type: 'string', enum: ['red', 'blue'] },
          name: { type: 'string', minLength: 2, maxLength: 5, pattern: '^[a-z]+$' },
          id: { type: 'string', format: 'uuid' },
          tags: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 2, uniqueItems: true },
          labels: { type: 'object', additionalProperties: { type: 'string' }, maxProperties: 1, minProperties: 1 },
          maybe: { type: 'string', nullable: true },
          either: { type: 'string', anyOf: [{ pattern: '^a' }, { pattern: '^b' }] },
          one: { type: 'integer', oneOf: [{ minimum: 0 }, { maximum: 10 }] },
          never: { type: 'string', not: { enum: ['x'] } },
        },
      },
    },
  });

  it('accepts a valid object', () => {
    assert.deepEqual(messages(schema, { spec: { replicas: 3, ratio: 0.5, color: 'red', name: 'abc', id: '123e4567-e89b-12d3-a456-426614174000', tags: ['a'], labels: { a: 'b' }, maybe: null, either: 'abc', one: 20, never: 'y' } }), []);
  });

  it('reports every keyword', () => {
    assert.deepEqual(messages(schema, { spec: { replicas: 200 } }), ['spec.replicas: Invalid value: 200: spec.replicas in body should be less than or equal to 100']);
    assert.deepEqual(messages(schema, { spec: { replicas: 0 } }), ['spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1']);
    assert.deepEqual(messages(schema, { spec: { replicas: 'three' } }), ['spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"']);
    assert.deepEqual(messages(schema, { spec: { replicas: 1.5 } }), ['spec.replicas: Invalid value: "number": spec.replicas in body must be of type integer: "number"']);
    assert.deepEqual(messages(schema, { spec: {} }), ['spec.replicas: Required value']);
    assert.deepEqual(messages(schema, {}), ['spec: Required value']);
    assert.deepEqual(messages(schema, { spec: { replicas: 1, ratio: 1 } }), ['spec.ratio: Invalid value: 1: spec.ratio in body should be less than 1']);
    assert.deepEqual(messages(schema, { spec: { replicas: 1, ratio: 0.3 } }), ['spec.ratio: Invalid value: 0.3: spec.ratio in body should be a multiple of 0.25']);
    assert.deepEqual(messages(schema, { spec: { replicas: 1, color: 'pink' } }), ['spec.color: Unsupported value: "pink": supported values: "red", "blue"']);
    assert.deepEqual(messages(schema, { spec: { replicas: 1, name: 'toolong' } }), ['spec.name: Too long: may not be more than 5 bytes']);
    assert.deepEqual(messages(schema, { spec: { replicas: 1, name: 'a' } }), ['spec.name: Invalid value: "a": spec.name in body should be at least 2 chars long']);
    assert.deepEqual(messages(schema, { spec: { replicas: 1, name: 'AB' } }), ['spec.name: Invalid value: "AB": spec.name in body should match \'^[a-z]+$\'']);
    assert.deepEqual(messages(schema, { spec: { replicas: 1, id: 'nope' } }), ['spec.id: Invalid value: "nope": spec.id in body must be of type uuid: "nope"']);
    assert.deepEqual(messages(schema, { spec: { replicas: 1, tags: [] } }), ['spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items']);
    assert.deepEqual(messages(schema, { spec: { replicas: 1, tags: ['a', 'b', 'c'] } }), ['spec.tags: Too many: must have at most 2 items']);
    assert.deepEqual(messages(schema, { spec: { replicas: 1, tags: ['a', 'a'] } }), ['spec.tags: Invalid value: "": spec.tags in body shouldn\'t contain duplicates']);
    assert.deepEqual(messages(schema, { spec: { replicas: 1, tags: [3] } }), ['spec.tags[0]: Invalid value: "integer": spec.tags[0] in body must be of type string: "integer"']);
    assert.deepEqual(messages(schema, { spec: { replicas: 1, labels: { a: 'x', b: 'y' } } }), ['spec.labels: Too many: must have at most 1 item']);
    assert.deepEqual(messages(schema, { spec: { replicas: 1, labels: {} } }), ['spec.labels: Invalid value: 0: spec.labels in body should have at least 1 properties']);
    assert.deepEqual(messages(schema, { spec: { replicas: 1, labels: { a: 1 } } }), ['spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer"']);
    assert.deepEqual(messages(schema, { spec: { replicas: 1, name: null } }), ['spec.name: Invalid value: "null": spec.name in body must be of type string: "null"']);
    assert.deepEqual(messages(schema, { spec: { replicas: 1, either: 'c' } }), [
      'spec.either: Invalid value: "c": "spec.either" must validate at least one schema (anyOf)',
      'spec.either: Invalid value: "c": spec.either in body should match \'^a\'',
    ]);
    assert.deepEqual(messages(schema, { spec: { replicas: 1, one: 5 } }), ['spec.one: Invalid value: 5: "spec.one" must validate one and only one schema (oneOf). Found 2 valid alternatives']);
    assert.deepEqual(messages(schema, { spec: { replicas: 1, never: 'x' } }), ['spec.never: Invalid value: "x": "spec.never" must not validate the schema (not)']);
  });

  it('property: a value generated to fit a schema passes; one of the wrong type fails with exactly a type error', () => {
    const fit = fc.record({
      replicas: fc.integer({ min: 1, max: 100 }),
      color: fc.constantFrom('red', 'blue'),
      name: fc.stringMatching(/^[a-z]{2,5}$/),
      tags: fc.uniqueArray(fc.string(), { minLength: 1, maxLength: 2 }),
    }, { requiredKeys: ['replicas'] });
    fc.assert(fc.property(fit, (spec) => messages(schema, { spec }).length === 0), fuzzParams);
    const notInteger = fc.oneof(fc.string(), fc.boolean(), fc.double({ noInteger: true, noNaN: true, noDefaultInfinity: true }), fc.array(fc.integer()), fc.dictionary(fc.string(), fc.integer()));
    fc.assert(fc.property(notInteger, (replicas) => {
      const errs = validateValue(schema, { spec: { replicas } }, '');
      return errs.length === 1 && errs[0].type === 'FieldValueTypeInvalid' && errs[0].field === 'spec.replicas' && errs[0].badValue === jsonTypeOf(replicas);
    }), fuzzParams);
  });

  it('property: numeric bounds agree with the comparison they state', () => {
    fc.assert(fc.property(fc.integer({ min: -1000, max: 1000 }), fc.integer({ min: -1000, max: 1000 }), fc.boolean(), (value, bound, exclusive) => {
      const max = validateValue({ type: 'integer', maximum: bound, exclusiveMaximum: exclusive }, value, 'v');
      const min = validateValue({ type: 'integer', minimum: bound, exclusiveMinimum: exclusive }, value, 'v');
      return (max.length === 0) === (exclusive ? value < bound : value <= bound) && (min.length === 0) === (exclusive ? value > bound : value >= bound);
    }), fuzzParams);
  });

  it('property: enum membership is JSON equality', () => {
    fc.assert(fc.property(fc.array(fc.jsonValue({ maxDepth: 2 }), { minLength: 1, maxLength: 4 }), fc.jsonValue({ maxDepth: 2 }), (values, value) => {
      const errs = validateValue({ enum: values }, value, 'v');
      return (errs.length === 0) === values.some((e) => jsonEqual(e, value));
    }), fuzzParams);
  });

  it('property: validation never throws on any JSON value against any generated schema', () => {
    const leaf = fc.record({
      type: fc.constantFrom('string', 'integer', 'number', 'boolean', 'object', 'array', undefined),
      minimum: fc.option(fc.integer(), { nil: undefined }), maxLength: fc.option(fc.nat(5), { nil: undefined }),
      pattern: fc.option(fc.constantFrom('^a', '[0-9]+', 'x$'), { nil: undefined }), nullable: fc.option(fc.boolean(), { nil: undefined }),
      enum: fc.option(fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }), { nil: undefined }),
    }, { requiredKeys: [] }) as fc.Arbitrary<Structural>;
    fc.assert(fc.property(leaf, fc.jsonValue({ maxDepth: 3 }), (schema, value) => {
      validateValue({ type: 'object', properties: { a: schema }, additionalProperties: undefined }, { a: value }, '');
      return true;
    }), fuzzParams);
  });
});

describe('structural schema: pruning and defaulting', () => {
  const schema = parse({
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          size: { type: 'integer', default: 3 },
          nested: { type: 'object', default: {}, properties: { mode: { type: 'string', default: 'fast' } } },
          free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          items: { type: 'array', items: { type: 'object', properties: { a: { type: 'string', default: 'x' } } } },
          gone: { type: 'string' },
        },
      },
    },
  });

  it('prunes unknown fields, keeping apiVersion, kind, metadata and preserved subtrees', () => {
    const obj = { apiVersion: 'a/v1', kind: 'K', metadata: { name: 'n' }, spec: { size: 1, extra: 1, free: { any: { thing: 1 } }, items: [{ a: 'y', b: 2 }] }, status: {} };
    assert.deepEqual(prune(obj, schema), ['spec.extra', 'spec.items[0].b', 'status']);
    assert.deepEqual(obj, { apiVersion: 'a/v1', kind: 'K', metadata: { name: 'n' }, spec: { size: 1, free: { any: { thing: 1 } }, items: [{ a: 'y' }] } });
  });

  it('defaults absent fields top-down, nulls of non-nullable fields, and drops other nulls', () => {
    const obj = { spec: { size: null, items: [{}], gone: null } };
    assert.equal(applyDefaults(obj, schema), true);
    assert.deepEqual(obj, { spec: { size: 3, nested: { mode: 'fast' }, items: [{ a: 'x' }] } });
    assert.equal(applyDefaults(obj, schema), false, 'defaulting is idempotent');
  });
});

describe('structural schema: internal form', () => {
  it('converts to the internal Schema with atomic lists unless marked', () => {
    const internal = toInternal(parse({
      type: 'object',
      properties: {
        plain: { type: 'array', items: { type: 'string' } },
        keyed: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } }, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] },
        labels: { type: 'object', additionalProperties: { type: 'string' }, 'x-kubernetes-map-type': 'atomic' },
        port: { 'x-kubernetes-int-or-string': true },
      },
    }), 'Widget');
    assert.equal(internal.type, 'struct');
    if (internal.type !== 'struct') return;
    assert.deepEqual(internal.fields.plain, { type: 'list', items: { type: 'string', description: undefined }, listType: 'atomic', description: undefined });
    assert.deepEqual((internal.fields.keyed as unknown as { listMapKeys: string[] }).listMapKeys, ['name']);
    assert.equal((internal.fields.labels as unknown as { mapType: string }).mapType, 'atomic');
    assert.equal(internal.fields.port.type, 'any');
  });

  it('declares built-ins in it, publishing none of their Go facts', () => {
    const thing = s.struct('Thing', { when: s.time('when'), names: s.setList(s.string()), data: s.map(s.bytes()) }, undefined, {
      proto: { when: 1, names: 2, data: 3 },
    });
    assert.deepEqual(toOpenApiSchema(thing), {
      type: 'object',
      properties: {
        when: { type: 'string', format: 'date-time', description: 'when' },
        names: { type: 'array', items: { type: 'string' }, 'x-orch-list-type': 'set', 'x-kubernetes-list-type': 'set' },
        data: { type: 'object', additionalProperties: { type: 'string', format: 'byte' } },
      },
    });
    assert.deepEqual(validateStructural(thing, 'x'), []);
  });
});
