/**
 * What the flow-control filter asks: may this request run now? A granted seat is held until the
 * response has been handed to the socket, so a client that does not read cannot make the server
 * buffer more responses than it has seats.
 */
import type { RequestInfo } from '../http/request-info.js';
import type { UserInfo } from '../auth/user.js';
import type { StatusError } from '../status/status-error.js';

/** A granted seat; `release` is a function value (handed to the hand-off callbacks as it is) and safe to call twice. */
export interface Seat { readonly release: () => void }

export interface FlowRequest {
  info: RequestInfo;
  user: UserInfo;
  /** the query (limit, resourceVersion, sendInitialEvents): what a list or watch will read */
  query?: URLSearchParams;
  /** response headers naming the classification (X-Kubernetes-PF-*), set on every answer */
  setResponseHeader?(name: string, value: string): void;
  /** calls `fn` once the response is handed off, or the client left: a request still waiting then is dropped */
  whenHandedOff?(fn: () => void): void;
}

export interface FlowController {
  /** a seat, or the 429 to answer */
  admit(request: FlowRequest): Seat | StatusError | Promise<Seat | StatusError>;
}
