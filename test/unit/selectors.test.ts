import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { LabelSelector, SelectorParseError } from '../../src/api/selection/label-selector.js';
import { FieldSelector } from '../../src/api/selection/field-selector.js';

// Upstream message fragments, spelled out once (note the double spaces RegexError produces).
const NAME_PART =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const PREFIX_PART =
  "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const OPERATORS = 'in, notin, =, ==, !=, gt, lt';
const NOT_INTEGER = "for 'Gt', 'Lt' operators, the value must be an integer";

function parseError(parse: () => unknown): string {
  try {
    parse();
  } catch (err) {
    assert.ok(err instanceof SelectorParseError, `expected SelectorParseError, got ${String(err)}`);
    return err.message;
  }
  assert.fail('expected a parse error');
}

describe('LabelSelector.parse', () => {
  const canonical: [input: string, expected: string][] = [
    ['', ''],
    ['   \t\n', ''],
    ['x', 'x'],
    ['!x', '!x'],
    [' ! x ', '!x'],
    ['x=a', 'x=a'],
    ['x = a', 'x=a'],
    ['x==a', 'x==a'],
    ['x!=a', 'x!=a'],
    ['x=', 'x='],
    ['x=,y', 'x=,y'],
    ['x>1', 'x>1'],
    ['x<10', 'x<10'],
    ['x in (b,a,b)', 'x in (a,b)'],
    ['x notin (a)', 'x notin (a)'],
    ['x in ()', 'x in ()'],
    ['x in (,)', 'x in ()'],
    ['x in (a,)', 'x in (,a)'],
    ['x in (a,,b)', 'x in (,a,b)'],
    ['x in(a)', 'x in (a)'],
    ['in in (in,notin)', 'in in (in,notin)'],
    ['b=1,a,!c', 'a,b=1,!c'],
    ['z, y=2 ,x in (1)', 'x in (1),y=2,z'],
    ['example.com/app=web', 'example.com/app=web'],
    ['A-b_c.D=Mixed.Value_1', 'A-b_c.D=Mixed.Value_1'],
    ['x=a,x=b', 'x=a,x=b'],
    // Upstream's lexer reads 0 as end of input: a NUL where a token starts ends the selector.
    ['x=a \u0000junk', 'x=a'],
  ];
  for (const [input, expected] of canonical) {
    it(`parses ${JSON.stringify(input)} as ${JSON.stringify(expected)}`, () => {
      const selector = LabelSelector.parse(input);
      assert.equal(selector.toString(), expected);
      assert.equal(selector.empty, expected === '');
    });
  }

  it('exposes sorted requirements with operators as Kubernetes names them', () => {
    assert.deepEqual(LabelSelector.parse('b>3,a notin (y,x),c').requirements, [
      { key: 'a', operator: 'notin', values: ['x', 'y'] },
      { key: 'b', operator: 'gt', values: ['3'] },
      { key: 'c', operator: 'exists', values: [] },
    ]);
    assert.deepEqual(LabelSelector.parse('!d,e<1,f==2,g!=3,h=4').requirements, [
      { key: 'd', operator: '!', values: [] },
      { key: 'e', operator: 'lt', values: ['1'] },
      { key: 'f', operator: '==', values: ['2'] },
      { key: 'g', operator: '!=', values: ['3'] },
      { key: 'h', operator: '=', values: ['4'] },
    ]);
  });

  const errors: [input: string, message: string][] = [
    // missing value after operator
    ['x in (', "unable to parse requirement: found '', expected: ',', ')' or identifier"],
    ['x=(', "unable to parse requirement: found '(', expected: identifier"],
    ['x in', "unable to parse requirement: found '' expected: '('"],
    ['x in a', "unable to parse requirement: found 'a' expected: '('"],
    // unclosed or malformed value sets
    ['x in (a', "unable to parse requirement: found '', expected: ',' or ')'"],
    ['x in (a b)', "unable to parse requirement: found 'b', expected: ',' or ')'"],
    ['x in (a,=)', "unable to parse requirement: found '=', expected: ',', or identifier"],
    // operators
    ['x y', `unable to parse requirement: found 'y', expected: ${OPERATORS}`],
    ['x!', `unable to parse requirement: found '!', expected: ${OPERATORS}`],
    ['!=a', "found '!=', expected: !, identifier, or 'end of string'"],
    ['=a', "found '=', expected: !, identifier, or 'end of string'"],
    ['!!x', "unable to parse requirement: found '!', expected: identifier"],
    ['!x=a', "found '=', expected: ',' or 'end of string'"],
    // separators
    ['x=a b', "found 'b', expected: ',' or 'end of string'"],
    ['x,', "found '', expected: identifier after ','"],
    ['x,,y', "found ',', expected: identifier after ','"],
    // a NUL inside a token ends that token only
    ['x=a\u0000b', "found 'b', expected: ',' or 'end of string'"],
    [',x', "found ',', expected: !, identifier, or 'end of string'"],
    // bad keys
    ['a_', `unable to parse requirement: <nil>: Invalid value: "a_": ${NAME_PART}`],
    ['app:web', `unable to parse requirement: <nil>: Invalid value: "app:web": ${NAME_PART}`],
    ['/x', 'unable to parse requirement: <nil>: Invalid value: "/x": prefix part must be non-empty'],
    [
      '/',
      `unable to parse requirement: <nil>: Invalid value: "/": prefix part must be non-empty; name part must be non-empty; ${NAME_PART}`,
    ],
    ['Ex.com/x', `unable to parse requirement: <nil>: Invalid value: "Ex.com/x": ${PREFIX_PART}`],
    [
      `${'a'.repeat(254)}/x`,
      `unable to parse requirement: <nil>: Invalid value: "${'a'.repeat(254)}/x": prefix part must be no more than 253 characters`,
    ],
    [
      'k'.repeat(64),
      `unable to parse requirement: <nil>: Invalid value: "${'k'.repeat(64)}": name part must be no more than 63 characters`,
    ],
    [
      'a/b/c',
      'unable to parse requirement: <nil>: Invalid value: "a/b/c": a qualified name ' +
        "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
        "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')" +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ],
    // bad values (paths index the sorted value set and name the key)
    ['app=a_', `unable to parse requirement: values[0][app]: Invalid value: "a_": ${LABEL_VALUE}`],
    ['app=a"b', `unable to parse requirement: values[0][app]: Invalid value: "a\\"b": ${LABEL_VALUE}`],
    ['app=a\u0001', `unable to parse requirement: values[0][app]: Invalid value: "a\\x01": ${LABEL_VALUE}`],
    [
      `x=${'v'.repeat(64)}`,
      `unable to parse requirement: values[0][x]: Invalid value: "${'v'.repeat(64)}": must be no more than 63 characters`,
    ],
    [
      `x=-${'v'.repeat(63)}`,
      `unable to parse requirement: values[0][x]: Invalid value: "-${'v'.repeat(63)}": must be no more than 63 characters; ${LABEL_VALUE}`,
    ],
    ['x in (ok,b_)', `unable to parse requirement: values[0][x]: Invalid value: "b_": ${LABEL_VALUE}`],
    [
      'x notin (z_,y_)',
      `unable to parse requirement: [values[0][x]: Invalid value: "y_": ${LABEL_VALUE}, values[1][x]: Invalid value: "z_": ${LABEL_VALUE}]`,
    ],
    // gt / lt
    ['x>a', `unable to parse requirement: values[0]: Invalid value: "a": ${NOT_INTEGER}`],
    ['x>', `unable to parse requirement: values[0]: Invalid value: "": ${NOT_INTEGER}`],
    ['x<9223372036854775808', `unable to parse requirement: values[0]: Invalid value: "9223372036854775808": ${NOT_INTEGER}`],
    ['x>-1', `unable to parse requirement: values[0][x]: Invalid value: "-1": ${LABEL_VALUE}`],
    [
      'x>a_',
      `unable to parse requirement: [values[0]: Invalid value: "a_": ${NOT_INTEGER}, values[0][x]: Invalid value: "a_": ${LABEL_VALUE}]`,
    ],
  ];
  for (const [input, message] of errors) {
    it(`rejects ${JSON.stringify(input.length > 40 ? `${input.slice(0, 37)}...` : input)}`, () => {
      assert.equal(parseError(() => LabelSelector.parse(input)), message);
    });
  }
});

