/**
 * The name rules of k8s.io/apimachinery/pkg/util/validation as the server words them: lengths
 * counted in UTF-8 bytes as Go's len() counts them, and an empty name part failing its pattern too.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isDns1123Label, isDns1123Subdomain, isQualifiedName, isValidLabelValue } from '../../src/api/validation/names.js';

const namePattern = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

describe('name rules', () => {
  it('accepts what the patterns accept', () => {
    for (const key of ['a', 'app', 'example.com/app', 'a.b-c_d', 'A1', 'x.example.com/My_Name-1']) assert.deepEqual(isQualifiedName(key), [], key);
    for (const value of ['', 'v', 'my_value', '12345', 'a'.repeat(63)]) assert.deepEqual(isValidLabelValue(value), [], value);
    for (const name of ['a', 'a-b', 'a.b', '0', 'x'.repeat(253)]) assert.deepEqual(isDns1123Subdomain(name), [], name);
    assert.deepEqual(isDns1123Label('my-name'), []);
  });

  it('reports an empty name part as empty and as not matching, as IsQualifiedName does', () => {
    assert.deepEqual(isQualifiedName(''), ['name part must be non-empty', namePattern]);
    assert.deepEqual(isQualifiedName('example.com/'), ['name part must be non-empty', namePattern]);
    assert.deepEqual(isQualifiedName('/x'), ['prefix part must be non-empty']);
  });

  it('counts lengths in UTF-8 bytes', () => {
    // 32 characters, 64 bytes: over the 63 a name part may have
    assert.deepEqual(isQualifiedName('é'.repeat(32)), ['name part must be no more than 63 characters', namePattern]);
    assert.equal(isValidLabelValue('é'.repeat(32))[0], 'must be no more than 63 characters');
    assert.equal(isDns1123Label('é'.repeat(32))[0], 'must be no more than 63 characters');
  });

  it('refuses what the patterns refuse, long inputs included', () => {
    for (const name of ['-a', 'a-', 'A', 'a..b', '.a', 'a.', 'a_b']) assert.equal(isDns1123Subdomain(name).length, 1, name);
    for (const key of ['-a', 'a-', 'a b', 'a/b/c', 'Example.com/a']) assert.ok(isQualifiedName(key).length > 0, key);
    // the checks are linear; a backtracking regex would be quadratic on this
    const long = `a${'-'.repeat(200_000)}`;
    assert.equal(isDns1123Subdomain(long).length, 2);
    assert.equal(isQualifiedName(long).length, 2);
  });

  it('agrees with the upstream patterns on any string (the checks are hand-written)', () => {
    const label = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
    const qualified = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
    const patterns = {
      label: new RegExp(`^${label}$`), subdomain: new RegExp(`^${label}(\\.${label})*$`),
      qualified: new RegExp(`^${qualified}$`), labelValue: new RegExp(`^(${qualified})?$`),
    };
    const text = fc.string({ unit: fc.constantFrom('a', 'Z', '0', '-', '.', '_', '/', ' ', 'é'), maxLength: 12 });
    const failsPattern = (errs: string[]) => errs.some((e) => e.includes('regex used for validation'));
    fc.assert(fc.property(text, (s) => {
      assert.equal(failsPattern(isDns1123Label(s)), !patterns.label.test(s), `label ${JSON.stringify(s)}`);
      assert.equal(failsPattern(isDns1123Subdomain(s)), !patterns.subdomain.test(s), `subdomain ${JSON.stringify(s)}`);
      assert.equal(failsPattern(isValidLabelValue(s)), !patterns.labelValue.test(s), `label value ${JSON.stringify(s)}`);
      if (!s.includes('/')) assert.equal(failsPattern(isQualifiedName(s)), !patterns.qualified.test(s), `qualified name ${JSON.stringify(s)}`);
    }), { numRuns: 2000 });
  });
});
