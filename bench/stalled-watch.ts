/**
 * bench/stalled-watch: how long the reading watchers lag behind the writes while one watcher of
 * the same resource stops reading, and how the server ends that one. (test/e2e/watch.test.ts
 * asserts the behaviour; the timings are measured here, not asserted.)
 * Usage: node dist/bench/stalled-watch.js [--readers 19] [--events 120] [--kib 200]
 */
import { request } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { agentFor, call, flag, pool, startServer, type TestServer } from './support.js';

const readers = flag('readers', 19);
const events = flag('events', 120);
const kib = flag('kib', 200);

interface Stream { res: IncomingMessage; lines: number; ended: boolean; lastAt: number }

/** A watch whose events are counted by newlines; `paused`: it reads nothing until resumed. */
function watch(server: TestServer, path: string, paused: boolean): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, { ca: server.admin.ca, cert: server.admin.cert, key: server.admin.key, agent: false }, (res) => {
      if (res.statusCode !== 200) { reject(new Error(`watch answered ${res.statusCode}`)); return; }
      const s: Stream = { res, lines: 0, ended: false, lastAt: 0 };
      res.on('data', (chunk: Buffer) => {
        for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, nl + 1)) s.lines++;
        s.lastAt = performance.now();
      });
      res.on('end', () => { s.ended = true; });
      res.on('error', () => { s.ended = true; });
      if (paused) res.pause();
      resolve(s);
    });
    req.on('error', reject);
    req.end();
  });
}

const server = await startServer({ args: ['--log-level', 'warn'] });
const agent = agentFor(server, 6);
try {
  await call(server, agent, 'POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: 'stall' } }));
  const path = '/api/v1/namespaces/stall/secrets?watch=true&resourceVersion=0';
  const reading = await Promise.all(Array.from({ length: readers }, () => watch(server, path, false)));
  const stalled = await watch(server, path, true);
  const blob = Buffer.alloc(kib * 1024, 7).toString('base64');

  const started = performance.now();
  await pool(events, 6, async (i) => {
    const r = await call(server, agent, 'POST', '/api/v1/namespaces/stall/secrets', JSON.stringify({ metadata: { name: `big-${i}` }, data: { blob } }));
    if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`);
  });
  const writesDone = performance.now();
  const deadline = writesDone + 60_000;
  while (reading.some((s) => s.lines < events) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  const received = reading.every((s) => s.lines >= events);
  // reading again, it drains what the server buffered: the stream then ends if the server gave up
  // on it, or has every event if its buffer never filled
  stalled.res.resume();
  while (!stalled.ended && stalled.lines < events && performance.now() < deadline) await new Promise((r) => setTimeout(r, 10));

  const report = {
    scenario: 'stalled-watch', readers, events, eventKiB: Math.round(kib * 4 / 3),
    writesMs: Math.round(writesDone - started),
    allReadersReceivedEverything: received,
    lastReceiptAfterLastWriteMs: received ? Math.round(Math.max(...reading.map((s) => s.lastAt)) - writesDone) : null,
    stalledEndedByServer: stalled.ended,
    stalledEventsReceived: stalled.lines,
  };
  console.log(JSON.stringify(report, null, 2));
  console.log(`stalled-watch: ${events} events of ~${report.eventKiB} KiB to ${readers} readers + 1 stalled: writes ${report.writesMs} ms, ` +
    `last receipt ${report.lastReceiptAfterLastWriteMs ?? 'never'} ms after the last write; stalled watcher ${stalled.ended ? `ended by the server after ${stalled.lines} events` : 'not ended'}`);
} finally {
  agent.destroy();
  await server.dispose();
}
