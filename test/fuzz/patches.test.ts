/**
 * Property: every patch type (JSON patch, merge patch, strategic merge patch) and server-side
 * apply (YAML and CBOR), with any body, against a stored object, answers a 2xx or a 4xx Status
 * (or one of kube-apiserver's own untyped 500s for strategic merge), leaves an object that reads
 * back as answered and passes validation again, and never takes the server down.
 */
import fc from 'fast-check';
import { after, before, describe, it } from 'node:test';
import { encodeCbor } from '../../src/codec/cbor.js';
import { toYaml } from '../../src/codec/yaml.js';
import { createNamespace, expectStatus } from '../support/api.js';
import { checkAlive, checkAnswer, checkRoundTrip, closeConnections, collectionOf, fuzzParams, keyArb, objectArb, send } from '../support/fuzz.js';
import { startServer, type TestServer } from '../support/server.js';

type KindName = 'ServiceAccount' | 'Secret' | 'Event';
const kindArb = fc.constantFrom<KindName>('ServiceAccount', 'Secret', 'Event');

/** A valid object of each kind, the starting point of every patch. */
function baseObject(kind: KindName, name: string, ns: string): Record<string, unknown> {
  const metadata = { name, labels: { app: 'fuzz', constructor: 'c' }, annotations: { note: 'x' }, finalizers: ['orch.io/f'] };
  if (kind === 'ServiceAccount') return { apiVersion: 'v1', kind, metadata, secrets: [{ name: 'a' }, { name: 'b' }] };
  if (kind === 'Secret') return { apiVersion: 'v1', kind, metadata, data: { a: 'YQ==', hasOwnProperty: 'Yg==' } };
  return {
    apiVersion: 'events.orch.io/v1', kind, metadata, eventTime: '2026-01-01T00:00:00.000000Z', reportingController: 'orch.io/fuzz',
    reportingInstance: 'i', action: 'A', reason: 'R', type: 'Normal', regarding: { kind: 'Pod', namespace: ns, name: 'p' },
  };
}

const valueArb = fc.jsonValue({ maxDepth: 3 });
const segmentArb = fc.oneof(keyArb, fc.constantFrom('metadata', 'labels', 'annotations', 'finalizers', 'data', 'secrets', 'name', 'regarding', '-', '0', '1', '-1', '~0', '~1x', '01'));
const pointerArb = fc.oneof({ weight: 9, arbitrary: fc.array(segmentArb, { maxLength: 4 }).map((s) => `/${s.join('/')}`) }, { weight: 1, arbitrary: fc.constantFrom('', 'x', '/') });

const jsonPatchArb = fc.oneof(
  { weight: 9, arbitrary: fc.array(fc.record({
    op: fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test', 'bogus'), path: pointerArb, from: pointerArb, value: valueArb,
  }, { requiredKeys: ['op'] }), { maxLength: 4 }) },
  { weight: 1, arbitrary: valueArb },
);

/** Maps whose keys include strategic merge directives. */
const directiveMapArb: fc.Arbitrary<Record<string, unknown>> = fc.letrec<{ map: Record<string, unknown>; value: unknown }>((tie) => ({
  map: fc.dictionary(fc.oneof(keyArb, fc.constantFrom('$patch', '$retainKeys', '$setElementOrder/secrets', '$deleteFromPrimitiveList/finalizers', 'metadata', 'labels', 'secrets', 'data', 'finalizers', 'name')), tie('value'), { maxKeys: 4, depthIdentifier: 'd' }),
  value: fc.oneof({ depthSize: 'small', depthIdentifier: 'd' }, fc.constantFrom('replace', 'delete', 'merge', null, 'a'), valueArb, tie('map'), fc.array(tie('value'), { maxLength: 3, depthIdentifier: 'd' })),
})).map;

const patchTypes = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json'] as const;

describe('fuzz: patches and apply', () => {
  let server: TestServer;
  const ns = 'fuzz';
  let seq = 0;

  before(async () => {
    server = await startServer({ args: ['--feature-gates', 'CBORServingAndStorage=true'] });
    await createNamespace(server, ns);
  });
  after(async () => { closeConnections(server); await server.dispose(); });

  /** A fresh stored object for one run. */
  async function fresh(kind: KindName): Promise<{ collection: string; path: string }> {
    const collection = collectionOf(kind, ns);
    const name = `p${++seq}`;
    const res = await send(server, collection, { method: 'POST', body: baseObject(kind, name, ns) });
    expectStatus(res, 201, `create ${kind} ${name}`);
    return { collection, path: `${collection}/${name}` };
  }

  for (const type of patchTypes) {
    it(`${type}: any body`, async () => {
      const bodyArb = type === 'application/json-patch+json' ? jsonPatchArb : fc.oneof({ weight: 4, arbitrary: directiveMapArb }, { weight: 1, arbitrary: valueArb });
      await fc.assert(fc.asyncProperty(kindArb, bodyArb, fc.constantFrom('', '?fieldValidation=Strict', '?fieldValidation=Ignore', '?dryRun=All'), async (kind, patch, query) => {
        const { collection, path } = await fresh(kind);
        const what = `PATCH ${type} ${kind} ${JSON.stringify(patch).slice(0, 400)}`;
        const res = await send(server, `${path}${query}`, { method: 'PATCH', body: JSON.stringify(patch), headers: { 'content-type': type } });
        checkAnswer(res, what);
        // a dry run answers with what would be stored, which is not what GET finds
        if (!query.includes('dryRun')) await checkRoundTrip(server, collection, res, what);
      }), fuzzParams);
      await checkAlive(server);
    });
  }

  it('apply (YAML and CBOR): any configuration, with or without force', async () => {
    const configArb = kindArb.chain((k) => fc.tuple(fc.constant(k), objectArb(k, fc.constantFrom('target', ''))));
    await fc.assert(fc.asyncProperty(configArb, fc.boolean(), fc.constantFrom('yaml', 'json', 'cbor'), fc.constantFrom('a', 'b'), async ([kind, config], force, encoding, manager) => {
      const { collection, path } = await fresh(kind);
      const meta = config.metadata as Record<string, unknown>;
      if (meta.name === 'target') meta.name = path.slice(path.lastIndexOf('/') + 1);
      const body = encoding === 'cbor' ? encodeCbor(config) : encoding === 'yaml' ? toYaml(config) : JSON.stringify(config);
      const type = encoding === 'cbor' ? 'application/apply-patch+cbor' : 'application/apply-patch+yaml';
      const what = `apply ${encoding} ${kind} ${JSON.stringify(config).slice(0, 400)}`;
      const res = await send(server, `${path}?fieldManager=${manager}${force ? '&force=true' : ''}`, { method: 'PATCH', body, headers: { 'content-type': type } });
      checkAnswer(res, what);
      await checkRoundTrip(server, collection, res, what);
    }), fuzzParams);
    await checkAlive(server);
  });
});
