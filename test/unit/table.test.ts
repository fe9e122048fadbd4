import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { serviceAccountKind } from '../../src/api/core/service-account.js';
import type { KindDeclaration } from '../../src/api/kind.js';
import { humanDuration } from '../../src/api/printing.js';
import { tableOf } from '../../src/codec/table.js';

describe('humanDuration (kubectl ages)', () => {
  const s = 1000, m = 60 * s, h = 60 * m, d = 24 * h;
  const cases: Array<[number, string]> = [
    [-5 * s, '<invalid>'], [-1 * s, '0s'], [0, '0s'], [59 * s, '59s'], [119 * s, '119s'], [2 * m, '2m'],
    [3 * m + 12 * s, '3m12s'], [10 * m, '10m'], [179 * m, '179m'], [3 * h, '3h'], [5 * h + 30 * m, '5h30m'],
    [8 * h, '8h'], [47 * h, '47h'], [2 * d, '2d'], [3 * d + 4 * h, '3d4h'], [8 * d, '8d'], [400 * d, '400d'],
    [730 * d, '2y'], [800 * d, '2y70d'], [9 * 365 * d, '9y'],
  ];
  for (const [ms, text] of cases) it(`${ms} ms is ${text}`, () => assert.equal(humanDuration(ms), text));
});

describe('tableOf', () => {
  const sa = { kind: 'ServiceAccount', apiVersion: 'v1', metadata: { name: 'builder', namespace: 'ns', creationTimestamp: '2026-01-01T00:00:00Z', resourceVersion: '7' }, secrets: [{ name: 'a' }, { name: 'b' }] };
  const now = Date.parse('2026-01-01T00:05:00Z');

  it('prints a kind\'s declared columns, with the object as PartialObjectMetadata by default', () => {
    const t = tableOf(serviceAccountKind, [sa], { resourceVersion: '7' }, { group: 'meta.k8s.io', version: 'v1', includeObject: 'Metadata' }, now) as any; // eslint-disable-line @typescript-eslint/no-explicit-any
    assert.equal(t.kind, 'Table');
    assert.equal(t.apiVersion, 'meta.k8s.io/v1');
    assert.deepEqual(t.metadata, { resourceVersion: '7' });
    assert.deepEqual(t.columnDefinitions.map((c: { name: string; type: string; format: string; priority: number }) => [c.name, c.type, c.format, c.priority]),
      [['Name', 'string', 'name', 0], ['Secrets', 'string', '', 0], ['Age', 'string', '', 0]]);
    assert.deepEqual(t.rows[0].cells, ['builder', 2, '5m']);
    assert.deepEqual(t.rows[0].object, { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: sa.metadata });
  });

  it('carries the whole object with includeObject=Object, none with None', () => {
    const full = tableOf(serviceAccountKind, [sa], {}, { group: 'meta.orch.io', version: 'v1', includeObject: 'Object' }, now) as any; // eslint-disable-line @typescript-eslint/no-explicit-any
    assert.deepEqual(full.rows[0].object, sa);
    const none = tableOf(serviceAccountKind, [sa], {}, { group: 'meta.orch.io', version: 'v1', includeObject: 'None' }, now) as any; // eslint-disable-line @typescript-eslint/no-explicit-any
    assert.equal('object' in none.rows[0], false);
  });

  it('uses Name and Created At for a kind without columns', () => {
    const bare: KindDeclaration = { ...serviceAccountKind, table: undefined };
    const t = tableOf(bare, [sa], {}, { group: 'meta.orch.io', version: 'v1', includeObject: 'None' }, now) as any; // eslint-disable-line @typescript-eslint/no-explicit-any
    assert.deepEqual(t.columnDefinitions.map((c: { name: string; type: string }) => [c.name, c.type]), [['Name', 'string'], ['Created At', 'date']]);
    assert.deepEqual(t.rows[0].cells, ['builder', '2026-01-01T00:00:00Z']);
  });
});
