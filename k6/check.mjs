// Checks the k6 scripts without k6: `node k6/check.mjs`. Each script is loaded with stubs of the
// k6 modules (k6/check/stubs: only names k6 documents, so a misspelt import fails to link), its
// `options` are checked against what k6 accepts (option names, executors and their required
// fields, durations, threshold metrics and expressions, tlsAuth), then setup(), every scenario's
// function and teardown() run once against a fake API server in memory, and every check() must
// pass. It proves the scripts are well-formed and their logic holds; it measures nothing.
import { register } from 'node:module';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

register('./check/hooks.mjs', import.meta.url);
const { state } = await import('./check/stubs/state.mjs');

const builtinMetrics = new Set([
  'checks', 'data_received', 'data_sent', 'dropped_iterations', 'group_duration', 'iteration_duration', 'iterations', 'vus', 'vus_max',
  'http_req_blocked', 'http_req_connecting', 'http_req_duration', 'http_req_failed', 'http_req_receiving', 'http_req_sending',
  'http_req_tls_handshaking', 'http_req_waiting', 'http_reqs',
  'ws_connecting', 'ws_msgs_received', 'ws_msgs_sent', 'ws_ping', 'ws_session_duration', 'ws_sessions',
]);
const optionKeys = new Set([
  'scenarios', 'thresholds', 'setupTimeout', 'teardownTimeout', 'tlsAuth', 'insecureSkipTLSVerify', 'tlsVersion', 'tlsCipherSuites',
  'vus', 'duration', 'iterations', 'stages', 'batch', 'batchPerHost', 'noConnectionReuse', 'noVUConnectionReuse', 'userAgent',
  'summaryTrendStats', 'tags', 'discardResponseBodies', 'httpDebug', 'hosts', 'dns', 'maxRedirects', 'minIterationDuration', 'throw',
]);
const executors = {
  'shared-iterations': ['vus', 'iterations'],
  'per-vu-iterations': ['vus', 'iterations'],
  'constant-vus': ['vus', 'duration'],
  'ramping-vus': ['stages'],
  'constant-arrival-rate': ['rate', 'timeUnit', 'duration', 'preAllocatedVUs'],
  'ramping-arrival-rate': ['stages', 'preAllocatedVUs'],
  'externally-controlled': ['duration'],
};
const scenarioKeys = new Set(['executor', 'exec', 'startTime', 'gracefulStop', 'env', 'tags', 'options', 'vus', 'iterations', 'duration', 'maxDuration',
  'stages', 'startVUs', 'gracefulRampDown', 'rate', 'timeUnit', 'preAllocatedVUs', 'maxVUs', 'startRate', 'maxVUs']);
const durationRe = /^(\d+(\.\d+)?(ms|s|m|h))+$/;
const thresholdRe = /^(avg|min|max|med|count|rate|value|p\(\d+(\.\d+)?\))\s*(<|<=|>|>=|==|===|!=)\s*-?\d+(\.\d+)?$/;

