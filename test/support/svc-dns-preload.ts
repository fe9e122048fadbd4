/**
 * A preload (`node --import`) for servers under test that call webhooks by service reference:
 * dns.lookup answers 127.0.0.1 for names ending in `.svc`, as cluster DNS would answer with the
 * service's address, so a webhook listening on loopback is reached by `<name>.<namespace>.svc`.
 * Names in the namespace `unresolvable` (`<name>.unresolvable.svc`) answer ENOTFOUND, as cluster
 * DNS answers for a service that does not exist. Test support only: never loaded by the server.
 */
import dns, { type LookupAddress, type LookupOptions } from 'node:dns';

type Callback = (err: NodeJS.ErrnoException | null, address?: string | LookupAddress[], family?: number) => void;

const systemLookup = dns.lookup;

function svcLookup(hostname: string, options: unknown, callback?: unknown): void {
  const cb = (typeof options === 'function' ? options : callback) as Callback;
  const opts: LookupOptions = typeof options === 'object' && options !== null ? options as LookupOptions : typeof options === 'number' ? { family: options } : {};
  if (!hostname.endsWith('.svc')) {
    (systemLookup as (h: string, o: LookupOptions, c: Callback) => void)(hostname, opts, cb);
    return;
  }
  process.nextTick(() => {
    if (hostname.endsWith('.unresolvable.svc')) {
      const err: NodeJS.ErrnoException = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', errno: -3008, syscall: 'getaddrinfo', hostname });
      cb(err);
    } else if (opts.all) cb(null, [{ address: '127.0.0.1', family: 4 }]);
    else cb(null, '127.0.0.1', 4);
  });
}

(dns as { lookup: unknown }).lookup = svcLookup;
