/**
 * Request data that reaches the wire or the router: Warning headers carrying any characters a
 * client sent, and paths routed exactly as sent (no `.`/`..` resolution), with Kubernetes' 400 for
 * names that cannot be path segments and 405 for non-GET methods on the legacy /watch/ paths.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createNamespace, expectStatus } from '../support/api.js';
import { request, request2, startServer, type HttpResponse, type RequestOptions, type TestServer } from '../support/server.js';

/** A Warning header's value as bytes on the wire (Node hands header bytes over as Latin-1 characters). */
function warningTexts(res: HttpResponse): string[] {
  const raw = res.headers.warning;
  const values = raw === undefined ? [] : Array.isArray(raw) ? raw : raw.split(/, (?=299 )/);
  return values.map((v) => Buffer.from(String(v), 'latin1').toString('utf8'));
}

function expectBadName(res: HttpResponse, message: string): void {
  expectStatus(res, 400, message);
  assert.equal(res.json?.kind, 'Status', res.body);
  assert.equal(res.json.reason, 'BadRequest');
  assert.equal(res.json.message, message);
}

describe('request target and response headers', () => {
  let server: TestServer;
  const ns = 'target-ns';

  before(async () => {
    server = await startServer();
    await createNamespace(server, ns);
    const secret = await request(server, `/api/v1/namespaces/${ns}/secrets`, { method: 'POST', body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'keep' } } });
    expectStatus(secret, 201, 'create secret');
  });
  after(async () => { await server.dispose(); });

  describe('Warning headers', () => {
    const body = (field: string) => `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"w-${Buffer.from(field).toString('hex').slice(0, 12)}"},${JSON.stringify(field)}:1}`;

    it('echoes an unknown field above U+00FF as UTF-8 bytes, over HTTP/1.1 and HTTP/2, and the server lives on', async () => {
      for (const send of [request, request2]) {
        const field = send === request ? 'Ā' : 'ĀĀ';
        const res = await send(server, `/api/v1/namespaces/${ns}/serviceaccounts`, { method: 'POST', body: body(field) });
        expectStatus(res, 201, 'create with unknown field');
        assert.deepEqual(warningTexts(res), [`299 - "unknown field \\"${field}\\""`]);
      }
      const live = await request(server, '/livez');
      expectStatus(live, 200, 'livez');
    });

    it('quotes control characters in field names as Go does, so the header stays valid', async () => {
      const res = await request(server, `/api/v1/namespaces/${ns}/serviceaccounts`, { method: 'POST', body: body('a\u0001\u0085"\\b') });
      expectStatus(res, 201, 'create with a control character in an unknown field');
      assert.deepEqual(warningTexts(res), ['299 - "unknown field \\"a\\\\x01\\\\u0085\\\\\\"\\\\\\\\b\\""']);
    });

    it('is a strict decoding error with the same quoting under fieldValidation=Strict', async () => {
      const res = await request(server, `/api/v1/namespaces/${ns}/serviceaccounts?fieldValidation=Strict`, { method: 'POST', body: body('Ā\u0007') });
      expectBadName(res, 'ServiceAccount in version "v1" cannot be handled as a ServiceAccount: strict decoding error: unknown field "Ā\\a"');
    });
  });

  describe('paths are routed as sent', () => {
    const send = (path: string, o: RequestOptions = {}) => request(server, path, { ...o, asSent: true });

    const dotNames: Array<[string, string]> = [['..', '..'], ['%2e%2e', '..'], ['.%2e', '..'], ['%2E.', '..'], ['.', '.'], ['%2e', '.']];

    it('refuses `.` and `..` as names for every verb instead of resolving them', async () => {
      for (const [sent, name] of dotNames) {
        const message = `Name parameter invalid: "${name}": may not be '${name}'`;
        const path = `/api/v1/namespaces/${ns}/secrets/${sent}`;
        expectBadName(await send(path, { method: 'DELETE' }), message);
        expectBadName(await send(path), message);
        expectBadName(await send(path, { method: 'PUT', body: { apiVersion: 'v1', kind: 'Secret', metadata: { name } } }), message);
        expectBadName(await send(path, { method: 'PATCH', body: {}, headers: { 'content-type': 'application/merge-patch+json' } }), message);
      }
      const still = await send(`/api/v1/namespaces/${ns}`);
      expectStatus(still, 200, 'the namespace is still there');
      assert.equal(still.json.metadata.deletionTimestamp, undefined);
      expectStatus(await send(`/api/v1/namespaces/${ns}/secrets/keep`), 200, 'its secret is still there');
    });

    it('refuses `..` on subresources, cluster-scoped objects and the legacy watch paths', async () => {
      const message = 'Name parameter invalid: "..": may not be \'..\'';
      expectBadName(await send('/api/v1/namespaces/%2e%2e/status'), message);
      expectBadName(await send('/api/v1/namespaces/..', { method: 'DELETE' }), message);
      expectBadName(await send(`/api/v1/watch/namespaces/${ns}/secrets/..`), message);
      expectBadName(await send(`/api/v1/namespaces/${ns}/secrets/..?watch=true`), message);
    });

    it('refuses names with an escaped / or %, and a namespace segment of ..', async () => {
      expectBadName(await send(`/api/v1/namespaces/${ns}/secrets/a%2Fb`), 'Name parameter invalid: "a/b": may not contain \'/\'');
      expectBadName(await send(`/api/v1/namespaces/${ns}/secrets/a%25b`), 'Name parameter invalid: "a%b": may not contain \'%\'');
      expectBadName(await send(`/api/v1/namespaces/${ns}/secrets/%2F%25`, { method: 'DELETE' }), 'Name parameter invalid: "/%": may not contain \'/\';may not contain \'%\'');
      expectBadName(await send('/api/v1/namespaces/%2e%2e/secrets'), 'Namespace parameter invalid: "..": may not be \'..\'');
      expectBadName(await send('/api/v1/namespaces/./secrets/keep', { method: 'DELETE' }), 'Namespace parameter invalid: ".": may not be \'.\'');
      expectStatus(await send(`/api/v1/namespaces/${ns}/secrets/keep`), 200, 'the secret survived');
    });

    it('answers a malformed escape with a 400 Status', async () => {
      const res = await send(`/api/v1/namespaces/${ns}/secrets/a%zz`);
      expectBadName(res, `parse "/api/v1/namespaces/${ns}/secrets/a%zz": invalid URL escape "%zz"`);
    });

    it('decodes escaped names that are valid', async () => {
      const res = await send(`/api/v1/namespaces/${ns}/secrets/%6beep`);
      expectStatus(res, 200, 'get an escaped name');
      assert.equal(res.json.metadata.name, 'keep');
    });

    it('serves the legacy /watch/ paths for GET only', async () => {
      for (const method of ['DELETE', 'POST', 'PUT', 'PATCH']) {
        const res = await send(`/api/v1/watch/namespaces/${ns}/secrets/keep`, { method, body: method === 'DELETE' ? undefined : {} });
        expectStatus(res, 405, `${method} on a legacy watch path`);
        assert.equal(res.json.reason, 'MethodNotAllowed');
      }
      const collection = await send(`/api/v1/watch/namespaces/${ns}/secrets`, { method: 'DELETE' });
      expectStatus(collection, 405, 'DELETE on a legacy watch collection');
      expectStatus(await send(`/api/v1/namespaces/${ns}/secrets/keep`), 200, 'nothing was deleted');
    });
  });
});
