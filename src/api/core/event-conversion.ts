/**
 * core/v1 Event ↔ events.orch.io/v1 Event, the storage version (Kubernetes' conversion.go of
 * events/v1 and the generated conversions): the same fields under other names, so the mapping is a
 * renaming both ways and every object round-trips field by field.
 */
import type { Conversion } from '../kind.js';
import type { KObject } from '../meta.js';

/** core/v1 field → events.orch.io/v1 field, in core/v1's field order. */
const coreToStorage: ReadonlyArray<readonly [core: string, stored: string]> = [
  ['involvedObject', 'regarding'],
  ['reason', 'reason'],
  ['message', 'note'],
  ['source', 'deprecatedSource'],
  ['firstTimestamp', 'deprecatedFirstTimestamp'],
  ['lastTimestamp', 'deprecatedLastTimestamp'],
  ['count', 'deprecatedCount'],
  ['type', 'type'],
  ['eventTime', 'eventTime'],
  ['series', 'series'],
  ['action', 'action'],
  ['related', 'related'],
  ['reportingComponent', 'reportingController'],
  ['reportingInstance', 'reportingInstance'],
];

/** events.orch.io/v1's field order. */
const storageOrder = [
  'eventTime', 'series', 'reportingController', 'reportingInstance', 'action', 'reason', 'regarding', 'related', 'note', 'type',
  'deprecatedSource', 'deprecatedFirstTimestamp', 'deprecatedLastTimestamp', 'deprecatedCount',
];
const coreNameOf = new Map(coreToStorage.map(([core, stored]) => [stored, core]));

/** Each conversion writes its fields in the order of the representation it produces. */
const toCore = coreToStorage.map(([core, stored]) => [stored, core] as const);
const toStored = storageOrder.map((stored) => [coreNameOf.get(stored) ?? stored, stored] as const);

/**
 * The reporting fields are the only ones whose tags differ: core/v1 writes them without omitempty
 * (`reportingComponent: ""`), events/v1 with it. Every other field's zero is alike in both.
 */
const reportingFields = new Set(['reportingComponent', 'reportingController', 'reportingInstance']);

/** What the representation produced does with an empty reporting field: core/v1 writes it, events/v1 omits it. */
type EmptyReporting = 'written' | 'omitted';

/** `from` with each field renamed by `pairs`; nested values are shared, as stored objects are never mutated. */
function renamed(from: Readonly<KObject>, pairs: ReadonlyArray<readonly [string, string]>, typeMeta: { apiVersion: string; kind: string }, emptyReporting: EmptyReporting): KObject {
  const out: KObject = { kind: typeMeta.kind, apiVersion: typeMeta.apiVersion, metadata: from.metadata };
  for (const [source, target] of pairs) {
    const value = from[source];
    if ((value === undefined || value === '') && reportingFields.has(target)) {
      if (emptyReporting === 'written') out[target] = '';
    } else if (value !== undefined) {
      out[target] = value;
    }
  }
  return out;
}

export const coreEventConversion: Conversion = {
  fromStorage: (stored) => renamed(stored, toCore, { apiVersion: 'v1', kind: 'Event' }, 'written'),
  toStorage: (served) => renamed(served, toStored, { apiVersion: 'events.orch.io/v1', kind: 'Event' }, 'omitted'),
};
