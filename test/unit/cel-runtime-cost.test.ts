/**
 * The runtime cost of CRD validation rules: what an evaluation is charged (identifiers and
 * selections 1, calls 1 or by their arguments' sizes, comprehension bodies per iteration), the
 * per-call limit and the per-object budget with Kubernetes' messages, and that evaluation stops
 * at the first rule past either.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseStructural, type SchemaProblem, type Structural } from '../../src/api/schema/structural.js';
import { RuleValidator } from '../../src/apiextensions/cel/rule-validator.js';
import { compileRule } from '../../src/apiextensions/cel/rules.js';
import { metered, perCallLimit } from '../../src/apiextensions/cel/runtime-cost.js';
import { celValueOf } from '../../src/apiextensions/cel/values.js';
import { formatFieldError } from '../../src/status/status-error.js';

function parse(raw: unknown): Structural {
  const problems: SchemaProblem[] = [];
  const out = parseStructural(raw, 'schema', problems);
  assert.deepEqual(problems, []);
  return out;
}

const spec = parse({
  type: 'object',
  properties: {
    min: { type: 'integer' }, max: { type: 'integer' }, name: { type: 'string' },
    tags: { type: 'array', items: { type: 'string' } },
  },
});

/** The cost of one evaluation of `rule` on `value`. */
function costOf(rule: string, value: unknown): number {
  const { compiled, errs } = compileRule({ rule }, spec, 'rule');
  assert.deepEqual(errs, []);
  const program = compiled!.program;
  const outcome = metered(program.baseCost, perCallLimit, () => program.run({ self: celValueOf(value, spec), oldSelf: null }));
  assert.equal(outcome.result, true, `${rule} holds`);
  return outcome.cost;
}

describe('CEL runtime cost', () => {
  it('charges identifiers, selections and calls', () => {
    // self(1) .min(1) self(1) .max(1) <=(1)
    assert.equal(costOf('self.min <= self.max', { min: 1, max: 2 }), 5);
    // has(self.min): self (1), the presence test nothing; && and constants nothing
    assert.equal(costOf('has(self.min) && self.min == 1', { min: 1 }), 4);
    // matches: ceil((1 + 10) * 0.1) * ceil(8 * 0.25) = 4, plus self.name (2)
    assert.equal(costOf("self.name.matches('^[a-z]+$')", { name: 'abcdefghij' }), 6);
    // contains on strings: ceil(20 * 0.1) * ceil(4 * 0.1) = 2
    assert.equal(costOf("self.name.contains('klmn')", { name: 'abcdefghijklmnopqrst' }), 4);
  });

  it('charges a comprehension\'s body once per element', () => {
    const three = costOf('self.tags.all(t, t.size() < 5)', { tags: ['a', 'b', 'c'] });
    const six = costOf('self.tags.all(t, t.size() < 5)', { tags: ['a', 'b', 'c', 'd', 'e', 'f'] });
    // per element: the loop condition (@not_strictly_false and the accumulator: 2), the step
    // (accumulator and t: 2; size() and <: 2)
    assert.equal(six - three, 3 * 6);
    const nested = costOf('self.tags.all(a, self.tags.all(b, a.size() == b.size()))', { tags: ['a', 'b', 'c', 'd'] });
    assert.ok(nested > 4 * 4 * 5, `nested loops cost by the product of their ranges (${nested})`);
  });

  it('refuses a rule past the per-call limit and runs no further rules', () => {
    const schema = parse({
      type: 'object',
      properties: {
        numbers: { type: 'array', items: { type: 'integer' }, 'x-kubernetes-validations': [{ rule: 'self.all(x, x >= 0)' }] },
        name: { type: 'string', 'x-kubernetes-validations': [{ rule: "self == 'never'" }] },
      },
    });
    const validator = new RuleValidator(schema);
    assert.deepEqual(validator.validate({ numbers: [1, 2, 3], name: 'never' }).map(formatFieldError), []);
    const errs = validator.validate({ numbers: new Array(300_000).fill(0), name: 'other' }).map(formatFieldError);
    assert.deepEqual(errs, [
      'numbers: Invalid value: "array": \'operation cancelled: actual cost limit exceeded\': no further validation rules will be run due to call cost exceeds limit for rule: self.all(x, x >= 0)',
    ]);
  });

  it('refuses an object past the budget at the rule that runs out of it, and runs no further rules', () => {
    const schema = parse({
      type: 'object',
      properties: { names: { type: 'array', items: { type: 'string', 'x-kubernetes-validations': [{ rule: "self.matches('^[a-z]+$')", message: 'lower case letters' }] } } },
    });
    const validator = new RuleValidator(schema);
    const names = Array.from({ length: 100 }, () => 'abcdefghij');
    // each item: self (1) and matches (ceil(1.1) * ceil(2) = 4)
    assert.deepEqual(validator.validate({ names }, undefined, 5 * 100), []);
    const errs = validator.validate({ names: [...names, 'NOT-LOWER'] }, undefined, 5 * 100).map(formatFieldError);
    assert.deepEqual(errs, ['names[100]: Invalid value: "string": validation failed due to running out of cost budget, no further validation rules will be run']);
    const failing = validator.validate({ names: ['NOT', ...names] }, undefined, 5 * 100).map(formatFieldError);
    assert.deepEqual(failing, [
      'names[0]: Invalid value: "string": lower case letters',
      'names[100]: Invalid value: "string": validation failed due to running out of cost budget, no further validation rules will be run',
    ]);
  });
});
