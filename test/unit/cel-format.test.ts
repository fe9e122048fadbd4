/**
 * Kubernetes' CEL format library in CRD validation rules: format.named, the named formats and
 * validate's optional list of apimachinery's messages, as rules and messageExpressions use them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseStructural, type SchemaProblem, type Structural } from '../../src/api/schema/structural.js';
import { RuleValidator } from '../../src/apiextensions/cel/rule-validator.js';
import { compileRule, validateRules } from '../../src/apiextensions/cel/rules.js';
import { metered, perCallLimit } from '../../src/apiextensions/cel/runtime-cost.js';
import { celValueOf, plainOf } from '../../src/apiextensions/cel/values.js';
import { formatFieldError } from '../../src/status/status-error.js';

function parse(raw: unknown): Structural {
  const problems: SchemaProblem[] = [];
  const out = parseStructural(raw, 'schema', problems);
  assert.deepEqual(problems, []);
  return out;
}

const str = parse({ type: 'string' });

/** The value of `expr` with `self` bound to `value`, and what evaluating it cost. */
function evaluate(expr: string, value: string): { value: unknown; cost: number } {
  const { compiled, errs } = compileRule({ rule: expr }, str, 'rule');
  assert.deepEqual(errs.map(formatFieldError), []);
  const program = compiled!.program;
  const out = metered(program.baseCost, perCallLimit, () => program.run({ self: celValueOf(value, str), oldSelf: null }));
  return { value: plainOf(out.result), cost: out.cost };
}

const dns1123LabelMessage = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

describe('CEL format library', () => {
  it('validates with the named formats: none when valid, the messages when not', () => {
    assert.equal(evaluate('format.dns1123Label().validate(self).hasValue()', 'my-name').value, false);
    assert.deepEqual(evaluate('format.dns1123Label().validate(self).value()', 'My_Name').value, [dns1123LabelMessage]);
    assert.equal(evaluate('format.dns1123Subdomain().validate(self).hasValue()', 'apiextensions.k8s.io').value, false);
    assert.equal(evaluate('format.qualifiedName().validate(self).hasValue()', 'apiextensions.k8s.io/v1beta1').value, false);
    assert.equal(evaluate('format.dns1035Label().validate(self).hasValue()', '1abc').value, true);
    assert.equal(evaluate('format.dns1123LabelPrefix().validate(self).hasValue()', 'my-prefix-').value, false);
    assert.equal(evaluate('format.dns1123Label().validate(self).hasValue()', 'my-prefix-').value, true);
    assert.equal(evaluate('format.labelValue().validate(self).hasValue()', '').value, false);
    assert.deepEqual(evaluate('format.uuid().validate(self).value()', 'not-a-uuid').value, ['does not match the UUID format']);
    assert.deepEqual(evaluate('format.byte().validate(self).value()', 'a!').value, ['invalid base64']);
    assert.deepEqual(evaluate('format.date().validate(self).value()', '2021-13-45').value, ['invalid date']);
    assert.equal(evaluate('format.datetime().validate(self).hasValue()', '2021-01-01T00:00:00Z').value, false);
    assert.deepEqual(evaluate('format.uri().validate(self).value()', 'example').value, ['parse "example": invalid URI for request']);
  });

  it('looks formats up by name', () => {
    assert.equal(evaluate("format.named('dns1123Subdomain').hasValue()", '').value, true);
    assert.equal(evaluate("format.named('nope').hasValue()", '').value, false);
    assert.equal(evaluate("format.named('dns1035Label').value().validate(self).hasValue()", 'abc').value, false);
  });

  it('charges validate as a regex of the format\'s size', () => {
    // self (1) + dns1123Label() (1) + validate: ceil((1 + 10) * 0.1) * ceil(30 * 0.25) = 2 * 8 + hasValue (1)
    assert.equal(evaluate('format.dns1123Label().validate(self).hasValue()', 'abcdefghij').cost, 19);
  });

  it('serves rules and messageExpressions of CRDs', () => {
    const schema = parse({
      type: 'object',
      properties: {
        host: {
          type: 'string', maxLength: 253,
          'x-kubernetes-validations': [{ rule: '!format.dns1123Subdomain().validate(self).hasValue()', messageExpression: "'host: ' + format.dns1123Subdomain().validate(self).value().join(', ')" }],
        },
      },
    });
    assert.deepEqual(validateRules(schema, 'schema').map(formatFieldError), []);
    const errs = new RuleValidator(schema).validate({ host: 'Bad_Host' }).map(formatFieldError);
    assert.deepEqual(errs, [`host: Invalid value: "string": host: ${"a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"}`]);
    assert.deepEqual(new RuleValidator(schema).validate({ host: 'good.example.com' }), []);
  });

  it('keeps `format` a namespace, not a variable', () => {
    const { errs } = compileRule({ rule: 'format == 1' }, str, 'rule');
    assert.deepEqual(errs.map(formatFieldError), ['rule.rule: Invalid value: "format == 1": compilation failed: ERROR: <input>:1:1: undeclared reference to \'format\' (in container \'\')']);
  });
});
