import { fieldErrors, type FieldError } from '../../status/status-error.js';
import { allVerbs, builtinKind, fieldLabelNotSupported, type KindDeclaration } from '../kind.js';
import { objectReferenceStructural, typeAndMeta, type KObject } from '../meta.js';
import { s } from '../schema/builtin-structural.js';
import { eventSourceStructural } from '../core/event-source.js';
import { eventColumns, type PrintedEvent } from './event-printing.js';
import { isQualifiedName, validateObjectMeta, validateObjectMetaUpdate } from '../validation/names.js';

export interface EventObject extends KObject {
  eventTime?: string;
  series?: { count?: number; lastObservedTime?: string };
  reportingController?: string;
  reportingInstance?: string;
  action?: string;
  reason?: string;
  regarding?: Record<string, string>;
  related?: Record<string, string>;
  note?: string;
  type?: string;
  deprecatedSource?: { component?: string; host?: string };
  deprecatedFirstTimestamp?: string;
  deprecatedLastTimestamp?: string;
  deprecatedCount?: number;
}

const actionLimit = 128;
const reasonLimit = 128;
const reportingInstanceLimit = 128;
const noteLimit = 1024;

/** Namespaces whose events may concern objects without a namespace (cluster-scoped ones). */
const systemNamespaces = new Set(['default', 'orch-system']);

/** ValidateEventCreate for events.orch.io/v1, in Kubernetes' order and wording. */
function validateNewEvent(event: EventObject): FieldError[] {
  const errs: FieldError[] = [];
  const namespace = event.metadata.namespace ?? '';
  if (!event.regarding?.namespace && !systemNamespaces.has(namespace)) {
    errs.push(fieldErrors.invalid('involvedObject.namespace', event.regarding?.namespace ?? '', 'does not match event.namespace'));
  }
  const controller = event.reportingController ?? '';
  if (!controller) errs.push(fieldErrors.required('reportingController'));
  for (const msg of isQualifiedName(controller)) errs.push(fieldErrors.invalid('reportingController', controller, msg));
  const instance = event.reportingInstance ?? '';
  if (!instance) errs.push(fieldErrors.required('reportingInstance'));
  if (instance.length > reportingInstanceLimit) errs.push(fieldErrors.invalid('reportingInstance', '', `can have at most ${reportingInstanceLimit} characters`));
  const action = event.action ?? '';
  if (!action) errs.push(fieldErrors.required('action'));
  if (action.length > actionLimit) errs.push(fieldErrors.invalid('action', '', `can have at most ${actionLimit} characters`));
  const reason = event.reason ?? '';
  if (!reason) errs.push(fieldErrors.required('reason'));
  if (reason.length > reasonLimit) errs.push(fieldErrors.invalid('reason', '', `can have at most ${reasonLimit} characters`));
  // field paths below are the internal Event's names, as kube-apiserver validates after conversion
  if ((event.note ?? '').length > noteLimit) errs.push(fieldErrors.invalid('message', '', `can have at most ${noteLimit} characters`));
  errs.push(...validateObjectMeta(event.metadata, true, 'dns1123Subdomain'));
  if (event.series) {
    if ((event.series.count ?? 0) < 2) errs.push(fieldErrors.invalid('series.count', '', 'should be at least 2'));
    if (!event.series.lastObservedTime) errs.push(fieldErrors.required('series.lastObservedTime'));
  }
  if (!event.eventTime) errs.push(fieldErrors.required('eventTime'));
  if (event.type !== 'Normal' && event.type !== 'Warning') {
    errs.push(fieldErrors.invalid('type', '', `has invalid value: ${event.type ?? ''}`));
  }
  if (event.deprecatedFirstTimestamp) errs.push(fieldErrors.invalid('firstTimestamp', '', 'needs to be unset'));
  if (event.deprecatedLastTimestamp) errs.push(fieldErrors.invalid('lastTimestamp', '', 'needs to be unset'));
  if (event.deprecatedCount) errs.push(fieldErrors.invalid('count', '', 'needs to be unset'));
  if (event.deprecatedSource?.component || event.deprecatedSource?.host) errs.push(fieldErrors.invalid('source', '', 'needs to be unset'));
  return errs;
}

/** Fields an event keeps for life once written (field paths as Kubernetes' internal Event names them). */
const immutableEventFields: ReadonlyArray<[keyof EventObject, string]> = [
  ['regarding', 'involvedObject'], ['reason', 'reason'], ['note', 'message'], ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'], ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'], ['type', 'type'], ['eventTime', 'eventTime'], ['action', 'action'],
  ['related', 'related'], ['reportingController', 'reportingController'], ['reportingInstance', 'reportingInstance'],
];

