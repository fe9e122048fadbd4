/**
 * kubectl's event columns (printEvent over Kubernetes' internal Event), shared by both Event
 * representations: each reads its own field names into the internal Event's shape.
 */
import { age, nameDescription, type TableColumn } from '../printing.js';
import type { KObject } from '../meta.js';

const fieldPathDescription = 'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: "spec.containers{name}" (where "name" refers to the name of the container that triggered the event) or if no container name is specified "spec.containers[2]" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.';

/** What printEvent reads, under the internal Event's names. */
export interface PrintedEvent {
  involvedObject?: { kind?: string; name?: string; fieldPath?: string };
  reason?: string;
  message?: string;
  source?: { component?: string; host?: string };
  firstTimestamp?: string;
  lastTimestamp?: string;
  count?: number;
  type?: string;
  eventTime?: string;
  series?: { count?: number; lastObservedTime?: string };
  reportingController?: string;
  reportingInstance?: string;
}

function firstSeen(e: PrintedEvent, now: number): string {
  return age(e.firstTimestamp || e.eventTime, now);
}

function lastSeen(e: PrintedEvent, now: number): string {
  if (e.series) return age(e.series.lastObservedTime, now);
  return e.lastTimestamp ? age(e.lastTimestamp, now) : firstSeen(e, now);
}

function target(e: PrintedEvent): string {
  const kind = (e.involvedObject?.kind ?? '').toLowerCase();
  return e.involvedObject?.name ? `${kind}/${e.involvedObject.name}` : kind;
}

/** formatEventSource: the source, else the reporting controller and instance. */
function source(e: PrintedEvent): string {
  const component = e.source?.component || e.reportingController || '';
  const instance = e.source?.host || e.reportingInstance || '';
  return instance ? `${component}, ${instance}` : component;
}

/** Singleton events of the new API have no count: they print as 1. */
function count(e: PrintedEvent): number {
  return e.series ? e.series.count ?? 0 : e.count || 1;
}

/** The columns of printEvent (wide ones at priority 1), reading objects through `read`. */
export function eventColumns(read: (o: Readonly<KObject>) => PrintedEvent): readonly TableColumn[] {
  return [
    { name: 'Last Seen', type: 'string', description: 'The time at which the most recent occurrence of this event was recorded.', cell: (o, now) => lastSeen(read(o), now) },
    { name: 'Type', type: 'string', description: 'Type of this event (Normal, Warning), new types could be added in the future', cell: (o) => read(o).type ?? '' },
    { name: 'Reason', type: 'string', description: 'This should be a short, machine understandable string that gives the reason for the transition into the object\'s current status.', cell: (o) => read(o).reason ?? '' },
    { name: 'Object', type: 'string', description: 'The object that this event is about.', cell: (o) => target(read(o)) },
    { name: 'Subobject', type: 'string', priority: 1, description: fieldPathDescription, cell: (o) => read(o).involvedObject?.fieldPath ?? '' },
    { name: 'Source', type: 'string', priority: 1, description: 'The component reporting this event. Should be a short machine understandable string.', cell: (o) => source(read(o)) },
    { name: 'Message', type: 'string', description: 'A human-readable description of the status of this operation.', cell: (o) => (read(o).message ?? '').trim() },
    { name: 'First Seen', type: 'string', priority: 1, description: 'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)', cell: (o, now) => firstSeen(read(o), now) },
    { name: 'Count', type: 'string', priority: 1, description: 'The number of times this event has occurred.', cell: (o) => count(read(o)) },
    { name: 'Name', type: 'string', priority: 1, format: 'name', description: nameDescription, cell: (o) => o.metadata.name ?? '' },
  ];
}
