/**
 * core/v1 Event: the Events client-go's recorders, `kubectl events` and `kubectl describe` use. It
 * is a view of the events.orch.io/v1 Events in storage (the hub), converted at the store's edges,
 * with the core group's own (legacy) validation, field selectors and columns.
 */
import { fieldErrors, type FieldError } from '../../status/status-error.js';
import { allVerbs, builtinKind, fieldLabelNotSupported, type KindDeclaration } from '../kind.js';
import { objectReferenceStructural, typeAndMeta, type KObject } from '../meta.js';
import { s } from '../schema/builtin-structural.js';
import { eventColumns, type PrintedEvent } from '../events/event-printing.js';
import { isDns1123Subdomain, isQualifiedName, validateObjectMeta, validateObjectMetaUpdate } from '../validation/names.js';
import { coreEventConversion } from './event-conversion.js';
import { eventSourceStructural } from './event-source.js';

export interface CoreEventObject extends KObject {
  involvedObject?: Record<string, string>;
  reason?: string;
  message?: string;
  source?: { component?: string; host?: string };
  firstTimestamp?: string;
  lastTimestamp?: string;
  count?: number;
  type?: string;
  eventTime?: string;
  series?: { count?: number; lastObservedTime?: string };
  action?: string;
  related?: Record<string, string>;
  reportingComponent?: string;
  reportingInstance?: string;
}

const lengthLimit = 128;
const messageLimit = 1024;

/**
 * legacyValidateEvent, all that Kubernetes checks of an Event created or updated through core/v1
 * (field paths as its internal Event names them). An event without eventTime is an old-style one:
 * its namespace must match its object's; a new-style one must name its reporter and action.
 */
function validateLegacyEvent(event: CoreEventObject): FieldError[] {
  const errs: FieldError[] = [];
  const namespace = event.metadata.namespace ?? '';
  const objectNamespace = event.involvedObject?.namespace ?? '';
  const mismatch = () => fieldErrors.invalid('involvedObject.namespace', objectNamespace, 'does not match event.namespace');
  if (!event.eventTime) {
    // an event about a cluster-scoped object lives in no namespace, or in default for old clients
    if (objectNamespace ? namespace !== objectNamespace : namespace !== '' && namespace !== 'default') errs.push(mismatch());
  } else {
    if (!objectNamespace && namespace !== 'default' && namespace !== 'orch-system') errs.push(mismatch());
    const controller = event.reportingComponent ?? '';
    if (!controller) errs.push(fieldErrors.required('reportingController'));
    for (const msg of isQualifiedName(controller)) errs.push(fieldErrors.invalid('reportingController', controller, msg));
    const instance = event.reportingInstance ?? '';
    if (!instance) errs.push(fieldErrors.required('reportingInstance'));
    if (instance.length > lengthLimit) errs.push(fieldErrors.invalid('reportingInstance', '', `can have at most ${lengthLimit} characters`));
    const action = event.action ?? '';
    if (!action) errs.push(fieldErrors.required('action'));
    if (action.length > lengthLimit) errs.push(fieldErrors.invalid('action', '', `can have at most ${lengthLimit} characters`));
    const reason = event.reason ?? '';
    if (!reason) errs.push(fieldErrors.required('reason'));
    if (reason.length > lengthLimit) errs.push(fieldErrors.invalid('reason', '', `can have at most ${lengthLimit} characters`));
    if ((event.message ?? '').length > messageLimit) errs.push(fieldErrors.invalid('message', '', `can have at most ${messageLimit} characters`));
  }
  for (const msg of isDns1123Subdomain(namespace)) errs.push(fieldErrors.invalid('namespace', namespace, msg));
  return errs;
}

/** (a struct's description is its field's: the types are shared, so they carry the field's text) */
const eventSeries = s.struct('EventSeries', {
  count: s.int32('Number of occurrences in this series up to the last heartbeat time'),
  lastObservedTime: s.microTime('Time of the last occurrence observed'),
}, 'Data about the Event series this event represents or nil if it\'s a singleton Event.', { proto: { count: 1, lastObservedTime: 2 } });