describe('LabelSelector.matches', () => {
  const cases: [selector: string, labels: Record<string, string> | undefined, expected: boolean][] = [
    ['', undefined, true],
    ['', { a: '1' }, true],
    ['x', { x: '' }, true],
    ['x', { y: '1' }, false],
    ['x', undefined, false],
    ['!x', { y: '1' }, true],
    ['!x', undefined, true],
    ['!x', { x: '' }, false],
    ['x=a', { x: 'a' }, true],
    ['x=a', { x: 'b' }, false],
    ['x=a', {}, false],
    ['x==a', { x: 'a' }, true],
    ['x=', { x: '' }, true],
    ['x=', {}, false],
    ['x!=a', { x: 'b' }, true],
    ['x!=a', {}, true],
    ['x!=a', { x: 'a' }, false],
    ['x in (a,b)', { x: 'b' }, true],
    ['x in (a,b)', { x: 'c' }, false],
    ['x in (a,b)', {}, false],
    ['x in ()', { x: '' }, true],
    ['x notin (a,b)', { x: 'c' }, true],
    ['x notin (a,b)', {}, true],
    ['x notin (a,b)', { x: 'a' }, false],
    ['x>5', { x: '6' }, true],
    ['x>5', { x: '5' }, false],
    ['x>5', { x: '+6' }, true],
    ['x>5', { x: '0010' }, true],
    ['x>5', { x: 'six' }, false],
    ['x>5', { x: '' }, false],
    ['x>5', {}, false],
    ['x<5', { x: '-7' }, true],
    ['x<5', { x: '5' }, false],
    ['x<5', { x: '9223372036854775808' }, false],
    ['x>9007199254740993', { x: '9007199254740994' }, true],
    ['x>9007199254740993', { x: '9007199254740993' }, false],
    ['x<9223372036854775807', { x: '-9223372036854775808' }, true],
    ['x in (a),y', { x: 'a', y: '' }, true],
    ['x in (a),y', { x: 'a' }, false],
    ['constructor', {}, false],
    ['toString=a', {}, false],
  ];
  for (const [selector, labels, expected] of cases) {
    it(`${JSON.stringify(selector)} ${expected ? 'matches' : 'does not match'} ${JSON.stringify(labels)}`, () => {
      assert.equal(LabelSelector.parse(selector).matches(labels), expected);
    });
  }
});

