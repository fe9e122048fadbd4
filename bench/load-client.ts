/**
 * A load process (forked by LoadProcess in bench/harness.ts): runs phases of ServiceAccount (or
 * Widget) creates, gets, updates or deletes against one server with `concurrency` requests in flight,
 * over keep-alive HTTPS connections, and reports every request's latency to its parent. Bodies
 * are drained and only the status is checked, so the client spends as little CPU as it can.
 */
import { Agent, request, type RequestOptions } from 'node:https';
import { expectedStatus, objectName, serviceAccountBody, widgetBody, widgetGroup, type Op, type PhaseReport, type PhaseSpec } from './harness.js';

/** `cert`/`key` empty: no client certificate; `headers`: sent with every request (a bearer token) */
interface Start { t: 'start'; url: string; ca: string; cert: string; key: string; headers?: Record<string, string> }

let agent: Agent | undefined;
let base: URL | undefined;
let extraHeaders: Record<string, string> = {};

const methods: Record<Op, string> = { create: 'POST', get: 'GET', update: 'PUT', delete: 'DELETE' };

function once(options: RequestOptions, body: string | undefined): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(options, (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 200 && status < 300) {
        res.resume();
        res.on('end', () => resolve({ status, text: '' }));
        return;
      }
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve({ status, text: text.slice(0, 300) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function runPhase(spec: PhaseSpec): Promise<PhaseReport> {
  if (!agent || !base) throw new Error('phase before start');
  const widgets = spec.object === 'Widget';
  const group = spec.group ?? widgetGroup;
  const collection = widgets ? `/apis/${group}/v1/namespaces/${spec.namespace}/widgets` : `/api/v1/namespaces/${spec.namespace}/serviceaccounts`;
  const bodyOf = widgets ? (name: string, i: number, labels?: Record<string, string>) => widgetBody(name, i, labels, group) : serviceAccountBody;
  const method = methods[spec.op];
  const latencies = new Float64Array(spec.count);
  const firstErrors: string[] = [];
  let errors = 0;
  let next = 0;
  const cpu0 = process.cpuUsage();
  const start = process.hrtime.bigint();
  const worker = async () => {
    while (next < spec.count) {
      const k = next++;
      const i = spec.from + k;
      const name = objectName(spec.prefix, i);
      const body = spec.op === 'create' ? bodyOf(name, i)
        : spec.op === 'update' ? bodyOf(name, i, { rev: '2' }) : undefined;
      const options: RequestOptions = {
        hostname: base!.hostname, port: base!.port, agent, method,
        path: spec.op === 'create' ? collection : `${collection}/${name}`,
        headers: body === undefined ? extraHeaders : { ...extraHeaders, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      };
      const t = process.hrtime.bigint();
      try {
        const r = await once(options, body);
        if (!spec.expect.includes(r.status)) {
          errors++;
          if (firstErrors.length < 3) firstErrors.push(`${method} ${name}: ${r.status} ${r.text}`);
        }
      } catch (err) {
        errors++;
        if (firstErrors.length < 3) firstErrors.push(`${method} ${name}: ${(err as Error).message}`);
      }
      latencies[k] = Number(process.hrtime.bigint() - t) / 1e6;
    }
  };
  await Promise.all(Array.from({ length: Math.min(spec.concurrency, spec.count) }, worker));
  const end = process.hrtime.bigint();
  const cpu = process.cpuUsage(cpu0);
  return {
    op: spec.op, count: spec.count, errors, firstErrors,
    startMs: Number(start) / 1e6, endMs: Number(end) / 1e6, latenciesMs: latencies, cpuMs: (cpu.user + cpu.system) / 1000,
  };
}

process.on('message', (m: Start | { t: 'phase'; spec: PhaseSpec } | { t: 'exit' }) => {
  if (m.t === 'start') {
    base = new URL(m.url);
    // one socket per concurrent worker; reused across phases so handshakes are not measured
    agent = new Agent({ keepAlive: true, maxSockets: 1024, maxFreeSockets: 1024, ca: m.ca, cert: m.cert || undefined, key: m.key || undefined });
    extraHeaders = m.headers ?? {};
    process.send?.({ t: 'ready' });
  } else if (m.t === 'phase') {
    const spec = { ...m.spec, expect: m.spec.expect.length ? m.spec.expect : expectedStatus[m.spec.op] };
    runPhase(spec).then(
      (report) => process.send?.({ t: 'done', report }),
      (err: unknown) => process.send?.({ t: 'error', error: String((err as Error)?.stack ?? err) }),
    );
  } else if (m.t === 'exit') {
    agent?.destroy();
    process.disconnect?.();
    process.exit(0);
  }
});
