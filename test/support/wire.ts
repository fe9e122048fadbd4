/**
 * Byte-level helpers for the wire-format suites: raw responses and streams, protoc as an
 * independent protobuf reader and writer, and the framing of protobuf watch streams.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestServer } from './server.js';

export interface RawResponse { status: number; headers: Record<string, unknown>; body: Buffer }

/** Raw bytes of a response (the harness decodes text). */
export function raw(server: TestServer, path: string, headers: Record<string, string>, method = 'GET', body?: Buffer): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`${server.url}${path}`, { method, headers: { ...headers, ...(body ? { 'content-length': String(body.length) } : {}) }, ca: server.admin.ca, cert: server.admin.cert, key: server.admin.key, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A response body read as it arrives: for watches whose events a test waits for. */
export class RawStream {
  status = 0;
  headers: Record<string, unknown> = {};
  body = Buffer.alloc(0);
  ended = false;
  private readonly waiters = new Set<() => void>();
  private close: () => void = () => {};

  constructor(server: TestServer, path: string, headers: Record<string, string>) {
    const req = httpsRequest(`${server.url}${path}`, { headers, ca: server.admin.ca, cert: server.admin.cert, key: server.admin.key, agent: false }, (res) => {
      this.status = res.statusCode ?? 0;
      this.headers = res.headers;
      res.on('data', (c: Buffer) => { this.body = Buffer.concat([this.body, c]); this.wake(); });
      res.on('close', () => { this.ended = true; this.wake(); });
      this.wake();
    });
    req.on('error', () => { this.ended = true; this.wake(); });
    req.end();
    this.close = () => req.destroy();
  }

  private wake(): void { for (const w of [...this.waiters]) w(); }

  /** Waits until `pred()` holds; fails with what arrived when the stream ends first or time runs out. */
  waitFor(pred: () => boolean, what: string, timeoutMs = 8000): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (pred()) { done(); resolve(); } else if (this.ended) { done(); reject(new Error(`stream ended before ${what}: status ${this.status}, ${this.body.length} bytes`)); }
      };
      const timer = setTimeout(() => { done(); reject(new Error(`timed out waiting for ${what}: status ${this.status}, ${this.body.length} bytes`)); }, timeoutMs);
      const done = () => { clearTimeout(timer); this.waiters.delete(check); };
      this.waiters.add(check);
      check();
    });
  }

  destroy(): void { this.close(); }
}

/** protoc --decode_raw as a nested map of field number → values. */
export type Raw = Map<number, Array<string | Raw>>;

export function decodeRaw(bytes: Buffer): Raw {
  const out = spawnSync('protoc', ['--decode_raw'], { input: bytes });
  assert.equal(out.status, 0, String(out.stderr));
  const root: Raw = new Map();
  const stack: Raw[] = [root];
  for (const line of String(out.stdout).split('\n').map((l) => l.trim()).filter(Boolean)) {
    const top = stack[stack.length - 1];
    let m;
    if ((m = /^(\d+) \{$/.exec(line))) {
      const child: Raw = new Map();
      (top.get(Number(m[1])) ?? top.set(Number(m[1]), []).get(Number(m[1])) as Array<string | Raw>).push(child);
      stack.push(child);
    } else if (line === '}') {
      stack.pop();
    } else if ((m = /^(\d+): (.*)$/.exec(line))) {
      const value = m[2].startsWith('"') ? JSON.parse(m[2]) as string : m[2];
      (top.get(Number(m[1])) ?? top.set(Number(m[1]), []).get(Number(m[1])) as Array<string | Raw>).push(value);
    }
  }
  return root;
}

export const at = (r: Raw, ...path: number[]): string | Raw | undefined => {
  let cur: string | Raw | undefined = r;
  for (const n of path) cur = cur instanceof Map ? cur.get(n)?.[0] : undefined;
  return cur;
};

/**
 * Encodes a text-format message with protoc (an encoder independent of the server's) against
 * `proto`, a .proto file's text.
 */
export function protocEncode(proto: string, message: string, text: string): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'orch-proto-'));
  writeFileSync(join(dir, 'wire.proto'), proto);
  const out = spawnSync('protoc', [`--proto_path=${dir}`, `--encode=${message}`, 'wire.proto'], { input: text });
  assert.equal(out.status, 0, String(out.stderr));
  return out.stdout;
}

/** Bytes as a protobuf text-format string literal. */
export function textBytes(bytes: Buffer): string {
  return `"${[...bytes].map((b) => `\\${b.toString(8).padStart(3, '0')}`).join('')}"`;
}

/** The events of a protobuf watch body: 4-byte big-endian lengths, each a WatchEvent {type = 1, object = 2 {raw = 1}}. */
export function protobufWatchEvents(body: Buffer): Array<{ type: string; object: Buffer }> {
  const events: Array<{ type: string; object: Buffer }> = [];
  let at = 0;
  while (at + 4 <= body.length) {
    const length = body.readUInt32BE(at);
    if (at + 4 + length > body.length) break;
    const event = readWatchEvent(body.subarray(at + 4, at + 4 + length));
    events.push(event);
    at += 4 + length;
  }
  return events;
}

/** A WatchEvent's type and embedded object bytes, read by hand: --decode_raw cannot return the nested bytes. */
function readWatchEvent(event: Buffer): { type: string; object: Buffer } {
  let pos = 0;
  const varint = (): number => {
    let v = 0;
    let shift = 0;
    for (;;) {
      const b = event[pos++];
      v += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return v;
      shift += 7;
    }
  };
  let type = '';
  let object: Buffer = Buffer.alloc(0);
  while (pos < event.length) {
    const key = varint();
    const length = varint();
    const value = event.subarray(pos, pos + length);
    pos += length;
    if (key === 0x0a) type = value.toString('utf8');
    else if (key === 0x12) {
      // RawExtension {raw = 1}
      let p = 1;
      let len = 0;
      let shift = 0;
      for (;;) { const b = value[p++]; len += (b & 0x7f) * 2 ** shift; if (b < 0x80) break; shift += 7; }
      object = value.subarray(p, p + len);
    }
  }
  return { type, object };
}
