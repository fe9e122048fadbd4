/**
 * What the property suites (test/fuzz) share: the number of runs (FUZZ_RUNS, small in `npm test`,
 * large in `npm run fuzz`), a request that must answer in time, the oracle every answer must pass,
 * and the generators of near-valid objects that reach past the decoders.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Agent } from 'node:https';
import { request, type HttpResponse, type RequestOptions, type TestServer } from './server.js';

export const fuzzRuns = Number(process.env.FUZZ_RUNS ?? 30);

/** fc.assert's parameters: the runs, and the failing run's error in the report. */
export const fuzzParams = { numRuns: fuzzRuns, includeErrorInReport: true };

/** A request that has not answered by then has hung: a failure, not a slow pass. */
const answerWithinMs = 15_000;

/** One kept-alive connection pool per server: a TLS handshake per request would dominate the run. */
const agents = new WeakMap<TestServer, Agent>();

/** The request, sent byte for byte over a kept-alive connection, with its deadline. */
export function send(server: TestServer, path: string, o: RequestOptions = {}): Promise<HttpResponse> {
  let agent = agents.get(server);
  if (!agent) agents.set(server, agent = new Agent({ keepAlive: true, maxSockets: 4 }));
  return request(server, path, { ...o, asSent: true, timeoutMs: answerWithinMs, agent }).catch((err: Error) => {
    // a refused connection means the server is gone: what it printed last says why
    throw new Error(`${o.method ?? 'GET'} ${path}: ${err.message}\nserver's last lines:\n${server.logs.slice(-15).join('\n')}`);
  });
}

/** Closes the kept-alive connections (before the server stops). */
export function closeConnections(server: TestServer): void {
  agents.get(server)?.destroy();
}

/**
 * 500s that kube-apiserver itself answers for these inputs, with no reason (errors it does not
 * type): strategic merge patch directives it cannot apply, and a create that carries a
 * resourceVersion. Anything else at 500 or above is a bug.
 */
const kubernetesUntyped500 = [
  /^unknown patch type: /, /does not contain declared merge key: /, /^The order in patch list:/, /^expected a .*, but received a /,
  /^list element types are not identical: /, /^no elements in any of the given slices$/, /^cannot merge lists without merge key for /,
  /^merging lists cannot yet be specified in the patch$/, /^unable to find api field in struct /, /^value for key \d+ is not a map$/,
  /^resourceVersion should not be set on objects to be created$/,
];

/** The oracle: a 2xx, or a Status with a 4xx code (or one of Kubernetes' own untyped 500s). */
export function checkAnswer(res: HttpResponse, what: string): void {
  const show = `${what}: HTTP ${res.status} ${res.body.slice(0, 500)}`;
  if (res.status >= 200 && res.status < 300) return;
  if (res.status >= 300 && res.status < 400) return; // OpenAPI redirects to a document's current hash
  const type = String(res.headers['content-type'] ?? '');
  // a HEAD answer has no body to check
  if (type.startsWith('application/json') && res.body !== '') {
    assert.equal(res.json?.kind, 'Status', show);
    assert.equal(res.json.code, res.status, show);
  }
  if (res.status >= 500) {
    const untyped = res.status === 500 && res.json?.reason === undefined && kubernetesUntyped500.some((re) => re.test(res.json?.message ?? ''));
    assert.ok(untyped, show);
  }
  assert.ok(res.status >= 400, show);
}

/** The server still answers its liveness probe. */
export async function checkAlive(server: TestServer): Promise<void> {
  const res = await send(server, '/livez');
  assert.equal(res.status, 200, `livez: ${res.status} ${res.body}`);
}

/**
 * After a write that answered with an object: GET returns that object, and sending it back
 * unchanged is accepted (what is stored passes validation).
 */
export async function checkRoundTrip(server: TestServer, collection: string, res: HttpResponse, what: string): Promise<void> {
  if (res.status !== 200 && res.status !== 201) return;
  const name = res.json?.metadata?.name;
  if (typeof name !== 'string' || !res.json.metadata.resourceVersion) return; // a Status answer (DELETE) or a dry run
  const got = await send(server, `${collection}/${name}`);
  assert.equal(got.status, 200, `${what}: GET after write: ${got.body.slice(0, 500)}`);
  assert.deepEqual(got.json, res.json, `${what}: GET returns what the write answered`);
  const put = await send(server, `${collection}/${name}`, { method: 'PUT', body: got.body });
  assert.equal(put.status, 200, `${what}: PUT of the stored object: ${put.body.slice(0, 500)}`);
}

