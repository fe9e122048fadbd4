/**
 * Property: any request line and headers — paths of any segments (dot segments, escapes, watch
 * paths), any method, query parameters of any names and values, label and field selectors built
 * from their grammar's pieces, Accept / Content-Type / other headers of any value — answer in time
 * with a 2xx or a 4xx Status, and the server stays up.
 */
import fc from 'fast-check';
import { after, before, describe, it } from 'node:test';
import { createNamespace, expectStatus } from '../support/api.js';
import { checkAlive, checkAnswer, closeConnections, fuzzParams, keyArb, send } from '../support/fuzz.js';
import { startServer, type TestServer } from '../support/server.js';

/** A string as it may stand in a request target: everything outside the unreserved and sub-delims escaped. */
const asTarget = (s: string) => s.replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@%]/g, (c) => encodeURIComponent(c));

const segmentArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('api', 'apis', 'v1', 'namespaces', 'fuzz', 'default', 'secrets', 'serviceaccounts', 'events.orch.io', 'events', 'status', 'finalize', 'watch', 'keep', 'openapi', 'v2', 'v3', 'version', 'livez', 'readyz', 'healthz') },
  { weight: 2, arbitrary: fc.constantFrom('..', '.', '%2e%2e', '.%2E', '%2F', '%25', '%zz', '%', '', '%00', '%C0%AF', '%E2%80%AE') },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }).map(asTarget) },
);
const pathArb = fc.array(segmentArb, { maxLength: 8 }).map((s) => `/${s.join('/')}`);

const selectorPieceArb = fc.oneof(keyArb, fc.constantFrom('=', '==', '!=', ' in ', ' notin ', '(', ')', ',', '!', 'a', 'metadata.name', 'metadata.namespace', 'type', ' ', 'x>1', 'x<2', '\\', '\\,'));
const selectorArb = fc.array(selectorPieceArb, { maxLength: 8 }).map((p) => p.join(''));

const paramArb = fc.oneof(
  fc.tuple(fc.constantFrom('labelSelector', 'fieldSelector'), selectorArb),
  fc.tuple(
    fc.constantFrom('limit', 'continue', 'resourceVersion', 'resourceVersionMatch', 'timeout', 'fieldValidation', 'fieldManager', 'dryRun', 'pretty',
      'propagationPolicy', 'gracePeriodSeconds', 'includeObject', 'allowWatchBookmarks', 'sendInitialEvents', 'force', 'orphanDependents', 'verbose', 'exclude', 'hash'),
    fc.oneof(fc.constantFrom('', '0', '1', '-1', 'true', 'All', 'Exact', 'NotOlderThan', 'Strict', 'Warn', 'Object', '1s', '99999999999999999999', 'eyJ2IjoxfQ'), fc.string({ maxLength: 10 })),
  ),
  fc.tuple(keyArb, fc.string({ maxLength: 6 })),
);
/** The query, with any watch bounded to a second so that a stream ends on its own. */
const queryArb = fc.array(paramArb, { maxLength: 4 }).map((pairs) => {
  const q = new URLSearchParams(pairs.filter(([k]) => k !== 'watch' && k !== 'timeoutSeconds'));
  q.set('timeoutSeconds', '1');
  return q.toString();
});

/** Header values Node lets a client send (no control characters). */
const headerValueArb = fc.string({ maxLength: 40 }).map((s) => s.replace(/[\u0000-\u001f\u007f-\uffff]/g, ''));
const mediaTypeArb = fc.oneof(
  fc.constantFrom('application/json', 'application/yaml', 'application/cbor', 'application/vnd.kubernetes.protobuf', 'application/vnd.orch.protobuf',
    'application/json;as=Table;v=v1;g=meta.k8s.io', 'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io', '*/*', 'text/html', 'application/*;q=0',
    'application/merge-patch+json', 'application/apply-patch+yaml', 'application/json;stream=watch', 'application/json;as=APIGroupDiscoveryList;v=v2;g=apidiscovery.k8s.io'),
  headerValueArb,
);
const headersArb = fc.record({
  accept: fc.oneof(mediaTypeArb, fc.array(mediaTypeArb, { maxLength: 3 }).map((m) => m.join(', '))),
  'content-type': mediaTypeArb,
  'accept-encoding': fc.constantFrom('gzip', 'gzip;q=0', 'identity', '*', 'br'),
  'user-agent': headerValueArb,
  'if-none-match': headerValueArb,
  authorization: fc.constantFrom('Bearer x', 'Basic Zm9vOmJhcg==', 'Bearer '),
}, { requiredKeys: [] });

const methodArb = fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS');
const bodyArb = fc.oneof(fc.constant(undefined), fc.constantFrom('{}', '[]', 'null', '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"made"}}'), fc.string({ maxLength: 20 }));

describe('fuzz: request lines and headers', () => {
  let server: TestServer;

  before(async () => {
    server = await startServer();
    await createNamespace(server, 'fuzz');
    expectStatus(await send(server, '/api/v1/namespaces/fuzz/secrets', { method: 'POST', body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'keep' } } }), 201, 'create a secret');
  });
  after(async () => { closeConnections(server); await server.dispose(); });

  it('paths, methods and bodies', async () => {
    await fc.assert(fc.asyncProperty(pathArb, methodArb, queryArb, bodyArb, async (path, method, query, body) => {
      const target = `${path}?${query}`;
      const res = await send(server, target, { method, body });
      checkAnswer(res, `${method} ${target} ${body ?? ''}`);
    }), fuzzParams);
    await checkAlive(server);
  });

  it('query parameters and selectors on lists and writes', async () => {
    const targetArb = fc.constantFrom('/api/v1/namespaces/fuzz/secrets', '/api/v1/secrets', '/apis/events.orch.io/v1/namespaces/fuzz/events', '/api/v1/namespaces', '/api/v1/namespaces/fuzz/secrets/keep');
    await fc.assert(fc.asyncProperty(targetArb, fc.constantFrom('GET', 'DELETE', 'POST', 'PATCH'), queryArb, async (target, method, query) => {
      // the collection and the object keep existing: writes run as dry runs
      const url = `${target}?${query}&dryRun=All`;
      const body = method === 'POST' ? { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'made' } } : method === 'PATCH' ? '{}' : undefined;
      const headers = method === 'PATCH' ? { 'content-type': 'application/merge-patch+json' } : undefined;
      const res = await send(server, url, { method, body, headers });
      checkAnswer(res, `${method} ${url}`);
    }), fuzzParams);
    await checkAlive(server);
  });

  it('headers', async () => {
    const targetArb = fc.constantFrom('/api/v1/namespaces/fuzz/secrets', '/api/v1/namespaces/fuzz/secrets/keep', '/api', '/apis', '/apis/events.orch.io/v1', '/openapi/v3', '/version', '/livez?verbose');
    await fc.assert(fc.asyncProperty(targetArb, fc.constantFrom('GET', 'POST', 'PATCH', 'PUT'), headersArb, bodyArb, async (target, method, headers, body) => {
      const res = await send(server, target, { method, headers: headers as Record<string, string>, body: method === 'GET' ? undefined : body ?? '{}' });
      checkAnswer(res, `${method} ${target} ${JSON.stringify(headers)}`);
    }), fuzzParams);
    await checkAlive(server);
  });
});
