/** An error answered on a connection that asked for a WebSocket upgrade: a plain HTTP/1.1 response, then close. */
import { STATUS_CODES } from 'node:http';
import type { StatusError } from '../status/status-error.js';
import type { Upgrade } from './request-context.js';

export function answerUpgrade(upgrade: Upgrade, err: StatusError): void {
  if (upgrade.socket.destroyed || !upgrade.socket.writable) return;
  const body = `${JSON.stringify(err.toStatus())}\n`;
  const extra = [...upgrade.headers, ...Object.entries(err.headers ?? {})].map(([k, v]) => `${k}: ${v}\r\n`).join('');
  upgrade.socket.end(
    `HTTP/1.1 ${err.code} ${STATUS_CODES[err.code] ?? ''}\r\nContent-Type: application/json\r\n${extra}` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
