/**
 * Where a watch's batches go, for each transport, written under the output budget: chunked HTTP
 * (HTTP/1.1 chunked encoding, HTTP/2 data frames) and WebSocket messages. Classes, not object
 * literals of closures: a sink lives as long as its watch, and eight closures with their context
 * were about half a kilobyte per watch (0.5 MiB at 1,000 watchers).
 */
import type { ServerResponse } from 'node:http';
import type { Http2Stream } from 'node:http2';
import type { WebSocket } from 'ws';
import type { Frame } from '../watch/frames.js';
import { hasRoom, room, type WriteSizes } from './body-writer.js';
import type { Outlet } from './output-budget.js';
import type { PacedSink } from './paced-watch.js';

/** The bytes of a batch, as the output budget counts them. */
function batchBytes(frames: readonly Frame[]): number {
  let bytes = 0;
  for (const f of frames) bytes += f.length;
  return bytes;
}

/** A sink over an outlet of the output budget: a batch is written once the budget takes it. */
abstract class OutletSink implements PacedSink {
  readonly batchBytes: number;

  constructor(protected readonly outlet: Outlet, private readonly sizes: WriteSizes) {
    this.batchBytes = sizes.chunk;
  }

  hasRoom(): boolean { return hasRoom(this.outlet, this.sizes); }
  room(): Promise<boolean> { return room(this.outlet, this.sizes); }
  hold(bytes: number): void { this.outlet.hold(bytes); }
  bufferedBytes(): number { return this.outlet.pending; }
  abort(): void { this.outlet.cut('watch backlog'); }

  write(frames: readonly Frame[], done?: () => void): void {
    const written = this.outlet.write(batchBytes(frames), (taken) => this.send(frames, done ? () => { taken(); done(); } : taken));
    if (!written) done?.();
  }

  /** writes a batch to the transport; `taken` once the socket took its last frame */
  protected abstract send(frames: readonly Frame[], taken: () => void): void;
  abstract end(): void;
}

/** A chunked HTTP response (both compatibility responses write alike; HTTP/2 buffers in its stream). */
export class HttpWatchSink extends OutletSink {
  constructor(outlet: Outlet, sizes: WriteSizes, private readonly res: ServerResponse, private readonly stream: Http2Stream | undefined) {
    super(outlet, sizes);
  }

  protected send(frames: readonly Frame[], taken: () => void): void {
    const last = frames.length - 1;
    if (last === 0) { this.res.write(frames[0], taken); return; }
    // one write per batch, without concatenating the shared frames
    const target = this.stream ?? this.res;
    target.cork();
    for (let i = 0; i < last; i++) this.res.write(frames[i]);
    this.res.write(frames[last], taken);
    process.nextTick(() => target.uncork());
  }

  end(): void { if (!this.outlet.closed && !this.res.writableEnded) this.res.end(); }
}

/** One event per WebSocket message, as kube-apiserver sends them. */
export class WebSocketWatchSink extends OutletSink {
  readonly eventPerFrame = true;

  /** `binary`: messages are binary; pooled JSON frames are bytes, and a JSON watch still gets text messages */
  constructor(outlet: Outlet, sizes: WriteSizes, private readonly ws: WebSocket, private readonly binary: boolean) {
    super(outlet, sizes);
  }

  protected send(frames: readonly Frame[], taken: () => void): void {
    const last = frames.length - 1;
    const options = { binary: this.binary };
    for (let i = 0; i < last; i++) this.ws.send(frames[i], options);
    this.ws.send(frames[last], options, taken);
  }

  end(): void { this.ws.close(1000); }
}
