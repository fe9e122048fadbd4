/**
 * A load process for bench/slow-clients: opens `watches` watch streams and `lists` list requests,
 * each on a TLS connection of its own, and reads none of them, so the server's writes back up.
 * Watches start, as an informer's do, from the revision of a list taken just before (one per
 * batch of 50).
 * Told `read`, it reads them all (counting bytes, never parsing); told `report`, it says how each
 * ended so far: complete, cut by the server (closed mid-response), or still open; told `drop`, it
 * closes every connection and exits.
 */
import type { ClientRequest, IncomingMessage } from 'node:http';
import { request } from 'node:https';

interface Start { url: string; watchCollection: string; watches: number; listPath: string; lists: number; ca: string; cert: string; key: string }

interface Held { kind: 'watch' | 'list'; req: ClientRequest; res: IncomingMessage; bytes: number; ending?: 'complete' | 'cut' }

const start = await new Promise<Start>((resolve) => process.once('message', (m) => resolve(m as Start)));
const held: Held[] = [];

function open(kind: Held['kind'], path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(`${start.url}${path}`, { ca: start.ca, cert: start.cert, key: start.key, agent: false }, (res) => {
      if (res.statusCode !== 200) { reject(new Error(`${kind} answered ${res.statusCode}`)); return; }
      res.pause(); // never read: the socket stops reading once its buffer is full
      const h: Held = { kind, req, res, bytes: 0 };
      res.once('close', () => { h.ending = res.complete ? 'complete' : 'cut'; });
      held.push(h);
      resolve();
    });
    req.on('error', (err) => { if (!held.some((h) => h.req === req)) reject(err); });
    req.end();
  });
}

/** The collection's current revision, from a list of one item. */
function revision(collection: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(`${start.url}${collection}?limit=1`, { ca: start.ca, cert: start.cert, key: start.key, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve((JSON.parse(text) as { metadata: { resourceVersion: string } }).metadata.resourceVersion));
    });
    req.on('error', reject);
    req.end();
  });
}

async function openAll(kind: Held['kind'], path: () => Promise<string>, count: number): Promise<void> {
  for (let i = 0; i < count; i += 50) {
    const p = await path();
    await Promise.all(Array.from({ length: Math.min(50, count - i) }, () => open(kind, p)));
  }
}

await openAll('watch', async () => `${start.watchCollection}?watch=1&resourceVersion=${await revision(start.watchCollection)}`, start.watches);
await openAll('list', async () => start.listPath, start.lists);
process.send?.({ t: 'ready', watches: start.watches, lists: start.lists });

function report() {
  const of = (kind: Held['kind']) => {
    const hs = held.filter((h) => h.kind === kind);
    return {
      complete: hs.filter((h) => h.ending === 'complete').length,
      cut: hs.filter((h) => h.ending === 'cut').length,
      open: hs.filter((h) => h.ending === undefined).length,
      bytes: hs.reduce((a, h) => a + h.bytes, 0),
    };
  };
  return { t: 'report', watches: of('watch'), lists: of('list') };
}

process.on('message', (m: { t: string }) => {
  if (m.t === 'read') {
    for (const h of held) {
      h.res.on('data', (chunk: Buffer) => { h.bytes += chunk.length; });
      h.res.resume();
    }
  } else if (m.t === 'report') {
    process.send?.(report());
  } else if (m.t === 'drop') {
    for (const h of held) h.req.destroy();
    process.send?.(report(), () => process.exit(0));
  }
});
