/**
 * Server-side apply and field ownership: every row of the spec's "Field ownership" table, the
 * list/map/struct types, conflicts and their 409, create, the errors Kubernetes answers, and the
 * quirks of its field manager chain (before-first-apply, kubectl's client-side apply upgrade).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import type { KindDeclaration } from '../../src/api/kind.js';
import { objectReferenceStructural, typeAndMeta, type KObject, type ManagedFieldsEntry } from '../../src/api/meta.js';
import type { ListSchema, StructSchema } from '../../src/api/schema.js';
import { s } from '../../src/api/schema/builtin-structural.js';
import type { Structural } from '../../src/api/schema/structural.js';
import { internalOf, internalStructOf, toInternal } from '../../src/api/schema/to-internal.js';
import { serviceAccountKind } from '../../src/api/core/service-account.js';
import { namespaceKind } from '../../src/api/core/namespace.js';
import { StatusError } from '../../src/status/status-error.js';
import { conflictError, serverSideApply, type ApplyResult } from '../../src/patch/apply.js';
import { updateManagedFields } from '../../src/patch/managed-fields.js';

const t0 = Date.UTC(2025, 0, 1, 0, 0, 0);
const time = (step: number): string => new Date(t0 + step * 1000).toISOString().replace('.000Z', 'Z');

type Meta = KObject['metadata'];
const sa = (metadata: Meta = {}, fields: Record<string, unknown> = {}): KObject =>
  ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'a', namespace: 'ns', ...metadata }, ...fields });

/** A write in a scenario: an apply, or a non-apply write (PUT/PATCH) producing the given object. */
type Step =
  | { apply: KObject; manager: string; force?: boolean; kind?: KindDeclaration }
  | { update: (live: KObject | undefined) => KObject; manager: string; kind?: KindDeclaration };

function run(live: KObject | undefined, step: Step, n: number): ApplyResult {
  const kind = step.kind ?? serviceAccountKind;
  if ('apply' in step) return serverSideApply({ kind, live, applied: step.apply, manager: step.manager, force: step.force ?? false, now: t0 + n * 1000 });
  const next = step.update(live);
  const managedFields = updateManagedFields(next, live, { kind, manager: step.manager, now: t0 + n * 1000 });
  return { object: { ...next, metadata: { ...next.metadata, managedFields } } };
}

/** Runs the steps in order; every step before the last must succeed. */
function scenario(...steps: Step[]): { live: KObject | undefined; result: ApplyResult } {
  let live: KObject | undefined;
  let result: ApplyResult = { object: { metadata: {} } };
  steps.forEach((step, i) => {
    if (i > 0) {
      assert.ok('object' in result, `step ${i} failed: ${JSON.stringify(result)}`);
      live = result.object;
    }
    result = run(live, step, i + 1);
  });
  return { live, result };
}

function objectOf(result: ApplyResult): KObject {
  assert.ok('object' in result, `expected an object, got ${JSON.stringify(result)}`);
  return result.object;
}

/** Entries as `manager/operation` → fieldsV1, in their stored order. */
function owners(obj: KObject): Record<string, unknown> {
  return Object.fromEntries((obj.metadata.managedFields ?? []).map((e: ManagedFieldsEntry) => [`${e.manager}/${e.operation}`, e.fieldsV1]));
}

const labels = (l: Record<string, string>): Meta => ({ labels: l });
const withLabels = (l: Record<string, string>) => (live: KObject | undefined): KObject =>
  ({ ...(live ?? sa()), metadata: { ...(live ?? sa()).metadata, labels: l } });

interface Case {
  name: string;
  steps: Step[];
  conflicts?: Array<[manager: string, field: string]>;
  /** fields of the resulting object */
  object?: Record<string, unknown>;
  /** every entry of the result, `manager/operation` → fieldsV1 */
  owners?: Record<string, unknown>;
}

function check(c: Case): void {
  const { result } = scenario(...c.steps);
  if (c.conflicts) {
    assert.ok('conflicts' in result, `expected conflicts, got ${JSON.stringify(result)}`);
    assert.deepEqual(result.conflicts.map((x) => [x.manager, x.field]), c.conflicts);
    return;
  }
  const obj = objectOf(result);
  for (const [path, want] of Object.entries(c.object ?? {})) {
    const got = path.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], obj);
    assert.deepEqual(got, want, path);
  }
  if (c.owners) assert.deepEqual(owners(obj), c.owners);
}

