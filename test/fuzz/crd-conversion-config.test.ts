/**
 * Property: whatever conversion stanza a CustomResourceDefinition carries (strategy, webhook URL,
 * service reference of any shape, review versions), the create answers 201 or a 4xx Status, a
 * definition that was accepted is registered without taking the server down, and the server stays
 * up — the service reference becomes a URL only when a conversion runs, so an odd one must not
 * throw earlier.
 */
import fc from 'fast-check';
import { after, before, describe, it } from 'node:test';
import { checkAlive, checkAnswer, closeConnections, fuzzParams, send } from '../support/fuzz.js';
import { startServer, type TestServer } from '../support/server.js';

const textArb = fc.oneof(
  fc.constantFrom('', 'converter', 'conv.ns', 'a/b', '..', 'x:1', '%zz', ' ', 'UPPER', 'a'.repeat(300), '/convert', '/a?b#c'),
  fc.string({ maxLength: 40 }),
  fc.string({ maxLength: 12, unit: 'grapheme' }),
);
/** a field of any JSON type, mostly of the right one */
const anyOf = <T>(right: fc.Arbitrary<T>): fc.Arbitrary<unknown> => fc.oneof({ weight: 4, arbitrary: right }, { weight: 1, arbitrary: fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.array(fc.string(), { maxLength: 2 }), fc.object({ maxDepth: 1 })) });

const serviceArb = fc.record({
  name: anyOf(textArb), namespace: anyOf(textArb), path: anyOf(textArb),
  port: anyOf(fc.oneof(fc.integer({ min: -2, max: 70_000 }), fc.constantFrom(0, 1, 443, 65_535, 65_536))),
}, { requiredKeys: [] });
const clientConfigArb = fc.record({
  url: anyOf(fc.oneof(textArb, fc.constantFrom('https://127.0.0.1:1/convert', 'http://x', 'https://u:p@h/x', 'https://h/x#f', 'https://h/x?q=1'))),
  service: anyOf(serviceArb),
  caBundle: anyOf(fc.constantFrom('', 'bm90IGEgY2VydA==', '!!')),
}, { requiredKeys: [] });
const conversionArb = fc.record({
  strategy: anyOf(fc.constantFrom('None', 'Webhook', 'webhook', '')),
  webhook: anyOf(fc.record({
    clientConfig: anyOf(clientConfigArb),
    conversionReviewVersions: anyOf(fc.array(fc.constantFrom('v1', 'v1beta1', 'v2', ''), { maxLength: 3 })),
  }, { requiredKeys: [] })),
}, { requiredKeys: [] });

const schema = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } };

describe('fuzz: CRD conversion configuration', () => {
  let server: TestServer;
  before(async () => { server = await startServer(); });
  after(async () => { closeConnections(server); await server?.dispose(); });

  it('answers every conversion stanza with 201 or a 4xx Status, and stays up', async () => {
    let n = 0;
    await fc.assert(fc.asyncProperty(conversionArb, async (conversion) => {
      const group = `f${n++}.fuzz.example.com`;
      const crd = {
        apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `things.${group}` },
        spec: {
          group, scope: 'Namespaced', names: { plural: 'things', kind: 'Thing' }, conversion,
          versions: [{ name: 'v1', served: true, storage: true, schema }, { name: 'v2', served: true, storage: false, schema }],
        },
      };
      const res = await send(server, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { method: 'POST', body: JSON.stringify(crd), headers: { 'content-type': 'application/json' } });
      checkAnswer(res, `CRD with conversion ${JSON.stringify(conversion).slice(0, 300)}`);
      if (res.status === 201) {
        // registered by the controller in the background: reading its resource must not bring the server down
        checkAnswer(await send(server, `/apis/${group}/v1/things`), 'list of the new resource');
        checkAnswer(await send(server, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/things.${group}`, { method: 'DELETE' }), 'delete');
      }
      await checkAlive(server);
    }), fuzzParams);
  });
});
