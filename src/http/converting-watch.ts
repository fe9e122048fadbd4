/**
 * Watches of a version whose objects a webhook converts: the hub fans out the storage version's
 * JSON frames as for any watcher, and this sink converts each batch's objects in one review before
 * the frames reach the client, in order (as kube-apiserver converts each event for each watcher of
 * another version). Batches waiting for the webhook count as the stream's buffered bytes, so a
 * slow webhook ends the stream by the hub's bound like a slow client, never growing memory.
 */
import type { KObject } from '../api/meta.js';
import type { Frame } from '../watch/frames.js';
import type { PacedSink } from './paced-watch.js';
import type { WatchTransport } from './watch-handler.js';

type Convert = (objects: readonly KObject[]) => Promise<KObject[]>;

function text(frame: Frame): string {
  return typeof frame === 'string' ? frame : Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength).toString('utf8');
}

class ConvertingSink implements PacedSink {
  private chain: Promise<void> = Promise.resolve();
  private pendingBytes = 0;

  constructor(private readonly inner: PacedSink, private readonly convert: Convert, private readonly apiVersion: string) {}

  get batchBytes(): number { return this.inner.batchBytes; }
  /** each frame is parsed as one JSON event */
  readonly eventPerFrame = true;
  hasRoom(): boolean { return this.pendingBytes === 0 && this.inner.hasRoom(); }
  room(): Promise<boolean> { return this.chain.then(() => this.inner.room()); }
  hold(bytes: number): void { this.inner.hold(bytes); }
  bufferedBytes(): number { return this.inner.bufferedBytes() + this.pendingBytes; }

  write(frames: readonly Frame[]): void {
    let bytes = 0;
    for (const f of frames) bytes += f.length;
    this.pendingBytes += bytes;
    this.chain = this.chain.then(async () => {
      try {
        this.inner.write(await this.converted(frames));
      } catch (err) {
        const status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: (err as Error).message, reason: 'InternalError', code: 500 };
        this.inner.write([`${JSON.stringify({ type: 'ERROR', object: status })}\n`]);
        this.inner.end();
      } finally {
        this.pendingBytes -= bytes;
      }
    });
  }

  end(): void { this.chain = this.chain.then(() => this.inner.end()); }
  abort(): void { this.inner.abort(); }

  /** Each JSON line's object converted (one review per batch); bookmarks and errors only renamed or kept. */
  private async converted(frames: readonly Frame[]): Promise<Frame[]> {
    const events = frames.map((f) => JSON.parse(text(f)) as { type: string; object: KObject });
    const objects = events.filter((e) => e.type !== 'BOOKMARK' && e.type !== 'ERROR').map((e) => e.object);
    const out = objects.length > 0 ? await this.convert(objects) : [];
    let next = 0;
    return events.map((e) => {
      if (e.type === 'ERROR') return `${JSON.stringify(e)}\n`;
      const object = e.type === 'BOOKMARK' ? { ...e.object, apiVersion: this.apiVersion } : out[next++];
      return `${JSON.stringify({ type: e.type, object })}\n`;
    });
  }
}

/** `transport`, its frames converted by `convert` to `apiVersion` before they are written. */
export function convertingTransport(transport: WatchTransport, convert: Convert, apiVersion: string): WatchTransport {
  return {
    open: () => new ConvertingSink(transport.open(), convert, apiVersion),
    onClientGone: (listener) => transport.onClientGone(listener),
  };
}
