/**
 * The bytes one event becomes for a watcher: a JSON line, a length-prefixed protobuf WatchEvent,
 * a CBOR item; of the kind's object or of a view of it (Table, PartialObjectMetadata). Each shape
 * of a change is built once and shared by every watcher that wants it.
 */
import { atResourceVersion } from '../api/json-copy.js';
import type { KObject } from '../api/meta.js';
import { encodeWatchFrame } from '../codec/proto/encode.js';
import { StoredObject, type ObjectChange } from '../store/read-model.js';
import { slotIndex } from './encode-task.js';
import type { Watcher, WatchSpec } from './watcher.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
export type WatchEncoding = 'json' | 'protobuf' | 'cbor';
/** One whole event as sent: a JSON line, or a length-prefixed protobuf WatchEvent. */
export type Frame = string | Uint8Array;

export interface WatchView {
  key: string;
  convert(object: Readonly<KObject>): Record<string, unknown>;
  /** the conversion depends on the object version alone (not on the time, as a Table's ages do): its frames may be kept */
  perObject: boolean;
}

/** Merged runs of one delivery, by their first and last frame: watchers given the same run share one view. */
export type FrameRuns = Map<Uint8Array, { last: Uint8Array; view: Buffer }>;

/**
 * `frames[0 … count)` with each run of byte frames that lie side by side in one buffer (a batch's
 * frames in an encoder slab) merged into one view of it: one socket write instead of one per
 * event, and no copy. Always a new array, so a watcher can reuse its own.
 */
export function coalesceFrames(frames: readonly Frame[], count = frames.length, runs?: FrameRuns): Frame[] {
  const out: Frame[] = [];
  let runStart = 0;
  for (let i = 1; i <= count; i++) {
    const prev = frames[i - 1];
    const cur = i < count ? frames[i] : undefined;
    const adjacent = cur !== undefined && typeof prev !== 'string' && typeof cur !== 'string' &&
      cur.buffer === prev.buffer && prev.byteOffset + prev.byteLength === cur.byteOffset;
    if (adjacent) continue;
    out.push(i - runStart > 1 ? mergedRun(frames[runStart] as Uint8Array, prev as Uint8Array, runs) : prev);
    runStart = i;
  }
  return out;
}

/**
 * `frames` as one frame, their bytes (or text) back to back: copied once, where they do not lie
 * side by side already. A group hands it to every member at one cursor, so each stream write is
 * one HTTP chunk rather than one per frame (each a chunk header, two more iovecs and a pass
 * through Node's chunked-write path, in every member's write).
 */
export function joinFrames(frames: readonly Frame[]): Frame {
  if (frames.length === 1) return frames[0];
  if (frames.every((f) => typeof f === 'string')) return frames.join('');
  return Buffer.concat(frames.map((f) => (typeof f === 'string' ? Buffer.from(f, 'utf8') : f)));
}

function mergedRun(first: Uint8Array, last: Uint8Array, runs: FrameRuns | undefined): Buffer {
  const known = runs?.get(first);
  if (known?.last === last) return known.view;
  const view = Buffer.from(first.buffer, first.byteOffset, last.byteOffset + last.byteLength - first.byteOffset);
  runs?.set(first, { last, view });
  return view;
}

/** A frame built on the front thread: a JSON line, a CBOR item, or a protobuf frame of a view. */
export function inlineFrame(spec: Pick<WatchSpec, 'encoding' | 'view' | 'envelope' | 'cbor'>, type: WatchEventType, object: StoredObject): Frame {
  if (spec.encoding === 'protobuf' && spec.envelope) return encodeWatchFrame(type, spec.envelope(object.object));
  return spec.cbor ? spec.cbor(type, object.object) : jsonFrame(type, eventJson(spec, object));
}

/** The JSON an event carries for a watcher: the object's served JSON, or its view's. */
function eventJson(spec: Pick<WatchSpec, 'view'>, object: StoredObject): string {
  return spec.view ? JSON.stringify(spec.view.convert(object.object)) : object.json;
}

