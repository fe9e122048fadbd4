/** How clients reach the server: the host for URLs, given the address it binds. */
import { isIPv6 } from 'node:net';
import type { ServerConfig } from '../config/server-config.js';

export function hostForUrl(bind: string): string {
  if (bind === '0.0.0.0' || bind === '::' || bind === '') return '127.0.0.1';
  return isIPv6(bind) ? `[${bind}]` : bind;
}

/** host:port discovery advertises (the advertised address, else the bound one) */
export function advertisedAddress(config: ServerConfig, port: number): string {
  return `${config.advertiseAddress ?? hostForUrl(config.bindAddress)}:${port}`;
}
