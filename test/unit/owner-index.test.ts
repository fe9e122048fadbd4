/** The garbage collector's graph: dependents found by owner uid, kept right as references change. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OwnerIndex, splitKey } from '../../src/controllers/garbage-collector/owner-index.js';

describe('OwnerIndex', () => {
  it('finds the dependents of an owner uid and follows changes of references', () => {
    const g = new OwnerIndex();
    g.set('secrets/ns/a', ['u1']);
    g.set('secrets/ns/b', ['u1', 'u2']);
    assert.deepEqual(g.dependentsOf('u1').sort(), ['secrets/ns/a', 'secrets/ns/b']);
    assert.deepEqual(g.dependentsOf('u2'), ['secrets/ns/b']);
    g.set('secrets/ns/b', ['u2']);
    assert.deepEqual(g.dependentsOf('u1'), ['secrets/ns/a']);
    g.remove('secrets/ns/a');
    assert.deepEqual(g.dependentsOf('u1'), []);
    assert.equal(g.ownerCount, 1, 'an owner nobody names is forgotten');
    g.set('secrets/ns/b', []);
    assert.equal(g.ownerCount, 0);
  });

  it('splits storage keys into resource and table path', () => {
    assert.deepEqual(splitKey('secrets/ns/a'), { resource: 'secrets', path: 'ns/a' });
    assert.deepEqual(splitKey('namespaces/x'), { resource: 'namespaces', path: 'x' });
  });
});
