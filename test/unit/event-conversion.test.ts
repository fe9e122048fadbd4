/** core/v1 Event ↔ events.orch.io/v1 Event: Kubernetes' field mapping, lossless both ways. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { coreEventConversion } from '../../src/api/core/event-conversion.js';
import { coreEventKind } from '../../src/api/core/event.js';
import { eventKind } from '../../src/api/events/event.js';
import type { KObject } from '../../src/api/meta.js';

const metadata = { name: 'e', namespace: 'ns', uid: 'u-1', resourceVersion: '7', labels: { a: 'b' } };

const core: KObject = {
  kind: 'Event', apiVersion: 'v1', metadata,
  involvedObject: { kind: 'Pod', namespace: 'ns', name: 'p', uid: 'u-2', apiVersion: 'v1', resourceVersion: '3', fieldPath: 'spec.containers{a}' },
  reason: 'Pulled', message: 'pulled the image', source: { component: 'kubelet', host: 'n1' },
  firstTimestamp: '2025-01-02T03:04:05Z', lastTimestamp: '2025-01-02T03:04:09Z', count: 4, type: 'Normal',
  eventTime: '2025-01-02T03:04:05.123456Z', series: { count: 2, lastObservedTime: '2025-01-02T03:04:06.000001Z' },
  action: 'Pull', related: { kind: 'Node', name: 'n1' }, reportingComponent: 'orch.io/kubelet', reportingInstance: 'kubelet-n1',
};

const stored: KObject = {
  kind: 'Event', apiVersion: 'events.orch.io/v1', metadata,
  eventTime: '2025-01-02T03:04:05.123456Z', series: { count: 2, lastObservedTime: '2025-01-02T03:04:06.000001Z' },
  reportingController: 'orch.io/kubelet', reportingInstance: 'kubelet-n1', action: 'Pull', reason: 'Pulled',
  regarding: { kind: 'Pod', namespace: 'ns', name: 'p', uid: 'u-2', apiVersion: 'v1', resourceVersion: '3', fieldPath: 'spec.containers{a}' },
  related: { kind: 'Node', name: 'n1' }, note: 'pulled the image', type: 'Normal', deprecatedSource: { component: 'kubelet', host: 'n1' },
  deprecatedFirstTimestamp: '2025-01-02T03:04:05Z', deprecatedLastTimestamp: '2025-01-02T03:04:09Z', deprecatedCount: 4,
};

/** Keys in order, so that a converted object serializes as the target representation's Go struct does. */
const sameJson = (actual: unknown, expected: unknown) => assert.equal(JSON.stringify(actual), JSON.stringify(expected));

describe('core/v1 Event conversion', () => {
  it('maps every field as Kubernetes does (regarding↔involvedObject, note↔message, deprecated*↔the core fields, reportingController↔reportingComponent)', () => {
    sameJson(coreEventConversion.toStorage(core), stored);
    sameJson(coreEventConversion.fromStorage(stored), core);
  });

  it('covers both schemas: no field is lost either way', () => {
    const body = (fields: Readonly<Record<string, unknown>>) => Object.keys(fields).filter((f) => f !== 'kind' && f !== 'apiVersion' && f !== 'metadata');
    assert.deepEqual(Object.keys(core).slice(3), body(coreEventKind.schema.fields));
    assert.deepEqual(Object.keys(stored).slice(3), body(eventKind.schema.fields));
  });

  it('round-trips each field alone, and objects without the fields the other API requires', () => {
    // core/v1 writes its reporting fields set or not (no omitempty), events/v1 omits them when ""
    const asCore = ({ reportingComponent = '', reportingInstance = '', ...o }: KObject): KObject => ({ ...o, reportingComponent, reportingInstance });
    for (const field of Object.keys(core).slice(3)) {
      const one: KObject = { kind: 'Event', apiVersion: 'v1', metadata, [field]: core[field] };
      const there = coreEventConversion.toStorage(one);
      assert.equal(Object.keys(there).length, 4, `${field} maps to one field`);
      sameJson(coreEventConversion.fromStorage(there), asCore(one));
    }
    for (const field of Object.keys(stored).slice(3)) {
      const one: KObject = { kind: 'Event', apiVersion: 'events.orch.io/v1', metadata, [field]: stored[field] };
      sameJson(coreEventConversion.toStorage(coreEventConversion.fromStorage(one)), one);
    }
    const bare: KObject = { kind: 'Event', apiVersion: 'events.orch.io/v1', metadata };
    sameJson(coreEventConversion.fromStorage(bare), asCore({ kind: 'Event', apiVersion: 'v1', metadata }));
    const empty: KObject = { kind: 'Event', apiVersion: 'v1', metadata, reportingComponent: '', reportingInstance: '' };
    sameJson(coreEventConversion.toStorage(empty), bare);
  });

  it('does not change its input', () => {
    const before = JSON.stringify(stored);
    coreEventConversion.fromStorage(stored);
    coreEventConversion.toStorage(core);
    assert.equal(JSON.stringify(stored), before);
  });
});
