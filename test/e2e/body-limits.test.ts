/**
 * Bodies that used to take the server down or answer 500: nesting past the decoders' limits in
 * JSON, YAML and CBOR (refused before anything is built), YAML aliases that refer to themselves
 * or expand without bound, CBOR shared-reference tags, and server-side apply of a wrongly typed
 * metadata. Each answer is a 4xx Status, and the server stays up.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { encodeCbor } from '../../src/codec/cbor.js';
import { createNamespace, expectStatus } from '../support/api.js';
import { request, startServer, type HttpResponse, type TestServer } from '../support/server.js';

const selfDescribed = [0xd9, 0xd9, 0xf7];
/** A CBOR text string (short form). */
const text = (s: string) => { const b = Buffer.from(s); return [0x78, b.length, ...b]; };

function expectBadRequest(res: HttpResponse, what: string, messagePart: string): void {
  assert.equal(res.status, 400, `${what}: ${res.status} ${res.body.slice(0, 400)}`);
  assert.equal(res.json?.kind, 'Status', res.body.slice(0, 400));
  assert.equal(res.json.reason, 'BadRequest');
  assert.ok(res.json.message.includes(messagePart), `${what}: ${res.json.message.slice(0, 400)}`);
}

describe('body limits', () => {
  let server: TestServer;
  const ns = 'limits';
  const sas = `/api/v1/namespaces/${ns}/serviceaccounts`;

  before(async () => {
    server = await startServer({ args: ['--feature-gates', 'CBORServingAndStorage=true'] });
    await createNamespace(server, ns);
  });
  after(async () => { await server.dispose(); });

  const alive = async () => expectStatus(await request(server, '/livez'), 200, 'livez');

  describe('JSON', () => {
    const nested = (depth: number) => `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"deep-${depth}"},"x":${'['.repeat(depth)}${']'.repeat(depth)}}`;

    it('refuses a body nested 10,000 levels with 400 for every verb that reads one', async () => {
      const body = nested(10_000);
      expectBadRequest(await request(server, sas, { method: 'POST', body }), 'create', "exceeded max depth");
      expectBadRequest(await request(server, `${sas}/default`, { method: 'PUT', body }), 'update', 'exceeded max depth');
      for (const type of ['application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/json-patch+json']) {
        expectBadRequest(await request(server, `${sas}/default`, { method: 'PATCH', body, headers: { 'content-type': type } }), type, 'exceeded max depth');
      }
      expectBadRequest(await request(server, `${sas}/default`, { method: 'DELETE', body: `{"kind":"DeleteOptions","x":${'['.repeat(10_000)}${']'.repeat(10_000)}}` }), 'delete options', 'exceeded max depth');
      await alive();
    });

    it('takes nesting up to the limit (1000 levels) where the schema ignores it', async () => {
      const created = await request(server, sas, { method: 'POST', body: nested(999) });
      expectStatus(created, 201, 'create with a deep unknown field');
      const patched = await request(server, `${sas}/deep-999`, {
        method: 'PATCH', headers: { 'content-type': 'application/merge-patch+json' }, body: `{"y":${'['.repeat(998)}${']'.repeat(998)}}`,
      });
      expectStatus(patched, 200, 'merge patch with a deep unknown field');
      expectBadRequest(await request(server, sas, { method: 'POST', body: nested(1000) }), 'one level more', "invalid character '[' exceeded max depth");
    });
  });

  describe('YAML', () => {
    const post = (body: string, path = sas) => request(server, path, { method: 'POST', body, headers: { 'content-type': 'application/yaml' } });

    it('refuses deep flow and block nesting with 400', async () => {
      expectBadRequest(await post(`apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: y}\nx: ${'['.repeat(10_000)}${']'.repeat(10_000)}\n`), 'flow', 'exceeded max depth');
      expectBadRequest(await post(`apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: y}\nx:\n  ${'- '.repeat(10_000)}a\n`), 'block', 'exceeded max depth');
      await alive();
    });

    it('refuses an alias that contains itself, and aliases that expand past the text', async () => {
      expectBadRequest(await post('apiVersion: v1\nkind: ServiceAccount\nmetadata: &m {name: y, labels: *m}\n'), 'cycle', 'refers to a node that contains it');
      const laughs = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
      for (let i = 1; i < 9; i++) laughs.push(`a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]`);
      expectBadRequest(await post(`apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: y}\n${laughs.join('\n')}\n`), 'alias bomb', 'excessive aliasing');
      await alive();
    });

    it('still expands a modest alias', async () => {
      const res = await post('apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: aliased\n  labels: &l {a: b}\n  annotations: *l\n');
      expectStatus(res, 201, 'create with an alias');
      assert.deepEqual([res.json.metadata.labels, res.json.metadata.annotations], [{ a: 'b' }, { a: 'b' }]);
    });
  });

  describe('CBOR', () => {
    const post = (bytes: number[]) => request(server, sas, { method: 'POST', body: Buffer.from(bytes), headers: { 'content-type': 'application/cbor' } });

    it('refuses nesting past 64 levels before building anything', async () => {
      expectBadRequest(await post([...selfDescribed, ...Array(10_000).fill(0x81), 0x00]), 'arrays', 'cbor: exceeded max nested level 64');
      expectBadRequest(await post([...selfDescribed, ...Array(100_000).fill(0xd8).flatMap((t) => [t, 0x1c]), 0x00]), 'tags', 'cbor: exceeded max nested level 64');
      await alive();
    });

    it('reads shared-reference tags 28/29 as their content, so no cycle can form', async () => {
      // metadata: 28({name: "shared", labels: 29(0)}): the reference is the number 0, a wrong type for labels
      const cyclic = [...selfDescribed, 0xa3, ...text('apiVersion'), ...text('v1'), ...text('kind'), ...text('ServiceAccount'),
        ...text('metadata'), 0xd8, 0x1c, 0xa2, ...text('name'), ...text('shared'), ...text('labels'), 0xd8, 0x1d, 0x00];
      expectBadRequest(await post(cyclic), 'cycle', 'cannot unmarshal number');
      const tagged = [...selfDescribed, 0xa3, ...text('apiVersion'), ...text('v1'), ...text('kind'), ...text('ServiceAccount'),
        ...text('metadata'), 0xd8, 0x1c, 0xa1, ...text('name'), ...text('tagged')];
      expectStatus(await post(tagged), 201, 'a tag 28 around a map');
      await alive();
    });

    it('refuses what kube-apiserver refuses: duplicate keys, undefined, bignums, non-text keys, too many elements, trailing bytes', async () => {
      const sa = (rest: number[]) => [...selfDescribed, 0xa3, ...text('apiVersion'), ...text('v1'), ...text('kind'), ...text('ServiceAccount'), ...rest];
      expectBadRequest(await post(sa([...text('kind'), ...text('ServiceAccount')])), 'duplicate', 'cbor: found duplicate map key "kind"');
      expectBadRequest(await post(sa([...text('metadata'), 0xf7])), 'undefined', 'cbor: simple value 23 is not recognized');
      expectBadRequest(await post(sa([...text('metadata'), 0xc2, 0x41, 0x01])), 'bignum', 'cbor: bignum tags are not allowed');
      expectBadRequest(await post(sa([0x01, 0x02])), 'integer key', 'cbor: invalid map key type');
      expectBadRequest(await post(sa([...text('x'), 0x99, 0x04, 0x01, ...Array(1025).fill(0)])), 'array', 'cbor: exceeded max number of elements 1024');
      expectBadRequest(await post([...encodeCbor({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'x' } }), 0x00]), 'trailing', 'extraneous data');
      expectBadRequest(await post(sa([...text('metadata'), 0xfb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0])), 'NaN', 'NaN');
    });
  });

  describe('server-side apply', () => {
    const apply = (body: string, name = 'applied') => request(server, `${sas}/${name}?fieldManager=fuzz`, {
      method: 'PATCH', body, headers: { 'content-type': 'application/apply-patch+yaml' },
    });

    it('answers wrongly typed metadata with 400, as the typed patch object cannot be made', async () => {
      const cases: Array<[string, string]> = [
        ['true', '.metadata: expected map, got &{true}'],
        ['"x"', '.metadata: expected map, got &{x}'],
        ['[1]', '.metadata: expected map, got &{[1]}'],
        ['{"labels": 1}', '.metadata.labels: expected map, got &{1}'],
        ['{"labels": {"a": 1}}', '.metadata.labels.a: expected string, got &value.valueUnstructured{Value:1}'],
        ['{"finalizers": "x"}', '.metadata.finalizers: expected list, got &{x}'],
      ];
      for (const [metadata, detail] of cases) {
        const res = await apply(`{"apiVersion":"v1","kind":"ServiceAccount","metadata":${metadata}}`);
        expectBadRequest(res, metadata, `failed to create typed patch object (`);
        assert.ok(res.json.message.endsWith(`/v1, Kind=ServiceAccount): ${detail}`), res.json.message);
      }
      await alive();
    });

    it('refuses an apply body with a self-referring alias', async () => {
      expectBadRequest(await apply('apiVersion: v1\nkind: ServiceAccount\nmetadata: &m {name: applied, labels: *m}\n'), 'cycle', 'refers to a node that contains it');
    });
  });
});
