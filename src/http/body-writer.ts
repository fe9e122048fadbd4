/**
 * Writes a response body under the output budget: in chunks, with never more than a window of it
 * unsent, so a client that reads slowly holds a window of its response, never the whole body. A
 * body not handed to its socket by the request's deadline is cut, as kube-apiserver aborts a
 * response that outlives its timeout (HTTP/1.1: the connection closes; HTTP/2: the stream is reset).
 */
import { pipeline, Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import type { Outlet } from './output-budget.js';

/** How a body is cut into writes. */
export interface WriteSizes {
  /** bytes per write */
  chunk: number;
  /** bytes a body may have unsent before the next write waits for the socket */
  window: number;
}

/** Half the connection's budget at most, so a connection's one response never reaches it by writing ahead. */
export function writeSizes(perConnectionBudget: number): WriteSizes {
  const window = perConnectionBudget > 0 ? Math.min(256 * 1024, Math.floor(perConnectionBudget / 2)) : 256 * 1024;
  return { window, chunk: Math.max(1, Math.min(64 * 1024, Math.floor(window / 2))) };
}

/** A body already encoded, as chunk-sized views (no copies). */
export function* slices(body: Buffer, chunk: number): Generator<Buffer> {
  for (let at = 0; at < body.length; at += chunk) yield body.subarray(at, at + chunk);
}

export interface BodyTarget {
  /** the response's stream: its headers are written, its body is not */
  stream: { write(chunk: string | Buffer, taken: () => void): unknown; end(): unknown; readonly writableEnded: boolean };
  outlet: Outlet;
  sizes: WriteSizes;
  /** epoch milliseconds by which the body must be handed to the socket; Infinity: none */
  deadline: number;
}

/** Whether the outlet's stream is open with room for another chunk within the window. */
export function hasRoom(outlet: Outlet, sizes: WriteSizes): boolean {
  return !outlet.closed && outlet.pending <= Math.max(0, sizes.window - sizes.chunk);
}

/**
 * Resolves true once the outlet has room for another chunk, false if its stream closes first; at
 * the deadline (if any), the stream is cut.
 */
export function room(outlet: Outlet, sizes: WriteSizes, deadline = Number.POSITIVE_INFINITY): Promise<boolean> {
  const below = Math.max(0, sizes.window - sizes.chunk);
  if (outlet.closed) return Promise.resolve(false);
  if (outlet.pending <= below) return Promise.resolve(true);
  const left = deadline - Date.now();
  if (left <= 0) { outlet.cut('deadline'); return Promise.resolve(false); }
  const timer = Number.isFinite(left) ? setTimeout(() => outlet.cut('deadline'), left) : undefined;
  return outlet.whenBelow(below).finally(() => clearTimeout(timer));
}

/**
 * Writes `chunks` (gzipped on the way when asked), then ends the stream. Never throws: a failure
 * cuts the stream, which is all that can be done once its headers are out.
 */
export async function writeBody(target: BodyTarget, chunks: Iterable<string | Buffer>, gzip: boolean): Promise<void> {
  const { stream, outlet } = target;
  const source: AsyncIterable<string | Buffer> | Iterable<string | Buffer> = gzip
    ? pipeline(Readable.from(chunks, { objectMode: false }), createGzip({ level: 1, chunkSize: Math.max(64, target.sizes.chunk) }), () => { /* a failure ends the loop below */ })
    : chunks;
  try {
    // leaving the loop early destroys the gzip stream or closes the generator
    for await (const chunk of source) {
      if (!(await room(outlet, target.sizes, target.deadline)) || stream.writableEnded) break;
      if (!outlet.write(chunk.length, (taken) => stream.write(chunk, taken))) break;
    }
    // ended by someone else (a failed request's last resort) or cut: nothing more to write
    if (!outlet.closed && !stream.writableEnded) stream.end();
  } catch {
    outlet.cut('write failed');
  }
}
