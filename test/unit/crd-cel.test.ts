/**
 * CEL validation rules of CRD schemas: compilation errors, rule fields, the cost estimate,
 * Kubernetes' libraries, and evaluation with self, oldSelf (transition rules, correlation,
 * optionalOldSelf), message, messageExpression, reason and fieldPath.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseStructural, type SchemaProblem, type Structural } from '../../src/api/schema/structural.js';
import { RuleValidator } from '../../src/apiextensions/cel/rule-validator.js';
import { validateRules } from '../../src/apiextensions/cel/rules.js';
import { formatFieldError } from '../../src/status/status-error.js';

function parse(raw: unknown): Structural {
  const problems: SchemaProblem[] = [];
  const out = parseStructural(raw, 'schema', problems);
  assert.deepEqual(problems, []);
  return out;
}

const withRules = (rules: unknown[], props: Record<string, unknown> = {}) => parse({
  type: 'object',
  properties: { spec: { type: 'object', 'x-kubernetes-validations': rules, properties: { min: { type: 'integer' }, max: { type: 'integer' }, name: { type: 'string', maxLength: 64 }, tags: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 10 } }, ...props } } },
});

const check = (schema: Structural) => validateRules(schema, 'schema').map(formatFieldError);
const run = (schema: Structural, obj: unknown, old?: unknown) => new RuleValidator(schema).validate(obj, old).map(formatFieldError);

describe('CEL rules: checked when the CRD is written', () => {
  it('accepts rules that compile within the cost budget', () => {
    assert.deepEqual(check(withRules([{ rule: 'self.min <= self.max', message: 'min must not exceed max' }, { rule: 'self.tags.all(t, t.size() < 5)' }])), []);
  });

  it('reports syntax errors, undeclared names and bad fields', () => {
    const errs = check(withRules([
      { rule: 'self.min <=' }, { rule: 'foo == 1' }, { rule: '' },
      { rule: 'true', reason: 'Nope' }, { rule: 'true', message: 'two\nlines' }, { rule: 'true', optionalOldSelf: true },
      { rule: 'true', messageExpression: 'self.(' },
    ]));
    const p = 'schema.properties[spec].x-kubernetes-validations';
    assert.match(errs[0], new RegExp(`^${p.replace(/[[\].]/g, '\\$&')}\\[0\\]\\.rule: Invalid value: "self.min <=": compilation failed: ERROR: `));
    assert.equal(errs[1], `${p}[1].rule: Invalid value: "foo == 1": compilation failed: ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')`);
    assert.equal(errs[2], `${p}[2].rule: Required value: rule is not specified`);
    assert.equal(errs[3], `${p}[3].reason: Unsupported value: "Nope": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`);
    assert.equal(errs[4], `${p}[4].message: Invalid value: "two\\nlines": message must not contain line breaks`);
    assert.equal(errs[5], `${p}[5].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule`);
    assert.match(errs[6], /\[6\]\.messageExpression: Invalid value: "self\.\(": messageExpression compilation failed: ERROR: /);
  });

  it('refuses rules whose estimated cost exceeds the budget, and transition rules under atomic lists', () => {
    const unbounded = parse({ type: 'object', properties: { list: { type: 'array', items: { type: 'string' }, 'x-kubernetes-validations': [{ rule: 'self.all(x, self.all(y, x == y))' }] } } });
    const hint = '(try simplifying the rule(s), or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)';
    assert.deepEqual(check(unbounded), [
      `schema.properties[list].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x ${hint}`,
      `schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x ${hint}`,
    ]);
    const bounded = parse({ type: 'object', properties: { list: { type: 'array', maxItems: 100, items: { type: 'string', maxLength: 10 }, 'x-kubernetes-validations': [{ rule: 'self.all(x, self.all(y, x == y))' }] } } });
    assert.deepEqual(check(bounded), []);
    const atomic = parse({ type: 'object', properties: { list: { type: 'array', maxItems: 5, items: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self >= oldSelf' }] } } } });
    assert.deepEqual(check(atomic), ['schema.properties[list].items.x-kubernetes-validations[0].rule: Forbidden: oldSelf cannot be used on the uncorrelatable portion of the schema within schema.properties[list].items']);
  });
});

describe('CEL rules: evaluated on objects', () => {
  it('reports a failed rule with its message, default message, reason and fieldPath', () => {
    const schema = withRules([
      { rule: 'self.min <= self.max', message: 'min must not exceed max' },
      { rule: 'self.name.startsWith("x")' },
      { rule: 'self.tags.size() < 2', reason: 'FieldValueForbidden', fieldPath: '.tags', messageExpression: '"too many tags: " + string(self.tags.size())' },
    ]);
    assert.deepEqual(run(schema, { spec: { min: 1, max: 2, name: 'xy', tags: [] } }), []);
    assert.deepEqual(run(schema, { spec: { min: 3, max: 2, name: 'ab', tags: ['a', 'b'] } }), [
      'spec: Invalid value: "object": min must not exceed max',
      'spec: Invalid value: "object": failed rule: self.name.startsWith("x")',
      'spec.tags: Forbidden: too many tags: 2',
    ]);
  });

  it('reports evaluation errors as Kubernetes words them', () => {
    assert.deepEqual(run(withRules([{ rule: 'self.min > 0' }]), { spec: { max: 1 } }), ['spec: Invalid value: "object": no such key: min evaluating rule: self.min > 0']);
  });

  it('runs transition rules only on update where the old value correlates, or with optionalOldSelf', () => {
    const schema = parse({
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            size: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self >= oldSelf', message: 'size may only grow' }] },
            mode: { type: 'string', 'x-kubernetes-validations': [{ rule: 'oldSelf.hasValue() ? self == oldSelf.value() : self == "initial"', optionalOldSelf: true, message: 'mode is immutable and starts initial' }] },
            ports: {
              type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], maxItems: 4,
              items: { type: 'object', properties: { name: { type: 'string', maxLength: 8 }, port: { type: 'integer' } }, 'x-kubernetes-validations': [{ rule: 'self.port == oldSelf.port', message: 'port is immutable' }] },
            },
          },
        },
      },
    });
    assert.deepEqual(check(schema), []);
    assert.deepEqual(run(schema, { spec: { size: 1, mode: 'initial', ports: [{ name: 'a', port: 1 }] } }), [], 'create: transition rules without oldSelf skipped');
    assert.deepEqual(run(schema, { spec: { size: 1, mode: 'other' } }), ['spec.mode: Invalid value: "string": mode is immutable and starts initial']);
    const old = { spec: { size: 2, mode: 'initial', ports: [{ name: 'a', port: 1 }] } };
    assert.deepEqual(run(schema, { spec: { size: 3, mode: 'initial', ports: [{ name: 'b', port: 9 }, { name: 'a', port: 1 }] } }, old), []);
    assert.deepEqual(run(schema, { spec: { size: 1, mode: 'changed', ports: [{ name: 'a', port: 2 }] } }, old), [
      'spec.size: Invalid value: "integer": size may only grow',
      'spec.mode: Invalid value: "string": mode is immutable and starts initial',
      'spec.ports[0]: Invalid value: "object": port is immutable',
    ]);
  });

  it('has Kubernetes\' libraries: lists, strings, regex, url, ip/cidr, quantity', () => {
    const schema = parse({ type: 'object', properties: { s: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, 'x-kubernetes-validations': [
      { rule: '[3, 1, 2].sum() == 6 && [1, 2, 3].isSorted() && [4, 9].max() == 9 && [4, 9].min() == 4 && [1, 2, 1].lastIndexOf(1) == 2' },
      { rule: 'self.name.lowerAscii() == "abc" && self.name.split("B").size() == 2 && self.name.replace("A", "x") == "xBC"' },
      { rule: 'self.name.find("[A-Z]+") == "ABC" && "a1b22".findAll("[0-9]+") == ["1", "22"] && self.name.matches("^[A-Z]+$")' },
      { rule: 'isURL(self.url) && url(self.url).getHost() == "example.com:8443" && url(self.url).getScheme() == "https" && url(self.url).getEscapedPath() == "/p"' },
      { rule: 'isIP("10.0.0.1") && ip("10.0.0.1").family() == 4 && cidr("10.0.0.0/8").containsIP("10.1.2.3") && !cidr("10.0.0.0/8").containsIP("11.0.0.1") && isCIDR("fd00::/8")' },
      { rule: 'isQuantity("1Gi") && quantity("1Gi").isGreaterThan(quantity("512Mi")) && quantity("500m").asApproximateFloat() == 0.5' },
    ] } } });
    assert.deepEqual(check(schema), []);
    assert.deepEqual(run(schema, { s: { name: 'ABC', url: 'https://example.com:8443/p?q=1' } }), []);
  });
});