describe('FieldSelector.parse', () => {
  const canonical: [input: string, expected: string][] = [
    ['', ''],
    [',,', ''],
    ['metadata.name=foo', 'metadata.name=foo'],
    ['metadata.name==foo', 'metadata.name=foo'],
    ['metadata.name!=foo', 'metadata.name!=foo'],
    ['b=1,a!=2', 'a!=2,b=1'],
    ['a=', 'a='],
    ['=', ''],
    ['!=', ''],
    ['=v', '=v'],
    ['a = b ', 'a = b '],
    ['a!b=c', 'a!b=c'],
    ['a=!b', 'a=!b'],
    ['a=b\\,c', 'a=b\\,c'],
    ['a=b\\=c\\\\', 'a=b\\=c\\\\'],
  ];
  for (const [input, expected] of canonical) {
    it(`parses ${JSON.stringify(input)} as ${JSON.stringify(expected)}`, () => {
      const selector = FieldSelector.parse(input);
      assert.equal(selector.toString(), expected);
      assert.equal(selector.empty, expected === '');
    });
  }

  it('unescapes values into requirements', () => {
    assert.deepEqual(FieldSelector.parse('spec.x==a\\,b\\=c\\\\,status.phase!=Running').requirements, [
      { field: 'spec.x', operator: '=', value: 'a,b=c\\' },
      { field: 'status.phase', operator: '!=', value: 'Running' },
    ]);
  });

  const errors: [input: string, message: string][] = [
    ['foo', "invalid selector: 'foo'; can't understand 'foo'"],
    ['a=1,foo', "invalid selector: 'a=1,foo'; can't understand 'foo'"],
    ['zz,yy', "invalid selector: 'zz,yy'; can't understand 'yy'"],
    ['a!b', "invalid selector: 'a!b'; can't understand 'a!b'"],
    ['a=b\\x', 'invalid field selector: invalid escape sequence: \\x'],
    ['a=\\é', 'invalid field selector: invalid escape sequence: \\é'],
    ['a=b\\', 'invalid field selector: invalid escape sequence: \\'],
    ['a=b=c', 'invalid field selector: unescaped character in value: 61'],
    ['a=!=b', 'invalid field selector: unescaped character in value: 61'],
  ];
  for (const [input, message] of errors) {
    it(`rejects ${JSON.stringify(input)}`, () => {
      assert.equal(parseError(() => FieldSelector.parse(input)), message);
    });
  }
});

describe('FieldSelector behaviour', () => {
  const pod: Record<string, string> = { 'metadata.name': 'web-1', 'status.phase': 'Running', 'spec.nodeName': '' };
  const lookup = (field: string): string | undefined => pod[field];

  const cases: [selector: string, expected: boolean][] = [
    ['', true],
    ['metadata.name=web-1', true],
    ['metadata.name==web-1', true],
    ['metadata.name=web-2', false],
    ['metadata.name!=web-2', true],
    ['metadata.name!=web-1', false],
    ['spec.nodeName=', true],
    ['spec.nodeName!=', false],
    ['metadata.namespace=', true],
    ['metadata.namespace!=', false],
    ['metadata.name=web-1,status.phase!=Pending', true],
    ['metadata.name=web-1,status.phase=Pending', false],
  ];
  for (const [selector, expected] of cases) {
    it(`${JSON.stringify(selector)} ${expected ? 'matches' : 'does not match'}`, () => {
      assert.equal(FieldSelector.parse(selector).matches(lookup), expected);
    });
  }

  it('exactValue returns the pinned value of an equality requirement only', () => {
    const selector = FieldSelector.parse('status.phase!=Failed,metadata.name==web-1');
    assert.equal(selector.exactValue('metadata.name'), 'web-1');
    assert.equal(selector.exactValue('status.phase'), undefined);
    assert.equal(selector.exactValue('spec.nodeName'), undefined);
  });

  it('checkFields reports the first unsupported field in canonical order', () => {
    const allowed = new Set(['metadata.name', 'metadata.namespace']);
    const message = (field: string): string => `field label not supported: ${field}`;
    FieldSelector.parse('metadata.name=a,metadata.namespace!=b').checkFields(allowed, message);
    assert.equal(
      parseError(() => FieldSelector.parse('z.field=1,metadata.name=a,spec.x=2').checkFields(allowed, message)),
      'field label not supported: spec.x',
    );
  });
});
