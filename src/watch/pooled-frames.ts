/**
 * The frames of one change of an encoded batch, as watchers ask for them: one Buffer over the
 * slab per frame, built on first use and shared by every watcher of its shape. Asked once per
 * change and watcher, so the lookup builds no key: the shape's key (one string per watch) finds
 * the frames of its four slots.
 */
import type { PooledBatch } from './encoder-pool.js';
import type { Frame, FrameSource } from './frames.js';
import type { Watcher } from './watcher.js';

const slots = ['ADDED', 'MODIFIED', 'DELETED', 'LEFT'] as const;
type Slot = 0 | 1 | 2 | 3;
const slotOf = { ADDED: 0, MODIFIED: 1, DELETED: 2 } as const;

export class PooledFrames implements FrameSource {
  private readonly built = new Map<string, Array<Frame | undefined>>();
  constructor(private readonly batch: PooledBatch, private readonly change: number, private readonly shapes: ReadonlyMap<string, number>) {}

  private slot(key: string, slot: Slot): Frame {
    let frames = this.built.get(key);
    if (!frames) this.built.set(key, (frames = [undefined, undefined, undefined, undefined]));
    let frame = frames[slot];
    if (frame) return frame;
    const shape = this.shapes.get(key);
    frame = shape === undefined ? undefined : this.batch.frame(this.change, shape, slots[slot]);
    if (!frame) throw new Error(`the encoder pool sent no ${slots[slot]} frame for ${key}`);
    return (frames[slot] = frame);
  }

  frame(type: 'ADDED' | 'MODIFIED' | 'DELETED', w: Watcher): Frame { return this.slot(w.shapeKey as string, slotOf[type]); }
  leftSelectorFrame(w: Watcher): Frame { return this.slot(w.shapeKey as string, 3); }
}
