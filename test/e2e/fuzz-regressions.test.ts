/**
 * Counterexamples the property suites (test/fuzz) found, each kept as a plain test of the
 * answer kube-apiserver gives and of the server staying up.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createNamespace, expectStatus } from '../support/api.js';
import { request, startServer, type TestServer } from '../support/server.js';

describe('fuzz regressions', () => {
  let server: TestServer;
  const ns = 'regress';

  before(async () => {
    server = await startServer();
    await createNamespace(server, ns);
  });
  after(async () => { await server.dispose(); });

  const alive = async () => expectStatus(await request(server, '/livez'), 200, 'livez');

  it('a bad timeout parameter is 400 before the request runs (it used to leave a rejection unhandled and end the process)', async () => {
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'timed' } };
    // found as: POST /api/v1/secrets?timeout=... (405 from the handler, raced by the timeout's 400)
    const refused = await request(server, '/api/v1/secrets?timeout=zz', { method: 'POST', body: secret });
    expectStatus(refused, 400, 'bad timeout on a refused method');
    assert.equal(refused.json.message, 'invalid timeout specified in the request URL: time: invalid duration "zz"');
    await alive();
    const create = await request(server, `/api/v1/namespaces/${ns}/secrets?timeout=1x`, { method: 'POST', body: secret });
    expectStatus(create, 400, 'bad timeout on a create');
    expectStatus(await request(server, `/api/v1/namespaces/${ns}/secrets/timed`), 404, 'nothing was created');
    await alive();
  });
});
