/**
 * A load process for bench/watch-fanout: holds `count` watch streams to one URL, over HTTP/1.1
 * (one connection per stream) or over `h2Sessions` HTTP/2 sessions (streams multiplexed, as
 * client-go does), in JSON, protobuf or Table form per stream. It counts events without parsing
 * them (newlines for JSON, length prefixes for protobuf frames), counts bytes, and reads one event
 * in `sampleEvery` to measure commit-to-receipt latency from the `bench.orch.io/sent` annotation.
 * Reports to its parent over IPC when told, with each stream's own count; `mark` records the
 * event count so far, so the parent can cut the run into windows; `count` answers how many events
 * the stream that has the fewest received.
 */
import { connect, type ClientHttp2Session } from 'node:http2';
import { Agent, request } from 'node:https';

/** What a stream asks for: its Accept header and how its events are framed. */
export type StreamForm = 'json' | 'protobuf' | 'table';

interface Start {
  url: string; count: number; ca: string; cert: string; key: string; sampleEvery: number;
  /** per stream, in order (cycled): the forms the streams take */
  forms?: StreamForm[];
  /** 0: HTTP/1.1, one connection per stream; n: n HTTP/2 sessions sharing the streams */
  h2Sessions?: number;
}

const accept: Record<StreamForm, string> = {
  json: 'application/json',
  protobuf: 'application/vnd.kubernetes.protobuf;stream=watch',
  table: 'application/json;as=Table;g=meta.k8s.io;v=v1',
};

const start = await new Promise<Start>((resolve) => process.once('message', (m) => resolve(m as Start)));
const forms = start.forms?.length ? start.forms : ['json' as const];
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
const jsonMarker = Buffer.from('"bench.orch.io/sent":"');
const protoMarker = Buffer.from('bench.orch.io/sent');

function sampleLatency(event: Buffer, protobuf: boolean): void {
  const at = event.indexOf(protobuf ? protoMarker : jsonMarker);
  if (at < 0) return;
  let from: number;
  let to: number;
  if (protobuf) {
    // the map entry's value: field 2, a one-byte length, the digits
    from = at + protoMarker.length + 2;
    to = from + event[from - 1];
  } else {
    from = at + jsonMarker.length;
    to = event.indexOf(34, from);
  }
  const now = Date.now();
  latencies.push(now - Number(event.subarray(from, to).toString()));
  sampledAt.push(now);
}

/** Counts JSON lines of one stream, keeping the partial last line only when it is to be sampled. */
function jsonCounter(stream: number): (chunk: Buffer) => void {
  let tail: Buffer | undefined;
  return (chunk) => {
    let from = 0;
    for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, nl + 1)) {
      events++;
      perStream[stream]++;
      if (++sample % start.sampleEvery === 0) sampleLatency(tail ? Buffer.concat([tail, chunk.subarray(from, nl)]) : chunk.subarray(from, nl), false);
      tail = undefined;
      from = nl + 1;
    }
    if (from < chunk.length) tail = tail ? Buffer.concat([tail, chunk.subarray(from)]) : Buffer.from(chunk.subarray(from));
  };
}

/** Counts length-prefixed protobuf frames of one stream, reading only the prefixes (and the sampled frames). */
function protobufCounter(stream: number): (chunk: Buffer) => void {
  let header = Buffer.alloc(0);
  let left = 0;
  let sampled: Buffer[] | undefined;
  return (chunk) => {
    let at = 0;
    while (at < chunk.length) {
      if (left > 0) {
        const take = Math.min(left, chunk.length - at);
        sampled?.push(chunk.subarray(at, at + take));
        left -= take;
        at += take;
        if (left === 0 && sampled) { sampleLatency(Buffer.concat(sampled), true); sampled = undefined; }
        continue;
      }
      const need = 4 - header.length;
      header = Buffer.concat([header, chunk.subarray(at, at + need)]);
      at += Math.min(need, chunk.length - at);
      if (header.length < 4) break;
      left = header.readUInt32BE(0);
      header = Buffer.alloc(0);
      events++;
      perStream[stream]++;
      if (++sample % start.sampleEvery === 0) sampled = [];
    }
  };
}

function counterFor(form: StreamForm, stream: number): (chunk: Buffer) => void {
  return form === 'protobuf' ? protobufCounter(stream) : jsonCounter(stream);
}

function onStream(form: StreamForm, body: NodeJS.ReadableStream): void {
  open++;
  const stream = perStream.push(0) - 1;
  const count = counterFor(form, stream);
  body.on('data', (chunk: Buffer) => { bytes += chunk.length; count(chunk); });
  body.on('close', () => { open--; });
}

function watchHttp1(form: StreamForm): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(start.url, { agent, headers: { accept: accept[form] } }, (res) => {
      if (res.statusCode !== 200) { reject(new Error(`watch answered ${res.statusCode}`)); return; }
      onStream(form, res);
      resolve();
    });
    req.on('error', reject);
    req.end();
  });
}

const sessions: ClientHttp2Session[] = [];
function watchHttp2(form: StreamForm, session: ClientHttp2Session): Promise<void> {
  const url = new URL(start.url);
  return new Promise((resolve, reject) => {
    const req = session.request({ ':path': `${url.pathname}${url.search}`, accept: accept[form] });
    req.on('response', (headers) => {
      if (headers[':status'] !== 200) { reject(new Error(`watch answered ${headers[':status']}`)); return; }
      onStream(form, req);
      resolve();
    });
    req.on('error', reject);
    req.end();
  });
}

const h2 = start.h2Sessions ?? 0;
for (let s = 0; s < h2; s++) {
  const session = connect(new URL(start.url).origin, { ca: start.ca, cert: start.cert, key: start.key });
  await new Promise<void>((resolve, reject) => { session.once('connect', () => resolve()); session.once('error', reject); });
  sessions.push(session);
}
for (let i = 0; i < start.count; i += 50) {
  await Promise.all(Array.from({ length: Math.min(50, start.count - i) }, (_, j) => {
    const n = i + j;
    const form = forms[n % forms.length];
    return h2 > 0 ? watchHttp2(form, sessions[n % h2]) : watchHttp1(form);
  }));
}
process.send?.({ t: 'ready', open });
process.on('message', (m: { t: string }) => {
  if (m.t === 'reset') { events = 0; perStream.fill(0); bytes = 0; latencies.length = 0; sampledAt.length = 0; marks.length = 0; return; }
  if (m.t === 'mark') { marks.push(events); return; }
  if (m.t === 'count') { process.send?.({ t: 'count', events, fewest: perStream.length ? Math.min(...perStream) : 0 }); return; }
  if (m.t === 'report') {
    const cpu = process.cpuUsage(cpuStart);
    agent.destroy();
    for (const s of sessions) s.destroy();
    // exit only once the report is written to the channel: a large report cut short by exit is lost
    process.send?.({ t: 'report', events, perStream, bytes, latencies, sampledAt, open, marks, cpuMs: (cpu.user + cpu.system) / 1000 }, () => process.exit(0));
  }
});