const event = s.struct('Event', typeAndMeta({
  involvedObject: objectReferenceStructural,
  reason: s.string('This should be a short, machine understandable string that gives the reason for the transition into the object\'s current status.'),
  message: s.string('A human-readable description of the status of this operation.'),
  source: eventSourceStructural,
  firstTimestamp: s.time('The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)'),
  lastTimestamp: s.time('The time at which the most recent occurrence of this event was recorded.'),
  count: s.int32('The number of times this event has occurred.'),
  type: s.string('Type of this event (Normal, Warning), new types could be added in the future'),
  eventTime: s.microTime('Time when this Event was first observed.'),
  series: eventSeries,
  action: s.string('What action was taken/failed regarding to the Regarding object.'),
  related: objectReferenceStructural,
  reportingComponent: s.string('Name of the controller that emitted this Event, e.g. `orch.io/kubelet`.'),
  reportingInstance: s.string('ID of the controller instance, e.g. `kubelet-xyzf`.'),
}), 'Event is a report of an event somewhere in the cluster.  Events have a limited retention time and triggers and messages may evolve with time.  Event consumers should not rely on the timing of an event with a given Reason reflecting a consistent underlying trigger, or the continued existence of events with that Reason.  Events should be treated as informative, best-effort, supplemental data.', {
  proto: {
    metadata: 1, involvedObject: 2, reason: 3, message: 4, source: 5, firstTimestamp: 6, lastTimestamp: 7, count: 8, type: 9,
    eventTime: 10, series: 11, action: 12, related: 13, reportingComponent: 14, reportingInstance: 15,
  },
  required: ['metadata', 'involvedObject'],
  pointers: ['series', 'related'],
  withoutOmitEmpty: ['reportingComponent', 'reportingInstance'],
});

/** The core representation read with the internal Event's names, for kubectl's columns. */
const printed = (o: Readonly<KObject>): PrintedEvent => {
  const e = o as CoreEventObject;
  return { ...e, reportingController: e.reportingComponent };
};

const involvedObject = (field: string) => (o: KObject) => (o as CoreEventObject).involvedObject?.[field] ?? '';

export const coreEventKind: KindDeclaration = builtinKind({
  group: '', version: 'v1', kind: 'Event', listKind: 'EventList',
  resource: 'events', singular: 'event', shortNames: ['ev'], namespaced: true,
  verbs: allVerbs,
  storage: { group: 'events.orch.io', resource: 'events' },
  conversion: coreEventConversion,
  structural: event,
  nameRule: 'pathSegment',
  table: eventColumns(printed),
  returnDeletedObject: false,
  allowCreateOnUpdate: true,
  ttlMs: (config) => config.eventTtlMs,
  // ToSelectableFields of core events: `source` falls back to the reporting controller
  fieldLabels: {
    'involvedObject.kind': involvedObject('kind'),
    'involvedObject.namespace': involvedObject('namespace'),
    'involvedObject.name': involvedObject('name'),
    'involvedObject.uid': involvedObject('uid'),
    'involvedObject.apiVersion': involvedObject('apiVersion'),
    'involvedObject.resourceVersion': involvedObject('resourceVersion'),
    'involvedObject.fieldPath': involvedObject('fieldPath'),
    reason: (o) => (o as CoreEventObject).reason ?? '',
    reportingComponent: (o) => (o as CoreEventObject).reportingComponent ?? '',
    source: (o) => (o as CoreEventObject).source?.component || ((o as CoreEventObject).reportingComponent ?? ''),
    type: (o) => (o as CoreEventObject).type ?? '',
  },
  unknownFieldLabelMessage: fieldLabelNotSupported,
  // the strategy's checks first, then the generic ones on metadata (names need only be path segments)
  validate: (obj) => [...validateLegacyEvent(obj as CoreEventObject), ...validateObjectMeta(obj.metadata, true, 'pathSegment')],
  validateUpdate: (obj, old) => [
    ...validateObjectMeta(obj.metadata, true, 'pathSegment'), ...validateObjectMetaUpdate(obj.metadata, old.metadata),
    ...validateLegacyEvent(obj as CoreEventObject),
  ],
});