const eventSeries = s.struct('EventSeries', {
  count: s.int32('count is the number of occurrences in this series up to the last heartbeat time.'),
  lastObservedTime: s.microTime('lastObservedTime is the time when last Event from the series was seen before last heartbeat.'),
}, undefined, { proto: { count: 1, lastObservedTime: 2 }, required: ['count', 'lastObservedTime'] });

/** The storage representation read with the internal Event's names, for kubectl's columns. */
const printed = (o: Readonly<KObject>): PrintedEvent => {
  const e = o as EventObject;
  return {
    involvedObject: e.regarding, reason: e.reason, message: e.note, source: e.deprecatedSource,
    firstTimestamp: e.deprecatedFirstTimestamp, lastTimestamp: e.deprecatedLastTimestamp, count: e.deprecatedCount,
    type: e.type, eventTime: e.eventTime, series: e.series, reportingController: e.reportingController, reportingInstance: e.reportingInstance,
  };
};

const regarding = (field: string) => (o: KObject) => (o as EventObject).regarding?.[field] ?? '';

export const eventKind: KindDeclaration = builtinKind({
  group: 'events.orch.io', internalGroup: '', version: 'v1', kind: 'Event', listKind: 'EventList',
  resource: 'events', singular: 'event', shortNames: ['ev'], namespaced: true,
  verbs: allVerbs,
  structural: s.struct('Event', typeAndMeta({
    eventTime: s.microTime('eventTime is the time when this Event was first observed. It is required.'),
    series: eventSeries,
    reportingController: s.string('reportingController is the name of the controller that emitted this Event, e.g. `orch.io/kubelet`.'),
    reportingInstance: s.string('reportingInstance is the ID of the controller instance, e.g. `kubelet-xyzf`.'),
    action: s.string('action is what action was taken/failed regarding to the regarding object.'),
    reason: s.string('reason is why the action was taken. It is human-readable.'),
    regarding: objectReferenceStructural,
    related: objectReferenceStructural,
    note: s.string('note is a human-readable description of the status of this operation.'),
    type: s.string('type is the type of this event (Normal, Warning), new types could be added in the future.'),
    deprecatedSource: eventSourceStructural,
    deprecatedFirstTimestamp: s.time('deprecatedFirstTimestamp is the deprecated field assuring backward compatibility with core.v1 Event type.'),
    deprecatedLastTimestamp: s.time('deprecatedLastTimestamp is the deprecated field assuring backward compatibility with core.v1 Event type.'),
    deprecatedCount: s.int32('deprecatedCount is the deprecated field assuring backward compatibility with core.v1 Event type.'),
  }), 'Event is a report of an event somewhere in the cluster.', {
    proto: {
      metadata: 1, eventTime: 2, series: 3, reportingController: 4, reportingInstance: 5, action: 6, reason: 7, regarding: 8,
      related: 9, note: 10, type: 11, deprecatedSource: 12, deprecatedFirstTimestamp: 13, deprecatedLastTimestamp: 14, deprecatedCount: 15,
    },
    required: ['eventTime'],
    pointers: ['series', 'related'],
  }),
  nameRule: 'dns1123Subdomain',
  table: eventColumns(printed),
  returnDeletedObject: false,
  allowCreateOnUpdate: true,
  ttlMs: (config) => config.eventTtlMs,
  fieldLabels: {
    reason: (o) => (o as EventObject).reason ?? '',
    type: (o) => (o as EventObject).type ?? '',
    reportingController: (o) => (o as EventObject).reportingController ?? '',
    'regarding.kind': regarding('kind'),
    'regarding.namespace': regarding('namespace'),
    'regarding.name': regarding('name'),
    'regarding.uid': regarding('uid'),
    'regarding.apiVersion': regarding('apiVersion'),
    'regarding.resourceVersion': regarding('resourceVersion'),
    'regarding.fieldPath': regarding('fieldPath'),
  },
  unknownFieldLabelMessage: fieldLabelNotSupported,
  validate: (obj) => validateNewEvent(obj as EventObject),
  validateUpdate(obj, old) {
    const errs = [...validateObjectMeta(obj.metadata, true, 'dns1123Subdomain'), ...validateObjectMetaUpdate(obj.metadata, old.metadata)];
    for (const [field, reported] of immutableEventFields) {
      if (JSON.stringify(obj[field] ?? null) !== JSON.stringify(old[field] ?? null)) {
        errs.push(fieldErrors.invalid(reported, obj[field] ?? '', 'field is immutable'));
      }
    }
    return errs;
  },
});
