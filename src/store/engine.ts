/**
 * What a storage engine must do for the writer worker. SQLite answers synchronously inside the
 * worker; etcd answers over the network and also reports changes other processes made.
 */
import type { ChangeEvent, CurrentRevision, LoadedState, Mutation, MutationResult, StoredItem } from './storage.js';

export interface CommitOutcome {
  /** the changes this batch committed, in revision order (engines that deliver changes through `onChanges` return none) */
  events: ChangeEvent[];
  results: MutationResult[];
}

export interface StorageEngine {
  /** the current state: every live key, the current and the compacted revision */
  load(): Promise<LoadedState>;
  /** checks preconditions and durably commits a batch; a mutation that fails its precondition fails alone */
  apply(batch: readonly Mutation[], now: number): Promise<CommitOutcome>;
  /** every live key under `prefix` as of a past `revision`; undefined when history is compacted */
  readAt(prefix: string, revision: number): Promise<StoredItem[] | undefined>;
  /** housekeeping: expire leases (committing their deletions) and compact history older than `historyMs` */
  maintain(now: number, historyMs: number): Promise<{ events: ChangeEvent[]; compactRevision: number }>;
  /** throws when storage cannot serve */
  ping(): Promise<void>;
  close(): Promise<void>;
  /**
   * Engines shared with other processes report every committed change here, in revision order,
   * each exactly once; `revision`: every change at or below it has now been reported.
   */
  onChanges?(listener: (events: ChangeEvent[], revision: number) => void): void;
  /** ...and report here when they no longer can (their change stream lost history) */
  onFailure?(listener: (message: string) => void): void;
  /** shared engines: the current revision, and whether the changes reported so far hold the state at it for keys under `prefix` */
  currentRevision?(prefix: string): Promise<CurrentRevision>;
}
