/**
 * What the flow-control filter asks: may this request run now? A granted seat is held until the
 * response has been handed to the socket, so a client that does not read cannot make the server
 * buffer more responses than it has seats.
 */
import type { RequestInfo } from '../http/request-info.js';
import type { UserInfo } from '../auth/user.js';
import type { StatusError } from '../status/status-error.js';

export interface Seat { release(): void }

export interface FlowController {
  /** a seat, or the 429 to answer */
  admit(request: { info: RequestInfo; user: UserInfo }): Seat | StatusError | Promise<Seat | StatusError>;
}
