/**
 * How objects print as rows of a Table (server-side printing): column definitions declared per
 * kind, and the human durations kubectl shows in AGE columns (k8s.io/apimachinery duration.HumanDuration).
 */
import type { KObject } from './meta.js';

export interface TableColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  description: string;
  /** 0: shown by default; 1: only with -o wide */
  priority?: number;
  cell(object: Readonly<KObject>, now: number): unknown;
}

export const nameDescription = 'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';
export const creationTimestampDescription = 'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

/** A duration as kubectl prints ages: 45s, 3m12s, 5h, 3d4h, 2y. */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const days = Math.trunc(hours / 24) % 365;
    return days === 0 ? `${Math.trunc(hours / 24 / 365)}y` : `${Math.trunc(hours / 24 / 365)}y${days}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

/** translateTimestampSince: the age of a timestamp, or <unknown> when it is unset. */
export function age(timestamp: string | undefined, now: number): string {
  if (!timestamp) return '<unknown>';
  return humanDuration(now - Date.parse(timestamp));
}

export const nameColumn: TableColumn = { name: 'Name', type: 'string', format: 'name', description: nameDescription, cell: (o) => o.metadata.name ?? '' };
export const ageColumn: TableColumn = { name: 'Age', type: 'string', description: creationTimestampDescription, cell: (o, now) => age(o.metadata.creationTimestamp, now) };

/** The columns of a kind that declares none (the spec's default Table). */
export const defaultColumns: readonly TableColumn[] = [
  nameColumn,
  { name: 'Created At', type: 'date', description: creationTimestampDescription, cell: (o) => o.metadata.creationTimestamp ?? '' },
];
