/**
 * Clients for flow-control tests. A HeldSession is an HTTP/2 connection whose receive window is
 * zero: the server can send response headers but never a body byte, so every request it admits
 * keeps its seat (seats are held until the response is handed to the socket) until the session
 * closes. That makes "all seats are taken" a state a test can set up, not a race.
 */
import { connect, constants, type ClientHttp2Session } from 'node:http2';
import type { Credentials, TestServer } from './server.js';

export interface HeldAnswer { status: number; headers: Record<string, string | string[] | undefined> }

export interface HeldRequest { answered: Promise<HeldAnswer>; close(): void }

export class HeldSession {
  private readonly session: ClientHttp2Session;

  constructor(server: TestServer, credentials: Credentials) {
    this.session = connect(server.url, {
      ca: credentials.ca, cert: credentials.cert, key: credentials.key,
      settings: { initialWindowSize: 0 },
    });
    this.session.on('error', () => {});
  }

  /** Resolves with the response headers once the server answers (a queued request answers later; status 0: never). */
  get(path: string): Promise<HeldAnswer> { return this.open(path).answered; }

  /** A request whose stream the test can close on its own, giving its seat back. */
  open(path: string): HeldRequest {
    const stream = this.session.request({ ':method': 'GET', ':path': path });
    // a stream that closes before any answer (the session ended) answers status 0
    const answered = new Promise<HeldAnswer>((resolve) => {
      stream.on('response', (h) => resolve({ status: Number(h[':status']), headers: h as HeldAnswer['headers'] }));
      stream.on('error', () => resolve({ status: 0, headers: {} }));
      stream.on('close', () => resolve({ status: 0, headers: {} }));
    });
    stream.end();
    // CANCEL: a stream closed with NO_ERROR after its end sends no RST_STREAM the server would see
    return { answered, close: () => stream.close(constants.NGHTTP2_CANCEL) };
  }

  close(): void { this.session.destroy(); }
}
