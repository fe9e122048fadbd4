/**
 * Go's closeWriteAndWait for HTTP/1.1 connections that close after a response. Node's server ends
 * such a connection with `destroySoon()`, destroying the socket once its FIN is out; a client
 * still sending its body (one answered 413 on its Content-Length, before the body is in) then gets
 * a reset, which can discard the answer before the client has read it. Here the socket
 * half-closes and keeps reading (what arrives is parsed and dropped) until the client closes too,
 * or for `lingerMs` at most, as Go's server waits 500 ms (rstAvoidanceDelay) before it closes.
 */
import type { Socket } from 'node:net';

export const lingerMs = 500;

function destroySoonAfterLinger(this: Socket): void {
  if (this.destroyed) return;
  const timer = setTimeout(() => this.destroy(), lingerMs);
  this.once('close', () => clearTimeout(timer));
  // the client's FIN, once our own is out, closes the socket (allowHalfOpen is off)
  if (this.writable) this.end();
}

/** Makes `socket` linger when its server closes it after a response. */
export function lingerBeforeClose(socket: Socket): void {
  socket.destroySoon = destroySoonAfterLinger;
}
