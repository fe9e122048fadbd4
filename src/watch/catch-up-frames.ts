/**
 * The frames new watchers catch up with (initial ADDED events, replayed changes), built once per
 * object version and shape and shared by every watcher that starts with them — informers
 * restarting together all read the same snapshot. Bounded in bytes: the oldest entries go first,
 * so a large table caught up once does not stay doubled in memory. JSON lines are kept as bytes,
 * so each is UTF-8 encoded once, not once per socket.
 */
import type { StoredObject } from '../store/read-model.js';
import type { Frame } from './frames.js';

export class CatchUpFrames {
  private readonly byObject = new Map<StoredObject, Map<string, Buffer | Uint8Array>>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** The frame of `stored` under `key` (shape and event type), built by `build` on first use. */
  get(stored: StoredObject, key: string, build: () => Frame): Buffer | Uint8Array {
    let frames = this.byObject.get(stored);
    const known = frames?.get(key);
    if (known) return known;
    const built = build();
    const frame = typeof built === 'string' ? Buffer.from(built) : built;
    if (!frames) this.byObject.set(stored, (frames = new Map()));
    frames.set(key, frame);
    this.bytes += frame.length;
    this.evict();
    return frame;
  }

  get size(): { objects: number; bytes: number } { return { objects: this.byObject.size, bytes: this.bytes }; }

  private evict(): void {
    for (const [stored, frames] of this.byObject) {
      if (this.bytes <= this.maxBytes) return;
      for (const f of frames.values()) this.bytes -= f.length;
      this.byObject.delete(stored);
    }
  }
}
