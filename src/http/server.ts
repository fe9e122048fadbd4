/**
 * The front door: one HTTPS server for HTTP/1.1 and HTTP/2 (ALPN). Every request is
 * authenticated, authorized, limited (in-flight, timeout) and logged, then routed to the
 * non-resource or the resource handler. Failures become Status objects.
 */
import { createSecureServer, type Http2SecureServer, type Http2ServerRequest, type ServerHttp2Session } from 'node:http2';
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import type { Authenticator } from '../auth/authenticator.js';
import type { Authorizer } from '../auth/authorizer.js';
import { privilegedGroup } from '../auth/user.js';
import type { KindRegistry } from '../api/registry.js';
import { parseDuration } from '../config/duration.js';
import { errors, StatusError } from '../status/status-error.js';
import { Exchange, header, type ExchangeOptions, type Request, type Response } from './exchange.js';
import type { NonResourceHandler } from './non-resource.js';
import { requestInfo } from './request-info.js';
import type { ResourceHandler } from './resource-handler.js';

export interface FrontDoorOptions {
  tls: { key: string; cert: string; ca: string };
  /** what each exchange may speak: encodings offered and response compression, by the feature gates */
  exchange: ExchangeOptions;
  requestTimeoutMs: number;
  maxRequestsInflight: number;
  maxMutatingRequestsInflight: number;
}

export interface FrontDoorDeps {
  kinds: KindRegistry;
  authenticator: Authenticator;
  authorizer: Authorizer;
  resources: ResourceHandler;
  nonResource: NonResourceHandler;
  log: Logger;
}

const mutatingVerbs = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

function tlsSocketOf(req: Request): TLSSocket | undefined {
  const h2 = req as Http2ServerRequest;
  if (h2.stream) return h2.stream.session?.socket as TLSSocket | undefined;
  return (req as IncomingMessage).socket as TLSSocket;
}

