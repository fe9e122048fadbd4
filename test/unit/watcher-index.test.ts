import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WatcherIndex, type IndexedObject, type IndexTerm } from '../../src/watch/watcher-index.js';

function candidates(index: WatcherIndex<string>, object: IndexedObject, previous?: IndexedObject): string[] {
  const out: string[] = [];
  index.forCandidates(object, previous, (w) => out.push(w));
  return out.sort();
}

describe('WatcherIndex', () => {
  const terms: Record<string, IndexTerm> = {
    everything: { by: 'all' },
    'ns-a': { by: 'namespace', value: 'a' },
    'ns-b': { by: 'namespace', value: 'b' },
    'name-x': { by: 'name', value: 'x' },
    'app-web': { by: 'label', key: 'app', values: ['web'] },
    'tier-in': { by: 'label', key: 'tier', values: ['front', 'back'] },
  };
  const index = new WatcherIndex<string>();
  for (const [w, term] of Object.entries(terms)) index.add(w, term);

  it('offers a change only to the watchers filed under its name, namespace and label values, and the unfiled', () => {
    assert.deepEqual(candidates(index, { name: 'y', namespace: 'a' }), ['everything', 'ns-a']);
    assert.deepEqual(candidates(index, { name: 'x', namespace: 'c' }), ['everything', 'name-x']);
    assert.deepEqual(candidates(index, { name: 'y', namespace: 'c', labels: { app: 'web', tier: 'back' } }), ['app-web', 'everything', 'tier-in']);
    assert.deepEqual(candidates(index, { name: 'y', namespace: 'c', labels: { app: 'db' } }), ['everything']);
  });

  it('reaches the watchers of the previous version too (an object leaving a selector), each once', () => {
    assert.deepEqual(candidates(index, { name: 'y', namespace: 'b', labels: { app: 'db' } }, { name: 'y', namespace: 'b', labels: { app: 'web', tier: 'front' } }),
      ['app-web', 'everything', 'ns-b', 'tier-in']);
    assert.deepEqual(candidates(index, { name: 'y', labels: { tier: 'front' } }, { name: 'y', labels: { tier: 'back' } }), ['everything', 'tier-in']);
  });

  it('forgets removed watchers and empty buckets', () => {
    const small = new WatcherIndex<string>();
    small.add('w', { by: 'label', key: 'app', values: ['web'] });
    small.add('n', { by: 'name', value: 'x' });
    assert.equal(small.size, 2);
    small.delete('w');
    small.delete('n');
    small.delete('never-added');
    assert.equal(small.size, 0);
    assert.deepEqual(candidates(small, { name: 'x', labels: { app: 'web' } }), []);
  });

  it('visits every watcher of a resource exactly when none can be filed', () => {
    const flat = new WatcherIndex<number>();
    for (let i = 0; i < 100; i++) flat.add(i, { by: 'all' });
    let visits = 0;
    flat.forCandidates({ name: 'o' }, { name: 'o' }, () => visits++);
    assert.equal(visits, 100);
    assert.equal([...flat.all()].length, 100);
  });
});