// ---- generators ------------------------------------------------------------------------------

/** Keys a client might send: valid names, Object.prototype's member names, odd characters. */
export const keyArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype', 'app', 'orch.io/x', 'a/b/c', '', '.', '..', 'Ā', 'a\u0000b', '$patch', '$retainKeys', '$setElementOrder/finalizers', '$deleteFromPrimitiveList/finalizers') },
  { weight: 6, arbitrary: fc.stringMatching(/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,12}[A-Za-z0-9])?$/) },
  { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
);

/** Names: mostly valid DNS subdomains, sometimes anything. */
export const nameArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?$/) },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
);

const anyValue: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 3 });

/** Usually a value of the expected type, now and then anything: most bodies get past decoding. */
const mostly = <T>(expected: fc.Arbitrary<T>): fc.Arbitrary<unknown> => fc.oneof({ weight: 30, arbitrary: expected }, { weight: 1, arbitrary: anyValue });

const stringish = mostly(fc.oneof(fc.stringMatching(/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,10}[A-Za-z0-9])?$/), fc.string({ maxLength: 16 })));

const mapArb = (values: fc.Arbitrary<unknown>) => fc.dictionary(keyArb, values, { maxKeys: 3 });

export const metadataArb = (name: fc.Arbitrary<string>): fc.Arbitrary<Record<string, unknown>> => fc.record({
  name,
  labels: mapArb(stringish),
  annotations: mapArb(stringish),
  finalizers: fc.array(mostly(keyArb), { maxLength: 2 }),
  generateName: mostly(fc.constantFrom('gen-', 'x', '')),
  ownerReferences: fc.array(fc.record({ apiVersion: fc.string(), kind: fc.string(), name: fc.string(), uid: fc.string(), controller: fc.boolean() }, { requiredKeys: [] }), { maxLength: 2 }),
  managedFields: fc.array(fc.record({
    manager: fc.string({ maxLength: 8 }), operation: fc.constantFrom('Apply', 'Update', 'x'), apiVersion: fc.constantFrom('v1', 'events.orch.io/v1', ''),
    fieldsType: fc.constantFrom('FieldsV1', ''), fieldsV1: anyValue,
  }, { requiredKeys: [] }), { maxLength: 2 }),
}, { requiredKeys: ['name'] });

const base64Arb = fc.uint8Array({ maxLength: 12 }).map((b) => Buffer.from(b).toString('base64'));

const validNameArb = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?$/);
const qualifiedArb = fc.oneof(fc.constantFrom('constructor', 'toString', 'hasOwnProperty', 'app', 'orch.io/x'), fc.stringMatching(/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,10}[A-Za-z0-9])?$/));