export class FrontDoor {
  readonly server: Http2SecureServer;
  private inflight = 0;
  private mutatingInflight = 0;
  /** requests being served; shutdown waits for them */
  private active = 0;
  private drained: (() => void) | undefined;
  private readonly sessions = new Set<ServerHttp2Session>();
  private readonly sockets = new Set<TLSSocket>();
  private readonly webSockets = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });

  constructor(private readonly options: FrontDoorOptions, private readonly deps: FrontDoorDeps) {
    this.server = createSecureServer({
      key: options.tls.key,
      cert: options.tls.cert,
      ca: options.tls.ca,
      requestCert: true,
      rejectUnauthorized: false, // an unverified certificate is a 401 decided per request, not a TLS failure
      allowHTTP1: true,
      settings: { maxConcurrentStreams: 1000 },
    });
    this.server.on('request', (req: Request, res: Response) => { void this.handle(req, res); });
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(req, socket, head));
    // HTTP/1.1 keep-alive sockets and HTTP/2 sessions must not pin the process on shutdown
    this.server.on('secureConnection', (socket: TLSSocket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    this.server.on('session', (session) => {
      this.sessions.add(session);
      session.on('close', () => this.sessions.delete(session));
      session.on('error', () => session.destroy());
    });
  }

  private async handle(req: Request, res: Response): Promise<void> {
    const started = process.hrtime.bigint();
    this.active++;
    const url = new URL(req.url ?? '/', 'https://orch.invalid');
    const ex = new Exchange(req, res, url.pathname, url.searchParams, Date.now(), this.options.exchange);
    let verb = (req.method ?? 'GET').toLowerCase();
    let release: (() => void) | undefined;
    try {
      const user = this.deps.authenticator.authenticate({ socket: tlsSocketOf(req), authorization: header(req, 'authorization') });
      if (user instanceof StatusError) throw user;
      ex.user = user;
      const info = requestInfo(req.method ?? 'GET', url.pathname, url.searchParams);
      verb = info.verb;
      const denied = this.deps.authorizer.authorize({ user, ...info });
      if (denied) throw denied;
      if (!info.isResourceRequest) {
        if (!this.deps.nonResource.serve(ex)) throw errors.pathNotFound();
        return;
      }
      const group = info.apiPrefix === 'api' ? '' : info.apiGroup;
      if (info.apiPrefix === 'api' && info.apiGroup) throw errors.pathNotFound();
      const kind = this.deps.kinds.lookup(group, info.apiVersion, info.resource);
      if (!kind) throw errors.pathNotFound();
      ex.kind = kind;
      void ex.negotiated; // an unacceptable Accept fails before any work is done
      if (info.verb === 'watch') {
        await this.deps.resources.serve(ex, info, kind);
        return;
      }
      release = this.admit(info.verb, user.groups.includes(privilegedGroup));
      await this.withTimeout(ex, this.deps.resources.serve(ex, info, kind));
    } catch (err) {
      if (!(err instanceof StatusError)) this.deps.log.error({ err, path: url.pathname }, 'request failed');
      if (!ex.sent) ex.sendError(err);
      else if (!res.writableEnded) res.end();
    } finally {
      // the seat is held until the body is on the socket (or the stream is gone), not until the handler returns
      if (release) void ex.handedOff().then(release);
      const latencyMs = Number(process.hrtime.bigint() - started) / 1e6;
      this.deps.log.info({
        verb, uri: req.url, status: res.statusCode, latencyMs: Math.round(latencyMs * 1000) / 1000,
        user: ex.user?.name, userAgent: header(req, 'user-agent'), protocol: req.httpVersion,
      }, 'request');
      this.active--;
      if (this.active === 0) this.drained?.();
    }
  }

  /** An HTTP/1.1 WebSocket upgrade: a watch served one event per message, authenticated and authorized like any request. */
  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'https://orch.invalid');
    let user: string | undefined;
    try {
      const who = this.deps.authenticator.authenticate({ socket: socket as TLSSocket, authorization: header(req, 'authorization') });
      if (who instanceof StatusError) throw who;
      user = who.name;
      const info = requestInfo('GET', url.pathname, url.searchParams);
      const denied = this.deps.authorizer.authorize({ user: who, ...info });
      if (denied) throw denied;
      const kind = info.isResourceRequest ? this.deps.kinds.lookup(info.apiPrefix === 'api' ? '' : info.apiGroup, info.apiVersion, info.resource) : undefined;
      if (!kind) throw errors.pathNotFound();
      const run = this.deps.resources.planWebSocketWatch(url.searchParams, info, kind);
      this.webSockets.handleUpgrade(req, socket, head, (ws) => {
        this.deps.log.info({ verb: 'watch', uri: req.url, status: 101, user, protocol: 'websocket' }, 'request');
        run(ws).catch((err: unknown) => { this.deps.log.error({ err }, 'websocket watch failed'); ws.terminate(); });
      });
    } catch (err) {
      const e = err instanceof StatusError ? err : errors.internal(err);
      const body = `${JSON.stringify(e.toStatus())}\n`;
      this.deps.log.info({ verb: 'watch', uri: req.url, status: e.code, user, protocol: 'websocket' }, 'request');
      socket.end(`HTTP/1.1 ${e.code} ${STATUS_CODES[e.code] ?? ''}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    }
  }

  /** --max-requests-inflight / --max-mutating-requests-inflight (0: no limit); system:masters is exempt, as in kube-apiserver. */
  private admit(verb: string, privileged: boolean): () => void {
    if (privileged) return () => {};
    if (mutatingVerbs.has(verb)) {
      const limit = this.options.maxMutatingRequestsInflight;
      if (limit > 0 && this.mutatingInflight >= limit) throw errors.tooManyRequests('Too many requests, please try again later.', 1);
      this.mutatingInflight++;
      return () => { this.mutatingInflight--; };
    }
    if (this.options.maxRequestsInflight > 0 && this.inflight >= this.options.maxRequestsInflight) throw errors.tooManyRequests('Too many requests, please try again later.', 1);
    this.inflight++;
    return () => { this.inflight--; };
  }

  /** --request-timeout, shortened by a `timeout` query parameter: 504 when the work takes longer. */
  private async withTimeout(ex: Exchange, work: Promise<void>): Promise<void> {
    let timeoutMs = this.options.requestTimeoutMs;
    const requested = ex.query.get('timeout');
    if (requested) {
      try { timeoutMs = Math.min(timeoutMs, parseDuration(requested)); } catch (err) {
        throw errors.badRequest(`invalid timeout specified in the request URL: ${(err as Error).message}`);
      }
    }
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(errors.timeout('Timeout: request did not complete within requested timeout - context deadline exceeded')), timeoutMs);
    });
    try {
      await Promise.race([work, expired]);
    } finally {
      clearTimeout(timer);
    }
  }

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
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    if (this.active > 0) {
      await Promise.race([new Promise<void>((r) => { this.drained = r; }), new Promise((r) => setTimeout(r, graceMs).unref())]);
    }
    // HTTP/2 sessions close once their streams have sent what they hold (watches' last bookmarks);
    // whatever is still open after that, idle keep-alive connections included, is cut
    await Promise.race([
      Promise.all([...this.sessions].map((session) => new Promise<void>((resolve) => session.close(() => resolve())))),
      new Promise((r) => setTimeout(r, 2000).unref()),
    ]);
    for (const socket of this.sockets) socket.destroy();
    await Promise.race([closed, new Promise((r) => setTimeout(r, 1000).unref())]);
  }
}
