/**
 * What a storage engine must do for the writer worker. SQLite answers synchronously inside the
 * worker; etcd answers over the network and also reports changes other processes made.
 */
import type { ChangeEvent, LoadedState, Mutation, MutationResult, StoredItem } from './storage.js';

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
  /** engines shared with other processes report every committed change here, in revision order */
  onChanges?(listener: (events: ChangeEvent[]) => void): void;
}