describe('the spec\'s Field ownership table', () => {
  const cases: Case[] = [
    {
      name: 'apply of a value differing from the live value, on a field another manager owns, without force: conflict',
      steps: [{ apply: sa(labels({ app: 'x' })), manager: 'm1' }, { apply: sa(labels({ app: 'y' })), manager: 'm2' }],
      conflicts: [['m1', '.metadata.labels.app']],
    },
    {
      name: 'apply with force=true: value overridden, ownership moves to the applier, field removed from the other entry',
      steps: [{ apply: sa(labels({ app: 'x', team: 't' })), manager: 'm1' }, { apply: sa(labels({ app: 'y' })), manager: 'm2', force: true }],
      object: { 'metadata.labels': { app: 'y', team: 't' } },
      owners: {
        'm1/Apply': { 'f:metadata': { 'f:labels': { 'f:team': {} } } },
        'm2/Apply': { 'f:metadata': { 'f:labels': { 'f:app': {} } } },
      },
    },
    {
      name: 'apply omitting a field the same manager applied before, nobody else owning it: the field is removed',
      steps: [{ apply: sa(labels({ app: 'x', team: 't' }), { secrets: [{ name: 'a' }, { name: 'b' }] }), manager: 'm1' }, { apply: sa(labels({ app: 'x' }), { secrets: [{ name: 'a' }] }), manager: 'm1' }],
      object: { 'metadata.labels': { app: 'x' }, secrets: [{ name: 'a' }] },
      owners: { 'm1/Apply': { 'f:metadata': { 'f:labels': { 'f:app': {} } }, 'f:secrets': { 'k:{"name":"a"}': {} } } },
    },
    {
      name: 'apply omitting the last field of a list removes the list',
      steps: [{ apply: sa({}, { secrets: [{ name: 'a' }], automountServiceAccountToken: true }), manager: 'm1' }, { apply: sa({}, { automountServiceAccountToken: true }), manager: 'm1' }],
      object: { secrets: undefined, automountServiceAccountToken: true },
    },
    {
      name: 'apply omitting a field another applier also owns: value unchanged, the applier\'s ownership dropped',
      steps: [
        { apply: sa(labels({ app: 'x', team: 't' })), manager: 'm1' },
        { apply: sa(labels({ team: 't' })), manager: 'm2' },
        { apply: sa(labels({ app: 'x' })), manager: 'm1' },
      ],
      object: { 'metadata.labels': { app: 'x', team: 't' } },
      owners: {
        'm1/Apply': { 'f:metadata': { 'f:labels': { 'f:app': {} } } },
        'm2/Apply': { 'f:metadata': { 'f:labels': { 'f:team': {} } } },
      },
    },
    {
      name: 'apply omitting a field an updater also owns: value unchanged, the applier\'s ownership dropped',
      steps: [
        { update: () => sa(labels({ team: 't' })), manager: 'editor' },
        { apply: sa(labels({ team: 't', app: 'x' })), manager: 'm1' },
        { apply: sa(labels({ app: 'x' })), manager: 'm1' },
      ],
      object: { 'metadata.labels': { team: 't', app: 'x' } },
      owners: {
        'm1/Apply': { 'f:metadata': { 'f:labels': { 'f:app': {} } } },
        'editor/Update': { 'f:metadata': { 'f:labels': { 'f:team': {}, '.': {} } } },
      },
    },
    {
      name: 'apply setting a field to its live value: ownership becomes shared, no conflict',
      steps: [{ apply: sa(labels({ app: 'x' })), manager: 'm1' }, { apply: sa(labels({ app: 'x' })), manager: 'm2' }],
      object: { 'metadata.labels': { app: 'x' } },
      owners: {
        'm1/Apply': { 'f:metadata': { 'f:labels': { 'f:app': {} } } },
        'm2/Apply': { 'f:metadata': { 'f:labels': { 'f:app': {} } } },
      },
    },
    {
      name: 'update (PUT or non-apply PATCH) of an applied field: no conflict, ownership moves to the writer',
      steps: [
        { apply: sa(labels({ app: 'x' }), { automountServiceAccountToken: true }), manager: 'm1' },
        { update: withLabels({ app: 'y' }), manager: 'editor' },
      ],
      object: { 'metadata.labels': { app: 'y' } },
      owners: {
        'm1/Apply': { 'f:automountServiceAccountToken': {} },
        'editor/Update': { 'f:metadata': { 'f:labels': { 'f:app': {} } } },
      },
    },
    {
      name: 'Apply and Update entries of one manager are separate entries',
      steps: [{ update: () => sa(labels({ a: '1' })), manager: 'm1' }, { apply: sa(labels({ b: '2' })), manager: 'm1' }],
      object: { 'metadata.labels': { a: '1', b: '2' } },
      owners: {
        'm1/Apply': { 'f:metadata': { 'f:labels': { 'f:b': {} } } },
        'm1/Update': { 'f:metadata': { 'f:labels': { 'f:a': {}, '.': {} } } },
      },
    },
    {
      name: 'an applier conflicts with its own Update entry',
      steps: [{ update: () => sa(labels({ a: '1' })), manager: 'm1' }, { apply: sa(labels({ a: '2' })), manager: 'm1' }],
      conflicts: [['m1', '.metadata.labels.a']],
    },
  ];
  for (const c of cases) it(c.name, () => check(c));

  it('a change from map/set/granular to atomic: the whole structure is owned by those that owned an element, and later changes conflict', () => {
    const atomicSecrets: KindDeclaration = {
      ...serviceAccountKind,
      schema: { ...serviceAccountKind.schema, fields: { ...serviceAccountKind.schema.fields, secrets: internalOf(s.atomicList(objectReferenceStructural)) } },
    };
    const { result } = scenario(
      { apply: sa({}, { secrets: [{ name: 'a' }] }), manager: 'm1' },
      { apply: sa({}, { secrets: [{ name: 'b' }] }), manager: 'm2' },
      { apply: sa({}, { secrets: [{ name: 'c' }] }), manager: 'm3', kind: atomicSecrets },
    );
    assert.ok('conflicts' in result);
    assert.deepEqual(result.conflicts.map((c) => [c.manager, c.field]), [['m1', '.secrets'], ['m2', '.secrets']]);

    // an update under the new schema records the reconciled ownership
    const live = objectOf(scenario({ apply: sa({}, { secrets: [{ name: 'a' }] }), manager: 'm1' }).result);
    const entries = updateManagedFields(sa(labels({ x: '1' }), { secrets: [{ name: 'a' }] }), live, { kind: atomicSecrets, manager: 'editor', now: t0 });
    assert.deepEqual(entries.find((e) => e.manager === 'm1')?.fieldsV1, { 'f:secrets': {} });
  });

  it('a change from atomic to map/set/granular: ownership is not inferred and no conflict is produced', () => {
    const atomicSecrets: KindDeclaration = {
      ...serviceAccountKind,
      schema: { ...serviceAccountKind.schema, fields: { ...serviceAccountKind.schema.fields, secrets: internalOf(s.atomicList(objectReferenceStructural)) } },
    };
    const { result } = scenario(
      { apply: sa({}, { secrets: [{ name: 'a' }] }), manager: 'm1', kind: atomicSecrets },
      { apply: sa({}, { secrets: [{ name: 'b' }] }), manager: 'm2' },
    );
    const obj = objectOf(result);
    assert.deepEqual(obj.secrets, [{ name: 'a' }, { name: 'b' }]);
    assert.deepEqual(owners(obj), {
      'm1/Apply': { 'f:secrets': {} },
      'm2/Apply': { 'f:secrets': { 'k:{"name":"b"}': {} } },
    });
  });
});

