/**
 * The frames of one change of an encoded batch, as watchers ask for them: one Buffer over the
 * slab per frame, built on first use and shared by every watcher of its shape.
 */
import type { PooledBatch } from './encoder-pool.js';
import { slotIndex, type FrameSlot } from './encode-task.js';
import { FrameSlots, type Frame, type FrameSource, type FrameSubject } from './frames.js';

export class PooledFrames implements FrameSource {
  private readonly built = new FrameSlots();
  constructor(private readonly batch: PooledBatch, private readonly change: number, private readonly shapes: ReadonlyMap<string, number>) {}

  /** `key`: the watcher's shape key, which `shapes` maps to its position in the batch's table */
  private slot(key: string, slot: FrameSlot): Frame {
    const slots = this.built.of(key);
    const known = slots[slotIndex[slot]];
    if (known) return known;
    const shape = this.shapes.get(key);
    const frame = shape === undefined ? undefined : this.batch.frame(this.change, shape, slot);
    if (!frame) throw new Error(`the encoder pool sent no ${slot} frame for ${key}`);
    return (slots[slotIndex[slot]] = frame);
  }

  frame(type: 'ADDED' | 'MODIFIED' | 'DELETED', w: FrameSubject): Frame { return this.slot(w.frameKey, type); }
  leftSelectorFrame(w: FrameSubject): Frame { return this.slot(w.frameKey, 'LEFT'); }
}
