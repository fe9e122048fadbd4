/** The selectors authorizers see (AuthorizeWithSelectors): requests' and reviews', as authorization/v1 requirements. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { fieldSelectorRequirements, labelSelectorRequirements, reviewFieldSelector, reviewLabelSelector } from '../../src/auth/authz/selector-requirements.js';

describe('selector requirements for authorization', () => {
  it('turns field selector terms into In and NotIn with one value', () => {
    assert.deepEqual(fieldSelectorRequirements('spec.nodeName==n1,metadata.name!=x'), [
      { key: 'metadata.name', operator: 'NotIn', values: ['x'] }, { key: 'spec.nodeName', operator: 'In', values: ['n1'] },
    ]);
    assert.equal(fieldSelectorRequirements('=,!='), undefined, 'selects everything: nothing narrows');
    assert.equal(fieldSelectorRequirements('no operator'), undefined, 'does not parse: nothing narrows');
  });

  it('turns label selector requirements into authorization/v1 operators, leaving out gt and lt', () => {
    assert.deepEqual(labelSelectorRequirements('a=1,b!=2,c in (y,x),d notin (z),e,!f,g>3,h<4'), [
      { key: 'a', operator: 'In', values: ['1'] }, { key: 'b', operator: 'NotIn', values: ['2'] },
      { key: 'c', operator: 'In', values: ['x', 'y'] }, { key: 'd', operator: 'NotIn', values: ['z'] },
      { key: 'e', operator: 'Exists' }, { key: 'f', operator: 'DoesNotExist' },
    ]);
    assert.equal(labelSelectorRequirements('g>3'), undefined, 'only unknown operators: nothing narrows');
    assert.equal(labelSelectorRequirements('a in ('), undefined);
  });

  it('reads a review\'s requirements as ResourceAttributesFrom does, else its raw selector, and says what it could not read', () => {
    assert.deepEqual(reviewLabelSelector({ requirements: [{ key: 'k', operator: 'In', values: ['v'] }, { key: 'n', operator: 'Newer' }] }),
      { requirements: [{ key: 'k', operator: 'In', values: ['v'] }], ignored: 'partially ignored' });
    assert.deepEqual(reviewLabelSelector({ requirements: [{ key: 'n', operator: 'Newer' }] }), { requirements: undefined, ignored: 'ignored' });
    // requirements win over a raw selector
    assert.deepEqual(reviewLabelSelector({ rawSelector: 'app=x', requirements: [{ key: 'e', operator: 'Exists' }] }), { requirements: [{ key: 'e', operator: 'Exists' }] });
    assert.deepEqual(reviewLabelSelector({ rawSelector: 'app=x' }), { requirements: [{ key: 'app', operator: 'In', values: ['x'] }] });
    assert.deepEqual(reviewLabelSelector({ rawSelector: 'a in (' }), { requirements: undefined, ignored: 'ignored' });
    // fields: In and NotIn with exactly one value; Exists and more values cannot be read
    assert.deepEqual(reviewFieldSelector({ requirements: [{ key: 'a', operator: 'NotIn', values: ['1'] }, { key: 'b', operator: 'In', values: ['1', '2'] }, { key: 'c', operator: 'Exists' }] }),
      { requirements: [{ key: 'a', operator: 'NotIn', values: ['1'] }], ignored: 'partially ignored' });
    assert.deepEqual(reviewFieldSelector({ rawSelector: 'x' }), { requirements: undefined, ignored: 'ignored' });
    assert.deepEqual(reviewFieldSelector({}), { requirements: undefined });
    assert.deepEqual(reviewLabelSelector(undefined), { requirements: undefined });
  });

  it('never throws on any selector text or review attributes (fast-check)', () => {
    const text = fc.oneof(fc.string(), fc.stringMatching(/^[a-z!=<>(), .\\-]{0,24}$/));
    const requirement = fc.record({ key: fc.option(fc.string(), { nil: undefined }), operator: fc.option(fc.oneof(fc.string(), fc.constantFrom('In', 'NotIn', 'Exists', 'DoesNotExist')), { nil: undefined }), values: fc.option(fc.array(fc.string(), { maxLength: 3 }), { nil: undefined }) });
    const attributes = fc.option(fc.record({ rawSelector: fc.option(text, { nil: undefined }), requirements: fc.option(fc.array(requirement, { maxLength: 3 }), { nil: undefined }) }), { nil: undefined });
    fc.assert(fc.property(text, attributes, (raw, review) => {
      for (const read of [fieldSelectorRequirements(raw), labelSelectorRequirements(raw), reviewFieldSelector(review).requirements, reviewLabelSelector(review).requirements]) {
        // what is read is authorization/v1 requirements, or nothing
        for (const r of read ?? []) assert.ok(['In', 'NotIn', 'Exists', 'DoesNotExist'].includes(r.operator));
        if (read) assert.ok(read.length > 0);
      }
    }), { numRuns: 500 });
  });
});