export function jsonFrame(type: WatchEventType, objectJson: string): string {
  return `{"type":"${type}","object":${objectJson}}\n`;
}

function bookmarkObject(typeMeta: { kind: string; apiVersion: string }, revision: number, annotations: Readonly<Record<string, string>> | undefined): KObject {
  const metadata: KObject['metadata'] = { resourceVersion: String(revision) };
  if (annotations) metadata.annotations = { ...annotations };
  return { kind: typeMeta.kind, apiVersion: typeMeta.apiVersion, metadata };
}

/** A BOOKMARK: an empty object of the kind (its view's, for a view) at `revision`, with `annotations` if any. */
export function bookmarkFrame(spec: Pick<WatchSpec, 'typeMeta' | 'encoding' | 'envelope' | 'cbor' | 'view'>, revision: number, annotations?: Readonly<Record<string, string>>): Frame {
  if (spec.encoding === 'protobuf' && spec.envelope) {
    return encodeWatchFrame('BOOKMARK', spec.envelope(bookmarkObject(spec.typeMeta, revision, annotations)));
  }
  if (spec.cbor) return spec.cbor('BOOKMARK', bookmarkObject(spec.typeMeta, revision, annotations));
  if (spec.view) return jsonFrame('BOOKMARK', JSON.stringify(spec.view.convert(bookmarkObject(spec.typeMeta, revision, annotations))));
  const { typeMeta } = spec;
  const extra = annotations ? `,"annotations":${JSON.stringify(annotations)}` : '';
  return jsonFrame('BOOKMARK', `{"kind":${JSON.stringify(typeMeta.kind)},"apiVersion":${JSON.stringify(typeMeta.apiVersion)},"metadata":{"resourceVersion":"${revision}","creationTimestamp":null${extra}}}`);
}

/** The previous content of an object that stopped matching a selector, at the change's revision. */
export function leftSelectorObject(change: ObjectChange): StoredObject {
  return new StoredObject(atResourceVersion(change.previous?.object ?? change.object.object, String(change.revision)), change.revision);
}

/** Whom a frame is for: watchers with the same `frameKey` (and so the same encoding and view) share it. */
export type FrameSubject = Pick<Watcher, 'frameKey' | 'spec'>;

/** The frames one change may produce for watchers of one encoding, each built on first use. */
export interface FrameSource {
  frame(type: 'ADDED' | 'MODIFIED' | 'DELETED', watcher: FrameSubject): Frame;
  leftSelectorFrame(watcher: FrameSubject): Frame;
}

/**
 * The frames of one change built so far, by watcher key (`Watcher.frameKey`) and slot (the
 * pool's `slotIndex`: ADDED, MODIFIED, DELETED, left the selector). Asked once
 * per change and watcher, so a lookup builds no key string: the watcher's key, made once per
 * watch, finds the frames of its four slots.
 */
export class FrameSlots {
  private readonly byKey = new Map<string, Array<Frame | undefined>>();

  of(key: string): Array<Frame | undefined> {
    let slots = this.byKey.get(key);
    if (!slots) this.byKey.set(key, (slots = [undefined, undefined, undefined, undefined]));
    return slots;
  }
}

/** Frames built on the front thread (JSON, CBOR, views), once per encoding and view and shared. */
export class InlineFrames implements FrameSource {
  private readonly built = new FrameSlots();
  private left: StoredObject | undefined;
  constructor(private readonly change: ObjectChange) {}

  frame(type: 'ADDED' | 'MODIFIED' | 'DELETED', w: FrameSubject): Frame {
    const slots = this.built.of(w.frameKey);
    return (slots[slotIndex[type]] ??= inlineFrame(w.spec, type, this.change.object));
  }

  leftSelectorFrame(w: FrameSubject): Frame {
    const slots = this.built.of(w.frameKey);
    return (slots[slotIndex.LEFT] ??= inlineFrame(w.spec, 'DELETED', (this.left ??= leftSelectorObject(this.change))));
  }
}
