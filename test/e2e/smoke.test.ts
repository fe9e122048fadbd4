import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request, request2, startServer, type TestServer } from '../support/server.js';

describe('server smoke', () => {
  let server: TestServer;
  before(async () => { server = await startServer(); });
  after(async () => { await server.dispose(); });

  it('serves the bootstrap namespaces over HTTP/1.1 and HTTP/2', async () => {
    for (const send of [request, request2]) {
      const res = await send(server, '/api/v1/namespaces');
      assert.equal(res.status, 200);
      assert.equal(res.json.kind, 'NamespaceList');
      const names = res.json.items.map((n: { metadata: { name: string } }) => n.metadata.name);
      assert.deepEqual(names, ['default', 'orch-node-lease', 'orch-public', 'orch-system']);
    }
  });
});