function validateOptions(name, options, mod) {
  const problems = [];
  if (!options || typeof options !== 'object') return [`${name}: no exported options`];
  for (const k of Object.keys(options)) if (!optionKeys.has(k)) problems.push(`unknown option '${k}'`);
  for (const [sname, sc] of Object.entries(options.scenarios ?? {})) {
    const required = executors[sc.executor];
    if (!required) { problems.push(`scenario ${sname}: unknown executor '${sc.executor}'`); continue; }
    for (const k of required) if (sc[k] === undefined) problems.push(`scenario ${sname}: ${sc.executor} needs '${k}'`);
    for (const k of Object.keys(sc)) if (!scenarioKeys.has(k)) problems.push(`scenario ${sname}: unknown field '${k}'`);
    for (const k of ['duration', 'maxDuration', 'startTime', 'gracefulStop', 'timeUnit']) {
      if (sc[k] !== undefined && !durationRe.test(sc[k])) problems.push(`scenario ${sname}: ${k} '${sc[k]}' is not a k6 duration`);
    }
    for (const k of ['vus', 'iterations', 'rate', 'preAllocatedVUs', 'maxVUs']) {
      if (sc[k] !== undefined && !(Number.isInteger(sc[k]) && sc[k] > 0)) problems.push(`scenario ${sname}: ${k} must be a positive integer, is ${sc[k]}`);
    }
    const fn = sc.exec ?? 'default';
    if (typeof mod[fn] !== 'function') problems.push(`scenario ${sname}: exec '${fn}' is not an exported function`);
  }
  for (const [metric, exprs] of Object.entries(options.thresholds ?? {})) {
    const m = /^([a-zA-Z_][a-zA-Z0-9_]*)(\{[^{}:]+:[^{}]+\})?$/.exec(metric);
    if (!m) { problems.push(`threshold '${metric}': not metric{tag:value}`); continue; }
    if (!builtinMetrics.has(m[1]) && !state.metrics.has(m[1])) problems.push(`threshold '${metric}': no such metric`);
    for (const e of exprs) {
      const expr = typeof e === 'string' ? e : e.threshold;
      if (!thresholdRe.test(expr)) problems.push(`threshold '${metric}': bad expression '${expr}'`);
    }
  }
  for (const a of options.tlsAuth ?? []) {
    if (!Array.isArray(a.domains) || a.domains.length === 0) problems.push('tlsAuth: domains must list at least one host (k6 loads the certificate only then)');
    if (!/BEGIN CERTIFICATE/.test(a.cert ?? '')) problems.push('tlsAuth: cert is not PEM');
    if (!/BEGIN .*PRIVATE KEY/.test(a.key ?? '')) problems.push('tlsAuth: key is not PEM');
  }
  for (const k of ['setupTimeout', 'teardownTimeout']) if (options[k] !== undefined && !durationRe.test(options[k])) problems.push(`${k} is not a duration`);
  return problems;
}

const dir = mkdtempSync(join(tmpdir(), 'k6-check-'));
const cert = join(dir, 'client.crt');
const key = join(dir, 'client.key');
writeFileSync(cert, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
writeFileSync(key, '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n');

globalThis.open = (path) => readFileSync(path, 'utf8');
globalThis.__VU = 1;
globalThis.__ITER = 0;
globalThis.__ENV = {
  ORCH_URL: 'https://127.0.0.1:6443', ORCH_CERT: cert, ORCH_KEY: key, ORCH_CA: join(dir, 'ca.crt'), SSL_CERT_FILE: join(dir, 'ca.crt'),
  ORCH_NAMESPACE: 'k6-check', VUS: '2', DURATION: '20s', OBJECTS: '5', PAGE: '2', WATCHERS: '2', RATE: '2', WARMUP: '5s', SAMPLE: '1',
};

let failed = 0;
try {
  for (const script of ['crud.js', 'list.js', 'watch.js']) {
    state.reset();
    const problems = [];
    let mod;
    try {
      mod = await import(`./${script}`);
      problems.push(...validateOptions(script, mod.options, mod));
      const data = mod.setup ? mod.setup() : undefined;
      // scenarios that start later (writers) first, so the stub watch has their events to deliver
      const scenarios = Object.entries(mod.options.scenarios ?? { default: {} })
        .sort(([, a], [, b]) => (b.startTime ? 1 : 0) - (a.startTime ? 1 : 0));
      for (const [name, sc] of scenarios) {
        for (let i = 0; i < 2; i++) {
          Object.assign(state.exec, { scenario: name, iteration: i, iterationInTest: i });
          mod[sc.exec ?? 'default'](data);
        }
      }
      if (mod.teardown) mod.teardown(data);
    } catch (err) {
      problems.push(`threw: ${err?.stack ?? err}`);
    }
    const failedChecks = state.checks.filter((c) => !c.ok).map((c) => c.name);
    if (failedChecks.length) problems.push(`checks failed: ${[...new Set(failedChecks)].join(', ')}`);
    if (state.checks.length === 0) problems.push('no check() ran');
    const summary = `${state.requests.length} requests, ${state.checks.length} checks, ${state.wsSessions} WebSocket sessions, metrics ${[...state.metrics.keys()].join(', ') || '(built-in only)'}`;
    if (problems.length) {
      failed++;
      console.log(`k6/${script}: FAIL (${summary})\n  ${problems.join('\n  ')}`);
    } else {
      console.log(`k6/${script}: ok (${summary}; ${Object.keys(mod.options.thresholds ?? {}).length} thresholds)`);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
