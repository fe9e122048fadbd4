/**
 * The frames new watchers catch up with (initial ADDED events, replayed changes), built once per
 * object version and shape and shared by every watcher that starts with them — informers
 * restarting together all read the same snapshot. Bounded in bytes: the oldest entries go first,
 * so a large table caught up once does not stay doubled in memory. JSON lines are kept as bytes,
 * so each is UTF-8 encoded once, not once per socket.
 */
import type { StoredObject } from '../store/read-model.js';
import type { Frame } from './frames.js';
import { SlabPins, type SlabHolder, type SlabTable } from './slabs.js';

export class CatchUpFrames implements SlabHolder {
  readonly slabPins = new SlabPins();
  private readonly byObject = new Map<StoredObject, Map<string, Buffer | Uint8Array>>();
  private bytes = 0;

  /** `slabs`: frames the encoder pool wrote stay pinned while kept here */
  constructor(private readonly maxBytes: number, private readonly slabs?: SlabTable) {}

  /** A kept frame, if any. */
  peek(stored: StoredObject, key: string): Buffer | Uint8Array | undefined {
    return this.byObject.get(stored)?.get(key);
  }

  /** Keeps a frame built elsewhere (the encoder pool's). */
  put(stored: StoredObject, key: string, frame: Buffer | Uint8Array): void {
    let frames = this.byObject.get(stored);
    if (!frames) this.byObject.set(stored, (frames = new Map()));
    if (frames.has(key)) return;
    frames.set(key, frame);
    this.slabs?.retain([frame], this);
    this.bytes += frame.length;
    this.evict();
  }

  /** The slab table needs the slabs back: everything kept goes. */
  cut(): void {
    for (const frames of this.byObject.values()) this.slabs?.release([...frames.values()], this);
    this.byObject.clear();
    this.bytes = 0;
  }

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
      this.slabs?.release([...frames.values()], this);
      this.byObject.delete(stored);
    }
  }
}
