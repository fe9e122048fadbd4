/**
 * A request's body, read whole up to --max-request-body-bytes: the body-limit filter refuses a
 * declared Content-Length over the limit before anything is read; this refuses what actually
 * arrives past it.
 */
import { errors } from '../status/status-error.js';
import { header, type Request } from './exchange.js';

/** Reads a request body up to `limit` bytes (0: unlimited); past it, 413 as kube-apiserver answers. */
export function readBody(req: Request, maxBytes: number): Promise<Buffer> {
  const limit = maxBytes > 0 ? maxBytes : Number.POSITIVE_INFINITY;
  return new Promise((resolve, reject) => {
    const declared = Number(header(req, 'content-length') ?? '0');
    if (declared > limit) { reject(errors.requestEntityTooLarge(limit)); return; }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        done = true;
        reject(errors.requestEntityTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => { if (!done) { done = true; resolve(Buffer.concat(chunks, size)); } });
    req.on('error', (err) => { if (!done) { done = true; reject(err); } });
  });
}