/** Valid bodies of each kind, with keys named like Object.prototype members wherever they are valid. */
const validObjectArb = (kind: 'ServiceAccount' | 'Secret' | 'Event', name: fc.Arbitrary<string>): fc.Arbitrary<Record<string, unknown>> => {
  const metadata = fc.record({
    name,
    labels: fc.dictionary(qualifiedArb, fc.stringMatching(/^([A-Za-z0-9]([-A-Za-z0-9_.]{0,8}[A-Za-z0-9])?)?$/), { maxKeys: 3 }),
    annotations: fc.dictionary(qualifiedArb, fc.string({ maxLength: 20 }), { maxKeys: 3 }),
    finalizers: fc.subarray(['orch.io/a', 'b', 'toString']),
  }, { requiredKeys: ['name'] });
  if (kind === 'ServiceAccount') {
    return fc.record({ metadata, secrets: fc.uniqueArray(fc.record({ name: validNameArb }), { selector: (s) => s.name, maxLength: 3 }), automountServiceAccountToken: fc.boolean() }, { requiredKeys: ['metadata'] })
      .map((o) => ({ apiVersion: 'v1', kind, ...o }));
  }
  if (kind === 'Secret') {
    const dataKey = fc.oneof(fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', '.x', 'a-b_c'), fc.stringMatching(/^[-._a-zA-Z0-9]{1,12}$/));
    return fc.record({ metadata, data: fc.dictionary(dataKey, base64Arb, { maxKeys: 4 }), stringData: fc.dictionary(dataKey, fc.string({ maxLength: 8 }), { maxKeys: 2 }) }, { requiredKeys: ['metadata'] })
      .map((o) => ({ apiVersion: 'v1', kind, ...o }));
  }
  return fc.record({ metadata, note: fc.string({ maxLength: 20 }), type: fc.constantFrom('Normal', 'Warning'), action: validNameArb, reason: validNameArb })
    .map((o) => ({
      apiVersion: 'events.orch.io/v1', kind, eventTime: '2026-01-01T00:00:00.000000Z', reportingController: 'orch.io/fuzz', reportingInstance: 'i',
      regarding: { kind: 'Pod', namespace: 'fuzz', name: 'p' }, ...o,
    }));
};

/** Bodies of each kind the server stores: valid ones, and near-valid ones with wrong types and stray fields of any name. */
export const objectArb = (kind: 'ServiceAccount' | 'Secret' | 'Event', name: fc.Arbitrary<string> = nameArb): fc.Arbitrary<Record<string, unknown>> =>
  fc.oneof(validObjectArb(kind, name), noisyObjectArb(kind, name));

const noisyObjectArb = (kind: 'ServiceAccount' | 'Secret' | 'Event', name: fc.Arbitrary<string>): fc.Arbitrary<Record<string, unknown>> => {
  const typeMeta = { apiVersion: fc.constant(kind === 'Event' ? 'events.orch.io/v1' : 'v1'), kind: fc.constant(kind) };
  const stray = fc.dictionary(keyArb, anyValue, { maxKeys: 1 });
  const fields = kind === 'ServiceAccount'
    ? fc.record({
      secrets: fc.array(mostly(fc.record({ name: fc.string({ maxLength: 6 }) })), { maxLength: 3 }),
      imagePullSecrets: fc.array(fc.record({ name: fc.string({ maxLength: 6 }) }), { maxLength: 2 }),
      automountServiceAccountToken: mostly(fc.boolean()),
    }, { requiredKeys: [] })
    : kind === 'Secret'
      ? fc.record({
        data: mapArb(mostly(base64Arb)),
        stringData: mapArb(stringish),
        type: fc.constantFrom('Opaque', 'Opaque', 'Opaque', 'orch.io/tls', 'orch.io/basic-auth', 'x'),
        immutable: fc.boolean(),
      }, { requiredKeys: [] })
      : fc.record({
        eventTime: fc.constantFrom('2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00Z', 'yesterday'),
        reportingController: fc.constantFrom('orch.io/fuzz', 'orch.io/fuzz', ''), reportingInstance: fc.string({ minLength: 1, maxLength: 6 }),
        action: fc.string({ minLength: 1, maxLength: 6 }), reason: fc.string({ minLength: 1, maxLength: 6 }), note: fc.string({ maxLength: 20 }),
        type: fc.constantFrom('Normal', 'Warning', 'Other'),
        regarding: fc.record({ kind: fc.string({ maxLength: 5 }), namespace: fc.constantFrom('fuzz', 'fuzz', ''), name: fc.string({ maxLength: 5 }) }, { requiredKeys: ['namespace'] }),
        series: fc.record({ count: fc.integer({ min: -1, max: 5 }), lastObservedTime: fc.constant('2026-01-01T00:00:00.000000Z') }, { requiredKeys: [] }),
      }, { requiredKeys: [] });
  return fc.tuple(fc.record(typeMeta), fc.record({ metadata: metadataArb(name) }), fields, fc.oneof({ weight: 3, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: stray }))
    .map(([t, m, f, s]) => ({ ...s, ...t, ...m, ...f }));
};

/** The collection path of each kind in a namespace. */
export function collectionOf(kind: 'ServiceAccount' | 'Secret' | 'Event', ns: string): string {
  return kind === 'Event' ? `/apis/events.orch.io/v1/namespaces/${ns}/events` : `/api/v1/namespaces/${ns}/${kind === 'Secret' ? 'secrets' : 'serviceaccounts'}`;
}
