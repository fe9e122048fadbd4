// k6/ws (https://grafana.com/docs/k6/latest/javascript-api/k6-ws/): connect(url, params, callback)
// with a Socket whose documented events and methods are checked; the stub delivers one ADDED event
// per ServiceAccount in the fake server's namespace, then runs the socket's timers and closes.
import { state } from './state.mjs';

const events = new Set(['open', 'message', 'binaryMessage', 'ping', 'pong', 'close', 'error']);
const paramKeys = new Set(['headers', 'tags', 'jar', 'compression']);

export function connect(url, params, callback) {
  if (typeof params === 'function') { callback = params; params = undefined; }
  if (!/^wss?:\/\//.test(url)) throw new Error(`k6/ws connect: not a ws:// or wss:// URL: ${url}`);
  for (const k of Object.keys(params || {})) if (!paramKeys.has(k)) throw new Error(`unknown k6/ws Params field '${k}'`);
  const handlers = new Map();
  const timers = [];
  let closed = false;
  const socket = {
    on(event, fn) {
      if (!events.has(event)) throw new Error(`k6/ws Socket.on: unknown event '${event}'`);
      if (typeof fn !== 'function') throw new TypeError('Socket.on(event, callback)');
      handlers.set(event, fn);
    },
    send(data) { if (typeof data !== 'string') throw new TypeError('Socket.send(string)'); },
    sendBinary() {},
    ping() {},
    close() { closed = true; },
    setTimeout(fn, ms) { if (typeof ms !== 'number') throw new TypeError('Socket.setTimeout(callback, period)'); timers.push(fn); },
    setInterval(fn, ms) { if (typeof ms !== 'number') throw new TypeError('Socket.setInterval(callback, interval)'); },
  };
  callback(socket);
  state.wsSessions++;
  handlers.get('open')?.();
  const m = /\/api\/v1\/namespaces\/([^/]+)\/serviceaccounts\?/.exec(url);
  const store = m ? state.objects.get(m[1]) : undefined;
  for (const obj of store ? store.values() : []) {
    if (closed) break;
    handlers.get('message')?.(JSON.stringify({ type: 'ADDED', object: obj }));
  }
  for (const t of timers) if (!closed) t();
  handlers.get('close')?.();
  return { status: 101, url, headers: {}, body: '', error: '' };
}

export default { connect };
