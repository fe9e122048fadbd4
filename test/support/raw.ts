/** Byte-level requests and watches, for encodings the JSON helpers do not read (Protobuf). */
import { request as httpsRequest } from 'node:https';
import type { TestServer } from './server.js';

export interface RawResponse { status: number; headers: Record<string, unknown>; body: Buffer }

/** One request whose response body is kept as bytes. */
export function raw(server: TestServer, path: string, headers: Record<string, string>, method = 'GET', body?: Buffer): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`${server.url}${path}`, {
      method, headers: { ...headers, ...(body ? { 'content-length': String(body.length) } : {}) },
      ca: server.admin.ca, cert: server.admin.cert, key: server.admin.key, agent: false,
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A watch whose bytes are collected until `until` holds; `opened` settles once the response has begun. */
export function watchUntil(server: TestServer, path: string, accept: string, until: (bytes: Buffer) => boolean, timeoutMs = 15_000): { opened: Promise<void>; done: Promise<Buffer> } {
  let opened!: () => void;
  const openedPromise = new Promise<void>((r) => { opened = r; });
  const done = new Promise<Buffer>((resolve, reject) => {
    const req = httpsRequest(`${server.url}${path}`, { ca: server.admin.ca, cert: server.admin.cert, key: server.admin.key, headers: { accept }, agent: false }, (res) => {
      opened();
      let got = Buffer.alloc(0);
      const timer = setTimeout(() => { req.destroy(); reject(new Error(`watch ${path} saw only: ${got.toString('latin1').slice(0, 2000)}`)); }, timeoutMs);
      res.on('data', (c: Buffer) => {
        got = Buffer.concat([got, c]);
        if (until(got)) { clearTimeout(timer); req.destroy(); resolve(got); }
      });
    });
    req.on('error', () => { /* destroyed on purpose */ });
    req.end();
  });
  return { opened: openedPromise, done };
}

/** The length-prefixed frames of a Protobuf watch stream. */
export function protobufFrames(bytes: Buffer): Buffer[] {
  const frames: Buffer[] = [];
  for (let at = 0; at + 4 <= bytes.length;) {
    const length = bytes.readUInt32BE(at);
    if (at + 4 + length > bytes.length) break;
    frames.push(bytes.subarray(at + 4, at + 4 + length));
    at += 4 + length;
  }
  return frames;
}

/** metav1.WatchEvent {type = 1; object = 2 RawExtension {raw = 1}} read by hand: the type and the enveloped object's bytes. */
export function watchEventOf(frame: Buffer): { type: string; raw: Buffer } {
  const fields = (bytes: Buffer): Map<number, Buffer> => {
    const out = new Map<number, Buffer>();
    let i = 0;
    const varint = () => { let v = 0; let shift = 0; for (;;) { const b = bytes[i++]; v += (b & 0x7f) * 2 ** shift; if (b < 0x80) return v; shift += 7; } };
    while (i < bytes.length) {
      const key = varint();
      const len = varint();
      out.set(key >>> 3, bytes.subarray(i, i + len));
      i += len;
    }
    return out;
  };
  const event = fields(frame);
  return { type: event.get(1)?.toString() ?? '', raw: fields(event.get(2) ?? Buffer.alloc(0)).get(1) ?? Buffer.alloc(0) };
}
