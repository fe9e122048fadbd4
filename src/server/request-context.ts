/**
 * What travels with one request through the pipeline: the transport (an HTTP exchange, or a
 * WebSocket upgrade that has no response object yet), what the path means, who is asking, the
 * audit record, and the deadline. Filters fill it in order; the handler and admission read it.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import type { UserInfo } from '../auth/user.js';
import type { Exchange, Request } from '../http/exchange.js';
import type { RequestInfo } from '../http/request-info.js';
import type { AuditContext } from '../audit/audit-context.js';

export interface Upgrade {
  req: IncomingMessage;
  socket: Duplex;
  head: Buffer;
  /** headers for the 101 (or error) answer, set by filters before the upgrade completes */
  headers: Map<string, string>;
}

export class RequestContext {
  /** set by the request-info filter */
  info!: RequestInfo;
  /** set by the authentication filter, replaced by impersonation */
  user: UserInfo | undefined;
  /** the authenticated user when the request impersonates another */
  impersonator: UserInfo | undefined;
  /** set by the audit filter */
  audit: AuditContext | undefined;

  constructor(
    readonly req: Request,
    readonly path: string,
    readonly query: URLSearchParams,
    readonly socket: TLSSocket | undefined,
    /** the HTTP response writer; undefined for a WebSocket upgrade */
    readonly exchange: Exchange | undefined,
    readonly upgrade: Upgrade | undefined,
    /** wall-clock milliseconds the request arrived */
    readonly receivedAt: number,
  ) {}

  /**
   * Calls `fn` once the response has been handed to the socket or the client left (HTTP/2: once
   * the stream's data reached the session's socket; the exchange knows how to tell). An upgrade
   * has no response to wait for.
   */
  whenHandedOff(fn: () => void): void {
    if (this.exchange) this.exchange.whenHandedOff(fn);
    else fn();
  }

  /** A response header every answer carries (Audit-Id, the flow-control UIDs). */
  setResponseHeader(name: string, value: string): void {
    if (this.exchange) this.exchange.setHeader(name, value);
    else this.upgrade?.headers.set(name, value);
  }
}
