/** What the generic store takes and answers: write contexts, list queries and results, delete options. */
import type { PropagationOptions } from '../api/deletion-policy.js';
import type { StrategyContext } from '../api/kind.js';
import type { KObject } from '../api/meta.js';
import type { FieldSelector } from '../api/selection/field-selector.js';
import type { LabelSelector } from '../api/selection/label-selector.js';
import type { AdmissionChain } from '../admission/admission.js';
import type { UserInfo } from '../auth/user.js';
import type { AuditAnnotator } from '../audit/capture.js';
import type { ReadModel, StoredObject } from '../store/read-model.js';
import type { SnapshotCache } from '../store/snapshot-cache.js';
import type { WriterClient } from '../store/writer-client.js';
import { errors } from '../status/status-error.js';

export interface WriteContext extends StrategyContext {
  dryRun: boolean;
  /** the field manager recorded in managedFields */
  manager: string;
  /** the object's managedFields were computed by server-side apply: keep them (else: an Update by `manager`) */
  applied?: boolean;
  /** who asks, for admission; undefined for the server's own controllers */
  user?: UserInfo;
  /** the request's audit record, for admission plugins' annotations; undefined when not audited */
  audit?: AuditAnnotator;
}

export interface ListQuery {
  namespace?: string;
  labelSelector?: LabelSelector;
  fieldSelector?: FieldSelector;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
}

export interface ListResult {
  revision: number;
  items: StoredObject[];
  continue?: string;
  remainingItemCount?: number;
}

export interface DeleteOptions extends PropagationOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  gracePeriodSeconds?: number;
}

/** What a DELETE answers: the object (deleted or terminating) or, for some kinds, a Success Status. */
export type DeleteOutcome =
  | { kind: 'object'; object: Readonly<KObject>; deleted: boolean }
  | { kind: 'status'; details: { name: string; group?: string; kind: string; uid?: string } };

export interface RegistryDeps {
  readModel: ReadModel;
  writer: WriterClient;
  snapshots: SnapshotCache;
  admission: AdmissionChain;
  /** `enableGarbageCollector`: DELETE adds the garbage collector's finalizers (kube-apiserver's --enable-garbage-collector) */
  config: { eventTtlMs: number; continueTtlMs: number; enableGarbageCollector: boolean };
}

export function parseResourceVersion(rv: string): number {
  if (!/^[0-9]+$/.test(rv)) throw errors.badRequest(`invalid resource version: ${JSON.stringify(rv)}`);
  const n = Number(rv);
  if (!Number.isSafeInteger(n)) throw errors.badRequest(`invalid resource version: ${JSON.stringify(rv)}`);
  return n;
}
