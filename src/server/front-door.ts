/**
 * The front door: one HTTPS server for HTTP/1.1 and HTTP/2 (ALPN) and WebSocket upgrades. It
 * turns every request into a RequestContext and hands it to the request pipeline; it owns the
 * connections, so that shutdown can drain and close them.
 */
import { createSecureServer, type Http2SecureServer, type Http2ServerRequest, type ServerHttp2Session } from 'node:http2';
import type { IncomingMessage } from 'node:http';
import { Server as NetServer } from 'node:net';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { Exchange, type ExchangeOptions, type Request, type Response } from '../http/exchange.js';
import { parseRequestTarget } from '../http/request-target.js';
import type { Handler } from './filter.js';
import { lingerBeforeClose } from './linger.js';
import { RequestContext } from './request-context.js';

export interface FrontDoorOptions {
  tls: { key: string; cert: string; ca: string };
  /** what each exchange may speak: encodings offered and response compression, by the feature gates */
  exchange: ExchangeOptions;
}

function tlsSocketOf(req: Request): TLSSocket | undefined {
  const h2 = req as Http2ServerRequest;
  if (h2.stream) return h2.stream.session?.socket as TLSSocket | undefined;
  return (req as IncomingMessage).socket as TLSSocket;
}


export class FrontDoor {
  readonly server: Http2SecureServer;
  /** requests being served; shutdown waits for them */
  private active = 0;
  private drained: (() => void) | undefined;
  private readonly sessions = new Set<ServerHttp2Session>();
  private readonly sockets = new Set<TLSSocket>();

  constructor(private readonly options: FrontDoorOptions, private readonly pipeline: Handler) {
    this.server = createSecureServer({
      key: options.tls.key,
      cert: options.tls.cert,
      ca: options.tls.ca,
      requestCert: true,
      rejectUnauthorized: false, // an unverified certificate is a 401 decided per request, not a TLS failure
      allowHTTP1: true,
      // TCP_NODELAY, as Go sets on every connection: with Nagle's algorithm the last piece of a
      // response written in several (a list page, a chunked body) waited for the client's delayed
      // ACK, ~40 ms (docs/decisions.md). Node's https server sets it; its HTTP/2 server does not
      noDelay: true,
      settings: { maxConcurrentStreams: 1000 },
      // a session's watch streams may hold up to the connection's unsent-byte budget (16 MiB by
      // default); past Node's default of 10 MB the session would refuse new streams (client-go
      // sends every request of a process over one session)
      maxSessionMemory: 32,
    });
    this.server.on('request', (req: Request, res: Response) => {
      const { pathname: path, searchParams: query } = parseRequestTarget(req.url);
      const ex = new Exchange(req, res, path, query, Date.now(), this.options.exchange);
      this.serve(new RequestContext(req, path, query, tlsSocketOf(req), ex, undefined, ex.now));
    });
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const { pathname: path, searchParams: query } = parseRequestTarget(req.url);
      socket.on('error', () => socket.destroy());
      this.serve(new RequestContext(req, path, query, socket as TLSSocket, undefined, { req, socket, head, headers: new Map() }, Date.now()));
    });
    // HTTP/1.1 keep-alive sockets and HTTP/2 sessions must not pin the process on shutdown
    this.server.on('secureConnection', (socket: TLSSocket) => {
      lingerBeforeClose(socket);
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    this.server.on('session', (session) => {
      this.sessions.add(session);
      session.on('close', () => this.sessions.delete(session));
      session.on('error', () => session.destroy());
    });
  }

  private serve(ctx: RequestContext): void {
    this.active++;
    // the pipeline's first filters answer every failure (the recover filter): a rejection here only ends the count
    this.pipeline(ctx).then(this.settled, this.settled);
  }

  /** One function for every request's end, bound once (a closure or two per request otherwise). */
  private readonly settled = (): void => {
    this.active--;
    if (this.active === 0) this.drained?.();
  };

  listen(port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        const address = this.server.address();
        resolve(typeof address === 'object' && address ? address.port : port);
      });
    });
  }

  /** Stops accepting connections and waits (up to `graceMs`) for in-flight requests to finish. */
  async close(graceMs: number): Promise<void> {
    // stop listening only: Http2SecureServer.close (allowHTTP1) also destroys every HTTP/1.1
    // connection whose response has ended, even one still writing it, so a watch ended a moment
    // ago by shutdown lost its terminating chunk; those connections are ended gracefully below
    const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(this.server, () => resolve()));
    if (this.active > 0) {
      await Promise.race([new Promise<void>((r) => { this.drained = r; }), new Promise((r) => setTimeout(r, graceMs).unref())]);
    }
    // HTTP/2 sessions close once their streams have sent what they hold (watches' last bookmarks);
    // whatever is still open after that, idle keep-alive connections included, is cut
    await Promise.race([
      Promise.all([...this.sessions].map((session) => new Promise<void>((resolve) => session.close(() => resolve())))),
      new Promise((r) => setTimeout(r, 2000).unref()),
    ]);
    // ended before destroyed: what a socket still holds (a watch's last bookmark and terminating
    // chunk, written moments ago) goes out first; one whose client does not take it is cut
    await Promise.race([
      Promise.all([...this.sockets].map((socket) => new Promise<void>((resolve) => { socket.once('close', () => resolve()); socket.end(); }))),
      new Promise((r) => setTimeout(r, 1000).unref()),
    ]);
    for (const socket of this.sockets) socket.destroy();
    await Promise.race([closed, new Promise((r) => setTimeout(r, 1000).unref())]);
  }
}
