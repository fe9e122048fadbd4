/**
 * Which garbage-collector finalizers a DELETE leaves, against the generic Store's
 * deletionFinalizersForGarbageCollection and the namespace registry's rule.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { finalizersAfterDelete, namespaceFinalizersAfterDelete, type GarbageCollectionPolicy, type PropagationOptions } from '../../src/api/deletion-policy.js';

type Case = [finalizers: string[], options: PropagationOptions, expected: string[]];

describe('finalizers after a DELETE (generic store)', () => {
  const check = (policy: GarbageCollectionPolicy, cases: Case[]) => {
    for (const [finalizers, options, expected] of cases) {
      assert.deepEqual([...finalizersAfterDelete(policy, finalizers, options)], expected, `${policy} ${JSON.stringify(finalizers)} ${JSON.stringify(options)}`);
    }
  };

  it('DeleteDependents (the default): background unless the options or existing finalizers say otherwise', () => {
    check('DeleteDependents', [
      [[], {}, []],
      [['a/b'], {}, ['a/b']],
      [[], { propagationPolicy: 'Background' }, []],
      [[], { propagationPolicy: 'Foreground' }, ['foregroundDeletion']],
      [[], { propagationPolicy: 'Orphan' }, ['orphan']],
      [[], { orphanDependents: true }, ['orphan']],
      [[], { orphanDependents: false }, []],
      [['a/b'], { propagationPolicy: 'Foreground' }, ['a/b', 'foregroundDeletion']],
      // an existing finalizer decides when the options do not
      [['orphan'], {}, ['orphan']],
      [['foregroundDeletion'], {}, ['foregroundDeletion']],
      // the options switch the propagation of an object already waiting
      [['foregroundDeletion', 'a/b'], { propagationPolicy: 'Orphan' }, ['a/b', 'orphan']],
      [['orphan'], { propagationPolicy: 'Background' }, []],
      [['orphan'], { orphanDependents: false }, []],
    ]);
  });

  it('keeps the array (and its order) when nothing changes', () => {
    const finalizers = ['foregroundDeletion', 'a/b'];
    assert.equal(finalizersAfterDelete('DeleteDependents', finalizers, { propagationPolicy: 'Foreground' }), finalizers);
  });

  it('OrphanDependents orphans by default; Unsupported never adds a finalizer', () => {
    check('OrphanDependents', [
      [[], {}, ['orphan']],
      [[], { propagationPolicy: 'Background' }, []],
      [['foregroundDeletion'], {}, ['foregroundDeletion']],
    ]);
    check('Unsupported', [
      [[], { propagationPolicy: 'Foreground' }, []],
      [[], { orphanDependents: true }, []],
      [['orphan', 'a/b'], {}, ['a/b']],
    ]);
  });
});

describe('finalizers after a namespace is first deleted', () => {
  it('sets or clears each finalizer by an explicit option; orphanDependents=false means foreground', () => {
    const cases: Case[] = [
      [[], {}, []],
      [['orphan'], {}, ['orphan']],
      [[], { propagationPolicy: 'Orphan' }, ['orphan']],
      [[], { propagationPolicy: 'Foreground' }, ['foregroundDeletion']],
      [['orphan'], { propagationPolicy: 'Background' }, []],
      [[], { orphanDependents: true }, ['orphan']],
      [[], { orphanDependents: false }, ['foregroundDeletion']],
    ];
    for (const [finalizers, options, expected] of cases) {
      assert.deepEqual([...namespaceFinalizersAfterDelete(finalizers, options)], expected, `${JSON.stringify(finalizers)} ${JSON.stringify(options)}`);
    }
  });
});
