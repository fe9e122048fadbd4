/**
 * Keys that name Object.prototype members (`__proto__`, `constructor`, `toString`,
 * `hasOwnProperty`) are plain data: unknown fields by those names are reported, valid map keys
 * by those names are stored and returned through every write (create, update, each patch type,
 * apply, and the YAML and CBOR decoders), and invalid ones are refused where Kubernetes'
 * validation refuses them. Also: managedFields sent with a create or an update.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { encodeCbor } from '../../src/codec/cbor.js';
import { secretKind } from '../../src/api/core/secret.js';
import { createNamespace, expectStatus } from '../support/api.js';
import { request, startServer, type TestServer } from '../support/server.js';

const specialKeys = ['__proto__', 'constructor', 'toString', 'hasOwnProperty'];
const b64 = (s: string) => Buffer.from(s).toString('base64');

/** A JSON object text with the given members (JSON.stringify would drop nothing, but object literals would). */
const members = (entries: Array<[string, unknown]>) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`;

/** The own keys of a map in a response, checked to be plain data. */
function keysOf(map: unknown): string[] {
  assert.ok(map && typeof map === 'object', `expected a map, got ${JSON.stringify(map)}`);
  assert.equal(Object.getPrototypeOf(map), Object.prototype);
  return Object.keys(map).sort();
}

describe('special keys', () => {
  let server: TestServer;
  const ns = 'special';
  const secrets = `/api/v1/namespaces/${ns}/secrets`;
  const sas = `/api/v1/namespaces/${ns}/serviceaccounts`;

  before(async () => {
    server = await startServer({ args: ['--feature-gates', 'CBORServingAndStorage=true'] });
    await createNamespace(server, ns);
  });
  after(async () => { await server.dispose(); });

  const get = async (path: string) => {
    const res = await request(server, path);
    expectStatus(res, 200, `get ${path}`);
    return res.json;
  };

  describe('unknown fields', () => {
    for (const key of specialKeys) {
      it(`reports ${key} as an unknown field, at the top and inside metadata`, async () => {
        const top = await request(server, `${sas}?fieldValidation=Strict`, {
          method: 'POST', body: `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"u"},${JSON.stringify(key)}:1}`,
        });
        expectStatus(top, 400, 'strict create');
        assert.equal(top.json.message, `ServiceAccount in version "v1" cannot be handled as a ServiceAccount: strict decoding error: unknown field "${key}"`);
        const nested = await request(server, `${sas}?fieldValidation=Strict`, {
          method: 'POST', body: `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"u",${JSON.stringify(key)}:{"a":1}}}`,
        });
        expectStatus(nested, 400, 'strict create, nested');
        assert.ok(nested.json.message.endsWith(`strict decoding error: unknown field "metadata.${key}"`), nested.json.message);
        const warned = await request(server, sas, {
          method: 'POST', body: `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"w-${key.replace(/_/g, '').toLowerCase()}"},${JSON.stringify(key)}:{"x":1}}`,
        });
        expectStatus(warned, 201, 'create under Warn');
        assert.equal(warned.headers.warning, `299 - "unknown field \\"${key}\\""`);
        assert.equal(Object.hasOwn(warned.json, key), false);
      });
    }
  });

  describe('Secret data keys (valid: [-._a-zA-Z0-9]+)', () => {
    it('stores and returns them through create, update, every patch type and apply', async () => {
      const data = members(specialKeys.map((k) => [k, b64(`v-${k}`)]));
      const created = await request(server, secrets, { method: 'POST', body: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":${data}}` });
      expectStatus(created, 201, 'create');
      assert.deepEqual(keysOf(created.json.data), [...specialKeys].sort());
      assert.equal(created.json.data.__proto__, b64('v-__proto__'));
      assert.deepEqual(keysOf((await get(`${secrets}/s`)).data), [...specialKeys].sort());

      // update: drop __proto__, change constructor
      const current = await get(`${secrets}/s`);
      const next = `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","resourceVersion":${JSON.stringify(current.metadata.resourceVersion)}},"data":${members([['constructor', b64('c2')], ['toString', b64('t')]])}}`;
      const updated = await request(server, `${secrets}/s`, { method: 'PUT', body: next });
      expectStatus(updated, 200, 'update');
      assert.deepEqual(keysOf(updated.json.data), ['constructor', 'toString']);

      const patches: Array<[string, string, string]> = [
        ['application/merge-patch+json', `{"data":${members([['__proto__', b64('merge')]])}}`, 'merge'],
        ['application/strategic-merge-patch+json', `{"data":${members([['__proto__', b64('strategic')]])}}`, 'strategic'],
        ['application/json-patch+json', `[{"op":"replace","path":"/data/__proto__","value":${JSON.stringify(b64('json'))}}]`, 'json'],
      ];
      for (const [type, body, value] of patches) {
        const res = await request(server, `${secrets}/s`, { method: 'PATCH', body, headers: { 'content-type': type } });
        expectStatus(res, 200, type);
        assert.deepEqual(keysOf(res.json.data), ['__proto__', 'constructor', 'toString']);
        assert.equal(res.json.data.__proto__, b64(value));
      }
      const removed = await request(server, `${secrets}/s`, { method: 'PATCH', body: '{"data":{"__proto__":null}}', headers: { 'content-type': 'application/merge-patch+json' } });
      expectStatus(removed, 200, 'merge patch removing __proto__');
      assert.deepEqual(keysOf(removed.json.data), ['constructor', 'toString']);

      const applied = await request(server, `${secrets}/a?fieldManager=m`, {
        method: 'PATCH', headers: { 'content-type': 'application/apply-patch+yaml' },
        body: `apiVersion: v1\nkind: Secret\nmetadata:\n  name: a\ndata:\n  __proto__: ${b64('p')}\n  hasOwnProperty: ${b64('h')}\n`,
      });
      expectStatus(applied, 201, 'apply');
      assert.deepEqual(keysOf(applied.json.data), ['__proto__', 'hasOwnProperty']);
      const fields = applied.json.metadata.managedFields[0].fieldsV1;
      assert.deepEqual(Object.keys(fields['f:data']).sort(), ['f:__proto__', 'f:hasOwnProperty']);
      const reapplied = await request(server, `${secrets}/a?fieldManager=m`, {
        method: 'PATCH', headers: { 'content-type': 'application/apply-patch+yaml' },
        body: `apiVersion: v1\nkind: Secret\nmetadata:\n  name: a\ndata:\n  __proto__: ${b64('q')}\n`,
      });
      expectStatus(reapplied, 200, 'apply again without hasOwnProperty');
      assert.deepEqual(reapplied.json.data, JSON.parse(`{"__proto__":${JSON.stringify(b64('q'))}}`));
    });

    it('folds stringData keys of those names into data', async () => {
      const res = await request(server, secrets, {
        method: 'POST', body: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"sd"},"stringData":${members([['__proto__', 'x'], ['constructor', 'y']])}}`,
      });
      expectStatus(res, 201, 'create with stringData');
      assert.deepEqual(keysOf(res.json.data), ['__proto__', 'constructor']);
      assert.equal(res.json.data.__proto__, b64('x'));
    });

    it('decodes them from YAML and CBOR, and writes them in YAML', async () => {
      const yaml = await request(server, secrets, {
        method: 'POST', headers: { 'content-type': 'application/yaml' },
        body: `apiVersion: v1\nkind: Secret\nmetadata:\n  name: y\ndata:\n  __proto__: ${b64('y')}\n  toString: ${b64('t')}\n`,
      });
      expectStatus(yaml, 201, 'YAML create');
      assert.deepEqual(keysOf(yaml.json.data), ['__proto__', 'toString']);
      const object = JSON.parse(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"c"},"data":{"__proto__":${JSON.stringify(b64('c'))}}}`);
      const cbor = await request(server, secrets, { method: 'POST', headers: { 'content-type': 'application/cbor' }, body: encodeCbor(object, secretKind.schema) });
      expectStatus(cbor, 201, 'CBOR create');
      assert.deepEqual(keysOf(cbor.json.data), ['__proto__']);
      const asYaml = await request(server, `${secrets}/c`, { headers: { accept: 'application/yaml' } });
      assert.match(asYaml.body, /\n {2}__proto__: Yw==\n/);
    });
  });

  describe('label and annotation keys (qualified names)', () => {
    it('refuses __proto__ as a label or annotation key with 422, as its name part is no qualified name', async () => {
      for (const field of ['labels', 'annotations']) {
        const res = await request(server, sas, { method: 'POST', body: `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"l","${field}":{"__proto__":"x"}}}` });
        expectStatus(res, 422, `__proto__ ${field}`);
        assert.equal(res.json.details.causes[0].field, `metadata.${field}`);
        assert.match(res.json.message, /Invalid value: "__proto__": name part must consist of alphanumeric characters/);
        const patched = await request(server, `${sas}/default`, { method: 'PATCH', body: `{"metadata":{"${field}":{"__proto__":"x"}}}`, headers: { 'content-type': 'application/merge-patch+json' } });
        expectStatus(patched, 422, `__proto__ ${field} by merge patch`);
      }
    });

    it('stores constructor, toString and hasOwnProperty labels, and selects by them exactly', async () => {
      const created = await request(server, sas, {
        method: 'POST', body: '{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"lab","labels":{"constructor":"a","toString":"b"},"annotations":{"hasOwnProperty":"c"}}}',
      });
      expectStatus(created, 201, 'create with labels');
      assert.deepEqual(keysOf(created.json.metadata.labels), ['constructor', 'toString']);
      const patched = await request(server, `${sas}/lab`, { method: 'PATCH', body: '{"metadata":{"labels":{"hasOwnProperty":"d","constructor":null}}}', headers: { 'content-type': 'application/strategic-merge-patch+json' } });
      expectStatus(patched, 200, 'strategic patch of labels');
      assert.deepEqual(patched.json.metadata.labels, { toString: 'b', hasOwnProperty: 'd' });
      const json = await request(server, `${sas}/lab`, { method: 'PATCH', body: '[{"op":"add","path":"/metadata/labels/constructor","value":"e"}]', headers: { 'content-type': 'application/json-patch+json' } });
      expectStatus(json, 200, 'json patch of labels');
      assert.equal(json.json.metadata.labels.constructor, 'e');
      const selected = await request(server, `${sas}?labelSelector=constructor`);
      expectStatus(selected, 200, 'list by label');
      assert.deepEqual(selected.json.items.map((i: { metadata: { name: string } }) => i.metadata.name), ['lab']);
      const none = await request(server, `${sas}?labelSelector=valueOf`);
      assert.deepEqual(none.json.items, []);
    });
  });

  describe('managedFields sent by the client', () => {
    const entry = (manager: string, fields: Record<string, unknown>, operation = 'Update') =>
      ({ manager, operation, apiVersion: 'v1', time: '2020-01-01T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: fields });

    it('keeps valid entries on create for the fields the object does not have; the creator owns the rest', async () => {
      const sent = [entry('other', { 'f:metadata': { 'f:labels': { 'f:gone': {}, 'f:kept': {} } } })];
      const res = await request(server, sas, {
        method: 'POST', headers: { 'user-agent': 'creator/1' },
        body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'mf', labels: { kept: 'x' }, managedFields: sent } },
      });
      expectStatus(res, 201, 'create with managedFields');
      const byManager = Object.fromEntries(res.json.metadata.managedFields.map((e: { manager: string }) => [e.manager, e]));
      assert.deepEqual(Object.keys(byManager).sort(), ['creator', 'other']);
      assert.deepEqual(byManager.other.fieldsV1, { 'f:metadata': { 'f:labels': { 'f:gone': {} } } });
      assert.equal(byManager.other.time, '2020-01-01T00:00:00Z');
      assert.deepEqual(byManager.creator.fieldsV1, { 'f:metadata': { 'f:labels': { '.': {}, 'f:kept': {} } } });
    });

    it('falls back to the live entries when the sent ones cannot be decoded, and resets them with an empty list', async () => {
      const bad = await request(server, sas, {
        method: 'POST', headers: { 'user-agent': 'creator/1' },
        body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'mf2', labels: { a: 'b' }, managedFields: [{ ...entry('x', {}), operation: 'Bogus' }] } },
      });
      expectStatus(bad, 201, 'create with undecodable managedFields');
      assert.deepEqual(bad.json.metadata.managedFields.map((e: { manager: string }) => e.manager), ['creator']);
      const reset = await request(server, `${sas}/mf2`, { method: 'PATCH', body: '{"metadata":{"managedFields":[]}}', headers: { 'content-type': 'application/merge-patch+json' } });
      expectStatus(reset, 200, 'reset managedFields');
      assert.equal(reset.json.metadata.managedFields, undefined);
    });

    it('refuses a stored entry Kubernetes validation refuses (manager longer than 128 bytes)', async () => {
      const res = await request(server, sas, {
        method: 'POST', body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'mf3', labels: { a: 'b' }, managedFields: [entry('m'.repeat(129), { 'f:metadata': { 'f:labels': { 'f:z': {} } } })] } },
      });
      expectStatus(res, 422, 'too long a manager');
      assert.equal(res.json.details.causes[0].field, 'metadata.managedFields[0].manager');
    });
  });
});
