/**
 * Response streams held open by a test over HTTP/1.1, HTTP/2 or a WebSocket, either read as they
 * arrive or stalled (never read, so the server's writes back up) until the test resumes them. A
 * watch's JSON lines are parsed into events; every stream also keeps its raw bytes.
 */
import { request as httpsRequest } from 'node:https';
import type { ClientHttp2Session } from 'node:http2';
import WebSocket from 'ws';
import type { Credentials, TestServer } from './server.js';

export interface WatchEvent { type: string; name: string; resourceVersion: number }

export interface Ending {
  /** HTTP/1.1: the response arrived whole (false: the connection was cut mid-response) */
  complete?: boolean;
  /** HTTP/2: the RST_STREAM code the stream closed with (0: a normal close) */
  rstCode?: number;
  /** WebSocket: the close code (1006: the connection was dropped without a close frame) */
  code?: number;
}

export interface HeldStream {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  events: WatchEvent[];
  /** bytes received so far */
  bytes: Buffer[];
  /** set once the stream has closed */
  ending: Ending | undefined;
  closed: Promise<Ending>;
  /** starts reading a stalled stream */
  resume(): void;
  /** drops the connection (HTTP/1.1, WebSocket) or the stream (HTTP/2) from the client's side */
  destroy(): void;
}

function eventOf(line: string): WatchEvent {
  const e = JSON.parse(line) as { type: string; object: { metadata: { name?: string; resourceVersion: string } } };
  return { type: e.type, name: e.object.metadata.name ?? '', resourceVersion: Number(e.object.metadata.resourceVersion) };
}

/** Collects raw bytes and, from complete JSON lines, watch events. */
function collector(held: Pick<HeldStream, 'events' | 'bytes'>, parse: boolean): (chunk: Buffer) => void {
  let tail = '';
  return (chunk) => {
    held.bytes.push(chunk);
    if (!parse) return;
    const lines = (tail + chunk.toString('utf8')).split('\n');
    tail = lines.pop() ?? '';
    for (const line of lines) if (line) held.events.push(eventOf(line));
  };
}

interface Options {
  stalled: boolean;
  credentials?: Credentials;
  parseEvents?: boolean;
  /** HTTP/1.1: a slow reader, pausing this long after each chunk it reads */
  pauseMs?: number;
}

/** A GET over HTTP/1.1 on a connection of its own. */
export function h1Stream(server: TestServer, path: string, o: Options): Promise<HeldStream> {
  const creds = o.credentials ?? server.admin;
  return new Promise((resolve, reject) => {
    let responded = false;
    const req = httpsRequest(`${server.url}${path}`, { ca: creds.ca, cert: creds.cert, key: creds.key, agent: false }, (res) => {
      responded = true;
      let onEnding: (e: Ending) => void = () => {};
      const held: HeldStream = {
        status: res.statusCode ?? 0, headers: res.headers, events: [], bytes: [], ending: undefined,
        closed: new Promise((r) => { onEnding = r; }),
        resume: () => { res.on('data', collect); res.resume(); },
        destroy: () => req.destroy(),
      };
      const parse = collector(held, o.parseEvents ?? true);
      const pauseMs = o.pauseMs;
      const collect = pauseMs === undefined ? parse : (chunk: Buffer) => {
        parse(chunk);
        res.pause();
        setTimeout(() => res.resume(), pauseMs);
      };
      res.once('close', () => { held.ending = { complete: res.complete }; onEnding(held.ending); });
      // a stalled response is never read: the client's socket stops reading once its buffer is full
      if (o.stalled) res.pause(); else held.resume();
      resolve(held);
    });
    req.on('error', (err) => { if (!responded) reject(err); }); // after the response began, a cut shows on the response
    req.end();
  });
}

/** A GET as one stream of an HTTP/2 session the test holds (other streams may share it). */
export function h2Stream(session: ClientHttp2Session, path: string, o: Omit<Options, 'credentials'>): Promise<HeldStream> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': path });
    stream.on('error', () => { /* a reset shows as the close's rstCode */ });
    stream.once('response', (headers) => {
      let onEnding: (e: Ending) => void = () => {};
      const held: HeldStream = {
        status: Number(headers[':status']), headers, events: [], bytes: [], ending: undefined,
        closed: new Promise((r) => { onEnding = r; }),
        resume: () => { stream.on('data', collect); stream.resume(); },
        destroy: () => stream.destroy(),
      };
      const collect = collector(held, o.parseEvents ?? true);
      stream.once('close', () => { held.ending = { rstCode: stream.rstCode }; onEnding(held.ending); });
      // a paused stream consumes nothing, so its flow-control window is never opened again
      if (o.stalled) stream.pause(); else held.resume();
      resolve(held);
    });
    stream.once('close', () => reject(new Error(`stream closed before its response (rstCode ${stream.rstCode})`)));
    stream.end();
  });
}

/** A watch over a WebSocket, one event per message. */
export function webSocketStream(server: TestServer, path: string, o: Omit<Options, 'parseEvents'>): Promise<HeldStream> {
  const creds = o.credentials ?? server.admin;
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${server.url.replace(/^https/, 'wss')}${path}`, { ca: creds.ca, cert: creds.cert, key: creds.key });
    ws.on('error', (err) => { if (ws.readyState === WebSocket.CONNECTING) reject(err); });
    ws.once('open', () => {
      let onEnding: (e: Ending) => void = () => {};
      const held: HeldStream = {
        status: 101, headers: {}, events: [], bytes: [], ending: undefined,
        closed: new Promise((r) => { onEnding = r; }),
        resume: () => ws.resume(),
        destroy: () => ws.terminate(),
      };
      ws.on('message', (data: Buffer) => { held.bytes.push(data); held.events.push(eventOf(data.toString('utf8'))); });
      ws.once('close', (code) => { held.ending = { code }; onEnding(held.ending); });
      if (o.stalled) ws.pause();
      resolve(held);
    });
  });
}