// A kind exercising every marker: atomic map, granular and atomic structs, and lists whose type
// comes from the patch-strategy markers alone.
// The undeclared lists are written in the internal form: every list a structural schema declares has a type.
const portSchema = internalOf(s.struct('Port', { port: s.int32(), name: s.string() }));
const undeclared = (list: Omit<ListSchema, 'listType'>): ListSchema => list as ListSchema;
const declaredWidget = internalStructOf(s.struct('Widget', typeAndMeta({
  spec: s.struct('WidgetSpec', {
    selector: s.map(s.string(), 'an atomic map', 'atomic'),
    template: s.struct('Template', { a: s.string(), b: s.string() }),
    ref: objectReferenceStructural,
  }),
})));
const declaredWidgetSpec = declaredWidget.fields.spec as StructSchema;
const widgetKind: KindDeclaration = {
  ...serviceAccountKind,
  group: 'example.orch.io', kind: 'Widget', listKind: 'WidgetList', resource: 'widgets', singular: 'widget', shortNames: [],
  schema: {
    ...declaredWidget,
    fields: {
      ...declaredWidget.fields,
      spec: {
        ...declaredWidgetSpec,
        fields: {
          ...declaredWidgetSpec.fields,
          ports: undeclared({ type: 'list', items: portSchema, patchStrategy: 'merge', patchMergeKey: 'port' }),
          tags: undeclared({ type: 'list', items: internalOf(s.string()), patchStrategy: 'merge' }),
          args: undeclared({ type: 'list', items: internalOf(s.string()) }),
        },
      },
    },
  },
};
const widget = (spec: Record<string, unknown>): KObject => ({ apiVersion: 'example.orch.io/v1', kind: 'Widget', metadata: { name: 'w' }, spec });
const onWidget = (spec: Record<string, unknown>, manager: string, force = false): Step => ({ apply: widget(spec), manager, force, kind: widgetKind });

