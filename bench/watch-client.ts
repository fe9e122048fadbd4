/**
 * A load process for bench/watch-fanout: holds `count` watch streams to one URL, counts events by
 * newlines (no parsing), and parses one event in `sampleEvery` to measure commit-to-receipt
 * latency from the `bench.orch.io/sent` annotation. Reports to its parent over IPC when told, with
 * each stream's own count; `mark` records the event count so far, so the parent can cut the run
 * into windows; `count` answers how many events the stream that has the fewest received.
 */
import { Agent, request } from 'node:https';

interface Start { url: string; count: number; ca: string; cert: string; key: string; sampleEvery: number }

const start = await new Promise<Start>((resolve) => process.once('message', (m) => resolve(m as Start)));
const agent = new Agent({ keepAlive: true, maxSockets: start.count, ca: start.ca, cert: start.cert, key: start.key });
let events = 0;
/** events per stream, in the order the streams opened */
const perStream: number[] = [];
let bytes = 0;
const latencies: number[] = [];
/** when each latency sample was received (epoch ms), so a run can be cut into phases */
const sampledAt: number[] = [];
let open = 0;
let sample = 0;
const marks: number[] = [];
const cpuStart = process.cpuUsage();

function watch(): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(start.url, { agent }, (res) => {
      if (res.statusCode !== 200) { reject(new Error(`watch answered ${res.statusCode}`)); return; }
      open++;
      resolve();
      const stream = perStream.push(0) - 1;
      // count newline bytes without decoding; decode only the sampled events
      const marker = Buffer.from('"bench.orch.io/sent":"');
      let tail: Buffer | undefined;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        let from = 0;
        for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, nl + 1)) {
          events++;
          perStream[stream]++;
          if (++sample % start.sampleEvery === 0) {
            const line = tail ? Buffer.concat([tail, chunk.subarray(from, nl)]) : chunk.subarray(from, nl);
            const at = line.indexOf(marker);
            if (at >= 0) {
              const now = Date.now();
              latencies.push(now - Number(line.subarray(at + marker.length, line.indexOf(34, at + marker.length)).toString()));
              sampledAt.push(now);
            }
          }
          tail = undefined;
          from = nl + 1;
        }
        if (from < chunk.length) tail = tail ? Buffer.concat([tail, chunk.subarray(from)]) : Buffer.from(chunk.subarray(from));
      });
      res.on('close', () => { open--; });
    });
    req.on('error', reject);
    req.end();
  });
}

for (let i = 0; i < start.count; i += 50) {
  await Promise.all(Array.from({ length: Math.min(50, start.count - i) }, () => watch()));
}
process.send?.({ t: 'ready', open });
process.on('message', (m: { t: string }) => {
  if (m.t === 'reset') { events = 0; perStream.fill(0); bytes = 0; latencies.length = 0; sampledAt.length = 0; marks.length = 0; return; }
  if (m.t === 'mark') { marks.push(events); return; }
  if (m.t === 'count') { process.send?.({ t: 'count', events, fewest: perStream.length ? Math.min(...perStream) : 0 }); return; }
  if (m.t === 'report') {
    const cpu = process.cpuUsage(cpuStart);
    agent.destroy();
    // exit only once the report is written to the channel: a large report cut short by exit is lost
    process.send?.({ t: 'report', events, perStream, bytes, latencies, sampledAt, open, marks, cpuMs: (cpu.user + cpu.system) / 1000 }, () => process.exit(0));
  }
});
