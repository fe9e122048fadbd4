/**
 * The frames of one change of an encoded batch, as watchers ask for them: one Buffer over the
 * slab per frame, built on first use and shared by every watcher of its shape.
 */
import type { PooledBatch } from './encoder-pool.js';
import type { Frame, FrameSource } from './frames.js';
import type { WatchShape } from './shape.js';
import type { WatchSpec } from './watcher.js';

export class PooledFrames implements FrameSource {
  private readonly built = new Map<string, Frame>();
  constructor(private readonly batch: PooledBatch, private readonly change: number, private readonly shapes: ReadonlyMap<string, number>) {}

  private slot(spec: WatchSpec, slot: 'ADDED' | 'MODIFIED' | 'DELETED' | 'LEFT'): Frame {
    const key = `${(spec.shape as WatchShape).key}|${slot}`;
    let frame: Frame | undefined = this.built.get(key);
    if (frame) return frame;
    const shape = this.shapes.get((spec.shape as WatchShape).key);
    frame = shape === undefined ? undefined : this.batch.frame(this.change, shape, slot);
    if (!frame) throw new Error(`the encoder pool sent no ${slot} frame for ${key}`);
    this.built.set(key, frame);
    return frame;
  }

  frame(type: 'ADDED' | 'MODIFIED' | 'DELETED', spec: WatchSpec): Frame { return this.slot(spec, type); }
  leftSelectorFrame(spec: WatchSpec): Frame { return this.slot(spec, 'LEFT'); }
}
