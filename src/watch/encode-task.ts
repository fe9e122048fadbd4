/**
 * What the watch hub asks an encoder worker to do, and how the answer is laid out: a batch of
 * committed changes, and per storage table the shapes its watchers want (encoding × view). The
 * worker writes every frame once into shared slabs and answers where each one is (slab, offset,
 * length).
 */
import type { StructSchema } from '../api/schema.js';
import type { WatchShape } from './shape.js';

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface EncodeChange {
  resource: string;
  type: ChangeType;
  revision: number;
  /** the object's served JSON */
  object: string;
  /** the previous content's JSON, for watchers whose selector the object leaves (MODIFIED of a filtered table) */
  previous?: string;
}

export interface EncodeTable {
  shapes: WatchShape[];
  /** some watcher selects (label or field selector): MODIFIED changes also get ADDED and left-selector frames */
  filtered: boolean;
  /** the storage kind as data, for a kind the worker's catalog does not hold (registered at runtime) */
  kind?: { group: string; version: string; kind: string; schema: StructSchema };
}

export interface EncodeTask {
  changes: EncodeChange[];
  tables: Record<string, EncodeTable>;
}

/** The frames one change may have per shape: its own type, and those filtered watchers may need. */
export const frameSlots = ['ADDED', 'MODIFIED', 'DELETED', 'LEFT'] as const;
export type FrameSlot = (typeof frameSlots)[number];
export const slotIndex: Readonly<Record<FrameSlot, number>> = { ADDED: 0, MODIFIED: 1, DELETED: 2, LEFT: 3 };

/** Index entries are [slab, offset, length]; slab -1: not encoded. */
export const entryInts = 3;

/**
 * Where a change's frames start in the index: changes in order, each with (shapes of its table ×
 * slots) entries; the last element is the index's length.
 */
export function indexBases(task: EncodeTask): number[] {
  const bases: number[] = [];
  let at = 0;
  for (const c of task.changes) {
    bases.push(at);
    at += task.tables[c.resource].shapes.length * frameSlots.length * entryInts;
  }
  bases.push(at);
  return bases;
}

/** The index position of one frame. */
export function entryAt(base: number, shape: number, slot: FrameSlot): number {
  return base + (shape * frameSlots.length + slotIndex[slot]) * entryInts;
}

/** The slots a change is encoded in. */
export function slotsOf(change: EncodeChange, filtered: boolean): FrameSlot[] {
  if (change.type !== 'MODIFIED') return [change.type];
  return filtered && change.previous !== undefined ? ['MODIFIED', 'ADDED', 'LEFT'] : filtered ? ['MODIFIED', 'ADDED'] : ['MODIFIED'];
}