describe('list, map and struct types', () => {
  const cases: Case[] = [
    {
      name: 'atomic list: owned whole, another applier\'s list conflicts',
      steps: [{ apply: sa({}, { imagePullSecrets: [{ name: 'a' }] }), manager: 'm1' }, { apply: sa({}, { imagePullSecrets: [{ name: 'b' }] }), manager: 'm2' }],
      conflicts: [['m1', '.imagePullSecrets']],
    },
    {
      name: 'atomic list with force: replaced whole',
      steps: [{ apply: sa({}, { imagePullSecrets: [{ name: 'a' }] }), manager: 'm1' }, { apply: sa({}, { imagePullSecrets: [{ name: 'b' }] }), manager: 'm2', force: true }],
      object: { imagePullSecrets: [{ name: 'b' }] },
      owners: { 'm2/Apply': { 'f:imagePullSecrets': {} } },
    },
    {
      name: 'set list: values merge, each owned by its applier (v: paths)',
      steps: [{ apply: sa({ finalizers: ['x'] }), manager: 'm1' }, { apply: sa({ finalizers: ['y'] }), manager: 'm2' }],
      object: { 'metadata.finalizers': ['x', 'y'] },
      owners: {
        'm1/Apply': { 'f:metadata': { 'f:finalizers': { 'v:"x"': {} } } },
        'm2/Apply': { 'f:metadata': { 'f:finalizers': { 'v:"y"': {} } } },
      },
    },
    {
      name: 'set list: a value its applier omits is removed',
      steps: [{ apply: sa({ finalizers: ['x', 'z'] }), manager: 'm1' }, { apply: sa({ finalizers: ['y'] }), manager: 'm2' }, { apply: sa({ finalizers: ['x'] }), manager: 'm1' }],
      object: { 'metadata.finalizers': ['x', 'y'] },
    },
    {
      name: 'map list: items keyed by listMapKeys (k: paths), merged across appliers',
      steps: [{ apply: sa({}, { secrets: [{ name: 'a' }] }), manager: 'm1' }, { apply: sa({}, { secrets: [{ name: 'b' }] }), manager: 'm2' }],
      object: { secrets: [{ name: 'a' }, { name: 'b' }] },
      owners: {
        'm1/Apply': { 'f:secrets': { 'k:{"name":"a"}': {} } },
        'm2/Apply': { 'f:secrets': { 'k:{"name":"b"}': {} } },
      },
    },
    {
      name: 'map list of atomic items: changing another applier\'s item conflicts on the item',
      steps: [{ apply: sa({}, { secrets: [{ name: 'a' }] }), manager: 'm1' }, { apply: sa({}, { secrets: [{ name: 'a', namespace: 'other' }] }), manager: 'm2' }],
      conflicts: [['m1', '.secrets[name="a"]']],
    },
    {
      name: 'map list of granular items: managers own separate fields of one item, the item itself shared',
      steps: [
        { apply: sa({ ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'u1' }] }), manager: 'm1' },
        { apply: sa({ ownerReferences: [{ uid: 'u1', controller: true } as never] }), manager: 'm2' },
      ],
      object: { 'metadata.ownerReferences': [{ apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'u1', controller: true }] },
      owners: {
        'm1/Apply': { 'f:metadata': { 'f:ownerReferences': { 'k:{"uid":"u1"}': { 'f:apiVersion': {}, 'f:kind': {}, 'f:name': {}, 'f:uid': {}, '.': {} } } } },
        'm2/Apply': { 'f:metadata': { 'f:ownerReferences': { 'k:{"uid":"u1"}': { 'f:controller': {}, 'f:uid': {}, '.': {} } } } },
      },
    },
    {
      name: 'granular map: entries owned separately',
      steps: [{ apply: sa(labels({ a: '1' })), manager: 'm1' }, { apply: sa(labels({ b: '2' })), manager: 'm2' }],
      object: { 'metadata.labels': { a: '1', b: '2' } },
    },
    {
      name: 'atomic map: owned whole, another applier\'s entries conflict',
      steps: [onWidget({ selector: { a: '1' } }, 'm1'), onWidget({ selector: { b: '2' } }, 'm2')],
      conflicts: [['m1', '.spec.selector']],
    },
    {
      name: 'atomic map with force: replaced whole',
      steps: [onWidget({ selector: { a: '1' } }, 'm1'), onWidget({ selector: { b: '2' } }, 'm2', true)],
      object: { 'spec.selector': { b: '2' } },
      owners: { 'm2/Apply': { 'f:spec': { 'f:selector': {} } } },
    },
    {
      name: 'granular struct: fields owned separately',
      steps: [onWidget({ template: { a: '1' } }, 'm1'), onWidget({ template: { b: '2' } }, 'm2')],
      object: { 'spec.template': { a: '1', b: '2' } },
      owners: { 'm1/Apply': { 'f:spec': { 'f:template': { 'f:a': {} } } }, 'm2/Apply': { 'f:spec': { 'f:template': { 'f:b': {} } } } },
    },
    {
      name: 'atomic struct: owned whole',
      steps: [onWidget({ ref: { name: 'x' } }, 'm1'), onWidget({ ref: { kind: 'Pod' } }, 'm2')],
      conflicts: [['m1', '.spec.ref']],
    },
    {
      name: 'no listType, patch strategy merge with a merge key: a map list keyed by it',
      steps: [onWidget({ ports: [{ port: 80 }] }, 'm1'), onWidget({ ports: [{ port: 443, name: 'https' }] }, 'm2')],
      object: { 'spec.ports': [{ port: 80 }, { port: 443, name: 'https' }] },
      owners: {
        'm1/Apply': { 'f:spec': { 'f:ports': { 'k:{"port":80}': { 'f:port': {}, '.': {} } } } },
        'm2/Apply': { 'f:spec': { 'f:ports': { 'k:{"port":443}': { 'f:name': {}, 'f:port': {}, '.': {} } } } },
      },
    },
    {
      name: 'no listType, patch strategy merge without a key: a set',
      steps: [onWidget({ tags: ['a'] }, 'm1'), onWidget({ tags: ['b'] }, 'm2')],
      object: { 'spec.tags': ['a', 'b'] },
    },
    {
      name: 'no listType and no patch strategy: atomic',
      steps: [onWidget({ args: ['a'] }, 'm1'), onWidget({ args: ['b'] }, 'm2')],
      conflicts: [['m1', '.spec.args']],
    },
  ];
  for (const c of cases) it(c.name, () => check(c));

  it('deduces fields a struct keeps undeclared: objects are granular maps, lists atomic', () => {
    const kept: KindDeclaration = {
      ...serviceAccountKind,
      schema: { ...serviceAccountKind.schema, fields: { ...serviceAccountKind.schema.fields, spec: toInternal({ type: 'object', preserveUnknownFields: true }, 'KeptSpec') } },
    };
    const keep = (spec: Record<string, unknown>, manager: string): Step => ({ apply: sa({}, { spec }), manager, kind: kept });
    const { result } = scenario(keep({ extra: { a: 1 }, args: [1] }, 'm1'), keep({ extra: { b: 2 } }, 'm2'));
    assert.deepEqual(objectOf(result).spec, { extra: { a: 1, b: 2 }, args: [1] });
    assert.deepEqual(owners(objectOf(result)), {
      'm1/Apply': { 'f:spec': { 'f:args': {}, 'f:extra': { '.': {}, 'f:a': {} } } },
      'm2/Apply': { 'f:spec': { 'f:extra': { '.': {}, 'f:b': {} } } },
    });
    const conflict = scenario(keep({ args: [1] }, 'm1'), keep({ args: [2] }, 'm2')).result;
    assert.ok('conflicts' in conflict, 'a list is owned whole');
    assert.deepEqual(conflict.conflicts.map((c) => [c.manager, c.field]), [['m1', '.spec.args']]);
  });

  it('keeps the live order of a granular list, placing new items after it', () => {
    const { result } = scenario(
      { apply: sa({}, { secrets: [{ name: 'a' }, { name: 'b' }] }), manager: 'm1' },
      { apply: sa({}, { secrets: [{ name: 'c' }, { name: 'a' }] }), manager: 'm2' },
    );
    assert.deepEqual(objectOf(result).secrets, [{ name: 'c' }, { name: 'a' }, { name: 'b' }]);
  });
});

