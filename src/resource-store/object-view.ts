/**
 * Stored objects as a view serves them: identical for the storage version; converted (and
 * remembered per stored object, so a list or a watch converts each object version once) for an
 * alias group or another version.
 */
import type { Conversion } from '../api/kind.js';
import type { KObject } from '../api/meta.js';
import { StoredObject } from '../store/read-model.js';

export class ObjectView {
  private readonly converted = new WeakMap<StoredObject, StoredObject>();
  private readonly convertedObjects = new WeakMap<object, Readonly<KObject>>();

  constructor(private readonly conversion: Conversion | undefined) {}

  get identity(): boolean { return this.conversion === undefined; }

  of(stored: StoredObject): StoredObject {
    if (!this.conversion) return stored;
    let view = this.converted.get(stored);
    if (!view) {
      view = new StoredObject(this.object(stored.object), stored.revision);
      this.converted.set(stored, view);
    }
    return view;
  }

  /** A stored object's content as served (for selectors, which see objects, not their versions). */
  object(stored: Readonly<KObject>): Readonly<KObject> {
    if (!this.conversion) return stored;
    let served = this.convertedObjects.get(stored);
    if (!served) {
      served = this.conversion.fromStorage(stored as KObject);
      this.convertedObjects.set(stored, served);
    }
    return served;
  }

  /** True when the conversion calls out: objects must be prepared before they are converted. */
  get needsPreparation(): boolean { return this.conversion?.prepare !== undefined; }

  /** Converts stored objects ahead (a webhook's batch), so that `of` and `object` answer for them. */
  async prepare(stored: readonly StoredObject[]): Promise<void> {
    if (this.conversion?.prepare && stored.length > 0) await this.conversion.prepare(stored.map((s) => s.object), 'fromStorage');
  }

  /** Converts a served object to storage ahead, so that `toStorage` answers for it. */
  async prepareServed(served: KObject): Promise<void> {
    if (this.conversion?.prepare) await this.conversion.prepare([served], 'toStorage');
  }

  /** The storage representation of a served object. */
  toStorage(served: KObject): KObject {
    return this.conversion ? this.conversion.toStorage(served) : served;
  }
}
