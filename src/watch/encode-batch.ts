/**
 * The encoder pool's work, as a function (workers/encoder.ts runs it; tests run it in-process):
 * every change of a batch encoded once per shape its table's watchers want, each frame written
 * once into the worker's slabs. Encoders are rebuilt from the shapes' data with the same
 * `watchEncoders` the front thread uses for bookmarks and catch-up, so the bytes are the same.
 */
import { apiVersionOf, type KindDeclaration } from '../api/kind.js';
import type { KObject } from '../api/meta.js';
import { withKubernetesAliases } from '../api/registry/alias.js';
import { builtinKindsWithoutCrds } from '../api/registry/builtin-without-crds.js';
import { StoredObject } from '../store/read-model.js';
import { entryAt, indexBases, slotsOf, type EncodeTask, type FrameSlot } from './encode-task.js';
import { inlineFrame } from './frames.js';
import { watchEncoders, type EncodedKind, type WatchEncoders, type WatchShape } from './shape.js';
import type { SlabNews, SlabWriter } from './slabs.js';

/** The declarations a worker can rebuild views of, by served apiVersion and resource. */
const catalog = new Map<string, KindDeclaration>(withKubernetesAliases(builtinKindsWithoutCrds).map((k) => [`${apiVersionOf(k)}|${k.resource}`, k]));

/** Whether a worker holds this declaration itself (else a task carries its storage kind as data). */
export function workerKnows(kind: { group: string; version: string; resource: string }): boolean {
  return catalog.has(`${apiVersionOf(kind)}|${kind.resource}`);
}

/** Whether the pool can encode a shape of this served declaration (else the front thread does). */
export function poolEncodes(shape: WatchShape): boolean {
  return (!shape.representation && !shape.converted) || catalog.has(`${shape.served.apiVersion}|${shape.served.resource}`);
}

function encodersOf(shape: WatchShape, storageKind: EncodedKind | undefined): WatchEncoders {
  const served = catalog.get(`${shape.served.apiVersion}|${shape.served.resource}`) ?? storageKind;
  if (!served) throw new Error(`the encoder pool knows no kind served as ${shape.served.apiVersion} ${shape.served.resource}`);
  const conversion = served.conversion;
  const version = shape.converted && conversion ? { object: (o: Readonly<KObject>) => conversion.fromStorage(o as KObject) } : undefined;
  return watchEncoders(served, shape.encoding, shape.representation, version);
}

export interface EncodedBatch {
  /** per change × shape × slot: [slab, offset, length] (see encode-task.ts) */
  index: Int32Array;
  slabs: SlabNews;
}

export function encodeBatch(task: EncodeTask, out: SlabWriter): EncodedBatch {
  const bases = indexBases(task);
  const index = new Int32Array(bases[bases.length - 1]).fill(-1);
  const objects = task.changes.map((change) => new StoredObject(JSON.parse(change.object) as KObject, change.revision, change.object));
  const left: Array<StoredObject | undefined> = [];
  /** the object a slot's frame carries: a LEFT frame, the previous content at the change's revision, as the cacher sends an object leaving a selector */
  const sourceOf = (i: number, slot: FrameSlot): StoredObject => {
    if (slot !== 'LEFT') return objects[i];
    const change = task.changes[i];
    const previous = JSON.parse(change.previous as string) as KObject;
    previous.metadata.resourceVersion = String(change.revision);
    return (left[i] ??= new StoredObject(previous, change.revision));
  };
  // Shape by shape, each change's own event type first: the frames a watcher without selectors
  // gets from one batch then lie side by side in a slab, and go out as one write (coalesceFrames).
  for (const [table, t] of Object.entries(task.tables)) {
    t.shapes.forEach((shape, s) => {
      const enc = encodersOf(shape, t.kind);
      for (const pass of ['own', 'other'] as const) {
        task.changes.forEach((change, i) => {
          if (change.resource !== table) return;
          const slots = slotsOf(change, t.filtered);
          for (const slot of pass === 'own' ? slots.slice(0, 1) : slots.slice(1)) {
            const type: Exclude<FrameSlot, 'LEFT'> = slot === 'LEFT' ? 'DELETED' : slot;
            const [slab, offset, length] = out.put(inlineFrame(enc, type, sourceOf(i, slot)));
            index.set([slab, offset, length], entryAt(bases[i], s, slot));
          }
        });
      }
    });
  }
  return { index, slabs: out.takeNews() };
}