describe('create, conflicts and errors', () => {
  it('creates: the applied object with one Apply entry', () => {
    const applied = sa(labels({ app: 'x' }), { automountServiceAccountToken: false });
    const obj = objectOf(serverSideApply({ kind: serviceAccountKind, live: undefined, applied, manager: 'kubectl', force: false, now: t0 }));
    assert.deepEqual(obj.metadata.managedFields, [{
      manager: 'kubectl', operation: 'Apply', apiVersion: 'v1', time: time(0), fieldsType: 'FieldsV1',
      fieldsV1: { 'f:automountServiceAccountToken': {}, 'f:metadata': { 'f:labels': { 'f:app': {} } } },
    }]);
    const { managedFields: _, ...meta } = obj.metadata;
    assert.deepEqual({ ...obj, metadata: meta }, applied);
  });

  it('words the 409 as Kubernetes does, for one conflict and for several grouped by manager', () => {
    const one = conflictError([{ manager: 'm1', field: '.metadata.labels.app', owner: '"m1"' }]).toStatus();
    assert.deepEqual(one, {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: 'Apply failed with 1 conflict: conflict with "m1": .metadata.labels.app',
      reason: 'Conflict',
      details: { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "m1"', field: '.metadata.labels.app' }] },
      code: 409,
    });

    const { result } = scenario(
      { update: () => sa(labels({ a: '1', b: '1' })), manager: 'editor' },
      { apply: sa(labels({ a: '1', b: '1' }), { automountServiceAccountToken: true }), manager: 'm1' },
      { apply: sa(labels({ a: '2', b: '2' }), { automountServiceAccountToken: false }), manager: 'm2' },
    );
    assert.ok('conflicts' in result);
    const err = conflictError(result.conflicts);
    assert.equal(err.code, 409);
    assert.equal(err.message, [
      'Apply failed with 5 conflicts: conflicts with "editor" using v1:',
      '- .metadata.labels.a',
      '- .metadata.labels.b',
      'conflicts with "m1":',
      '- .automountServiceAccountToken',
      '- .metadata.labels.a',
      '- .metadata.labels.b',
    ].join('\n'));
    assert.deepEqual(err.details?.causes?.map((c) => c.message), ['conflict with "editor" using v1', 'conflict with "editor" using v1', 'conflict with "m1"', 'conflict with "m1"', 'conflict with "m1"']);
  });

  it('refuses managedFields in the body: 400 metadata.managedFields must be nil', () => {
    const applied = sa({ managedFields: [] });
    assert.throws(() => serverSideApply({ kind: serviceAccountKind, live: undefined, applied, manager: 'm', force: false, now: t0 }),
      (e: unknown) => e instanceof StatusError && e.code === 400 && e.reason === 'BadRequest' && e.message === 'metadata.managedFields must be nil');
  });

  it('refuses another type: 400 invalid object type', () => {
    const applied = { ...sa(), apiVersion: 'apps/v1' };
    assert.throws(() => serverSideApply({ kind: serviceAccountKind, live: undefined, applied, manager: 'm', force: false, now: t0 }),
      (e: unknown) => e instanceof StatusError && e.code === 400 && e.message === 'invalid object type: apps/v1, Kind=ServiceAccount');
  });

  it('refuses a body that does not fit the schema: 400 failed to create typed patch object', () => {
    const cases: Array<[KObject, string]> = [
      [sa({}, { spec: {} }), '.spec: field not declared in schema'],
      [{ ...sa(), metadata: true } as unknown as KObject, '.metadata: expected map, got &{true}'],
      [sa({ labels: 'x' } as unknown as KObject['metadata']), '.metadata.labels: expected map, got &{x}'],
      [sa({ labels: { a: 1 } } as unknown as KObject['metadata']), '.metadata.labels.a: expected string, got &value.valueUnstructured{Value:1}'],
      [sa({}, { secrets: { name: 'a' } }), '.secrets: expected list, got &{map[name:a]}'],
      [sa({}, { automountServiceAccountToken: 'yes' }), '.automountServiceAccountToken: expected boolean, got &{yes}'],
      [sa({}, { secrets: [{ name: 'a' }, { name: 'a' }] }), '.secrets: duplicate entries for key [name="a"]'],
      [sa({}, { secrets: [{ namespace: 'x' }] }), '.secrets: element 0: associative list with keys has an element that omits key field "name" (and doesn\'t have default value)'],
    ];
    for (const [applied, detail] of cases) {
      assert.throws(() => serverSideApply({ kind: serviceAccountKind, live: undefined, applied, manager: 'm', force: false, now: t0 }),
        (e: unknown) => e instanceof StatusError && e.code === 400 && e.reason === 'BadRequest'
          && e.message === `failed to create typed patch object (${detail.startsWith('.metadata:') ? '/' : 'ns/a'}; /v1, Kind=ServiceAccount): ${detail}`);
    }
  });
});

describe('the field manager chain around the merge', () => {
  it('gives the fields of an untracked object to before-first-apply (an Update entry) on the first apply', () => {
    const live = sa(labels({ app: 'x' }), { automountServiceAccountToken: true });
    const result = serverSideApply({ kind: serviceAccountKind, live, applied: sa(labels({ app: 'y' })), manager: 'm1', force: false, now: t0 });
    assert.ok('conflicts' in result);
    assert.deepEqual(result.conflicts, [{ manager: 'before-first-apply', field: '.metadata.labels.app', owner: '"before-first-apply" using v1' }]);
  });

  it('moves the time of an entry only when the apply changed the object', () => {
    const { result } = scenario({ apply: sa(labels({ app: 'x' })), manager: 'm1' }, { apply: sa(labels({ app: 'x' })), manager: 'm2' });
    const entries = objectOf(result).metadata.managedFields ?? [];
    // a no-op apply records the new owner without a time, so it sorts first among appliers
    assert.deepEqual(entries.map((e) => [e.manager, e.time]), [['m2', undefined], ['m1', time(1)]]);
  });

  it('lets kubectl take over fields its client-side apply set, and keeps the annotation in step', () => {
    const key = 'kubectl.kubernetes.io/last-applied-configuration';
    const clientSide = sa(labels({ app: 'x' }));
    const annotation = `${JSON.stringify(clientSide)}\n`;
    const created = sa({ labels: { app: 'x' }, annotations: { [key]: annotation } });
    const live = { ...created, metadata: { ...created.metadata, managedFields: updateManagedFields(created, undefined, { kind: serviceAccountKind, manager: 'kubectl-client-side-apply', now: t0 }) } };
    const applied = sa(labels({ app: 'y' }));

    const other = serverSideApply({ kind: serviceAccountKind, live, applied, manager: 'someone', force: false, now: t0 + 1000 });
    assert.ok('conflicts' in other);
    assert.deepEqual(other.conflicts.map((c) => c.owner), ['"kubectl-client-side-apply" using v1']);

    const obj = objectOf(serverSideApply({ kind: serviceAccountKind, live, applied, manager: 'kubectl', force: false, now: t0 + 1000 }));
    assert.deepEqual(obj.metadata.labels, { app: 'y' });
    assert.equal(obj.metadata.annotations?.[key], '{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"labels":{"app":"y"},"name":"a","namespace":"ns"}}\n');
    assert.deepEqual(owners(obj), {
      'kubectl/Apply': { 'f:metadata': { 'f:labels': { 'f:app': {} } } },
      'kubectl-client-side-apply/Update': { 'f:metadata': { 'f:annotations': { 'f:kubectl.kubernetes.io/last-applied-configuration': {}, '.': {} }, 'f:labels': {} } },
    });
  });

  it('leaves reset fields (status of a kind with a status subresource) unowned', () => {
    const applied = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n', labels: { a: '1' } }, status: { phase: 'Active' } };
    const obj = objectOf(serverSideApply({ kind: namespaceKind, live: undefined, applied, manager: 'm', force: false, now: t0, resetFields: ['f:status'] }));
    assert.deepEqual(owners(obj), { 'm/Apply': { 'f:metadata': { 'f:labels': { 'f:a': {} } } } });
  });
});

describe('managedFields of non-apply writes', () => {
  it('keeps an object untracked when it has no managedFields, as Kubernetes does until the first apply', () => {
    assert.deepEqual(updateManagedFields(sa(labels({ a: '1' })), sa(), { kind: serviceAccountKind, manager: 'w', now: t0 }), []);
  });

  it('makes a struct its own member (`.`) when a write adds it: a pointer struct or a custom resource\'s object, never a Go value struct', () => {
    const name = { name: s.string() };
    const builtin: KindDeclaration = {
      ...serviceAccountKind,
      schema: internalStructOf(s.struct('Gadget', typeAndMeta({
        spec: s.struct('GadgetSpec', { held: s.struct('Held', name), pointed: s.struct('Pointed', name) }, undefined, { pointers: ['pointed'] }),
      }))),
    };
    const object = (): Record<string, unknown> => ({ held: { name: 'a' }, pointed: { name: 'b' } });
    const created = updateManagedFields(sa({}, { spec: object() }), undefined, { kind: builtin, manager: 'w', now: t0 });
    assert.deepEqual(created[0].fieldsV1, { 'f:spec': { 'f:held': { 'f:name': {} }, 'f:pointed': { '.': {}, 'f:name': {} } } });

    // a custom resource is unstructured: every object it adds is there only once set
    const objectSchema = (properties: Structural['properties']): Structural => ({ type: 'object', properties });
    const custom: KindDeclaration = {
      ...serviceAccountKind,
      schema: toInternal(objectSchema({
        metadata: { type: 'object' },
        spec: objectSchema({ held: objectSchema({ name: { type: 'string' } }), pointed: objectSchema({ name: { type: 'string' } }) }),
      }), 'Gadget') as StructSchema,
    };
    const crCreated = updateManagedFields(sa({}, { spec: object() }), undefined, { kind: custom, manager: 'w', now: t0 });
    assert.deepEqual(crCreated[0].fieldsV1, { 'f:spec': { '.': {}, 'f:held': { '.': {}, 'f:name': {} }, 'f:pointed': { '.': {}, 'f:name': {} } } });
    // once there, a later write that changes a field inside leaves the struct with its adder
    const live = { ...sa({}, { spec: object() }), metadata: { ...sa().metadata, managedFields: crCreated } };
    const changed = updateManagedFields(sa({}, { spec: { ...object(), held: { name: 'c' } } }), live, { kind: custom, manager: 'x', now: t0 + 1000 });
    assert.deepEqual(changed.map((e) => [e.manager, e.fieldsV1]), [
      // (a member without members below is written `{}`, as a leaf is)
      ['w', { 'f:spec': { '.': {}, 'f:held': {}, 'f:pointed': { '.': {}, 'f:name': {} } } }],
      ['x', { 'f:spec': { 'f:held': { 'f:name': {} } } }],
    ]);
  });

  it('records a subresource write in its own entry', () => {
    const live = objectOf(scenario({ update: () => sa(labels({ a: '1' })), manager: 'w' }).result);
    const entries = updateManagedFields(sa(labels({ a: '2' })), live, { kind: serviceAccountKind, manager: 'w', now: t0 + 5000, subresource: 'status' });
    assert.deepEqual(entries.map((e) => [e.manager, e.subresource, e.fieldsV1]), [
      // the label moved to the subresource entry; the map itself stays with the writer that added it
      ['w', undefined, { 'f:metadata': { 'f:labels': {} } }],
      ['w', 'status', { 'f:metadata': { 'f:labels': { 'f:a': {} } } }],
    ]);
  });

  it('hands back a stored entry\'s document while its fields are unchanged, and builds a new one when they change', () => {
    const live = objectOf(scenario(
      { update: () => sa(labels({ a: '1' })), manager: 'labeller' },
      { update: (o) => sa({ ...labels({ ...o?.metadata.labels }), annotations: { n: '1' } }), manager: 'annotator' },
    ).result);
    const stored = live.metadata.managedFields ?? [];
    const documentOf = (entries: readonly ManagedFieldsEntry[], manager: string) => entries.find((e) => e.manager === manager)?.fieldsV1;
    // the labeller changes only a field it owns: both documents are the stored ones
    const relabelled = updateManagedFields(sa({ labels: { a: '2' }, annotations: { n: '1' } }), live, { kind: serviceAccountKind, manager: 'labeller', now: t0 + 9000 });
    assert.equal(documentOf(relabelled, 'labeller'), documentOf(stored, 'labeller'));
    assert.equal(documentOf(relabelled, 'annotator'), documentOf(stored, 'annotator'));
    assert.equal(relabelled.find((e) => e.manager === 'labeller')?.time, time(9));
    // a new field: the labeller's document is built anew, the annotator's still the stored one
    const grown = updateManagedFields(sa({ labels: { a: '1', b: '1' }, annotations: { n: '1' } }), live, { kind: serviceAccountKind, manager: 'labeller', now: t0 + 9000 });
    assert.notEqual(documentOf(grown, 'labeller'), documentOf(stored, 'labeller'));
    assert.deepEqual(documentOf(grown, 'labeller'), { 'f:metadata': { 'f:labels': { '.': {}, 'f:a': {}, 'f:b': {} } } });
    assert.equal(documentOf(grown, 'annotator'), documentOf(stored, 'annotator'));
    // a removal takes a field from its owner: that document is built anew too
    const unannotated = updateManagedFields(sa(labels({ a: '1' })), live, { kind: serviceAccountKind, manager: 'labeller', now: t0 + 9000 });
    assert.equal(documentOf(unannotated, 'annotator'), undefined);
    // entries the client sent are decoded, not trusted as canonical
    const sent = updateManagedFields(sa({ labels: { a: '2' }, annotations: { n: '1' }, managedFields: structuredClone(stored) }), live, { kind: serviceAccountKind, manager: 'labeller', now: t0 + 9000 });
    assert.notEqual(documentOf(sent, 'annotator'), documentOf(stored, 'annotator'));
    assert.deepEqual(documentOf(sent, 'annotator'), documentOf(stored, 'annotator'));
  });

  it('keeps at most ten Update entries, merging the oldest into ancient-changes', () => {
    let live = objectOf(scenario({ update: () => sa(labels({ l0: '0' })), manager: 'w0' }).result);
    for (let i = 1; i <= 10; i++) {
      const next = sa(labels({ ...live.metadata.labels, [`l${i}`]: String(i) }));
      live = { ...next, metadata: { ...next.metadata, managedFields: updateManagedFields(next, live, { kind: serviceAccountKind, manager: `w${i}`, now: t0 + i * 1000 }) } };
    }
    const managers = (live.metadata.managedFields ?? []).map((e) => e.manager);
    assert.equal(managers.length, 10);
    assert.deepEqual(managers, ['ancient-changes', 'w2', 'w3', 'w4', 'w5', 'w6', 'w7', 'w8', 'w9', 'w10']);
    assert.deepEqual(live.metadata.managedFields?.[0].fieldsV1, { 'f:metadata': { 'f:labels': { 'f:l0': {}, 'f:l1': {}, '.': {} } } });
  });
});
