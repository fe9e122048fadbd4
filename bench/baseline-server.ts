/**
 * The CRUD baseline (forked by bench/scenarios/crud.ts): a bare Node HTTPS server with the same
 * serving certificate and client-certificate check as ours, that reads each request body and
 * answers create, get, update and delete of a ServiceAccount with a canned body of the size ours
 * sends. No routing, storage, validation or serialization: what is left is Node's HTTP and TLS
 * cost, the floor under anything written in Node.
 */
import { createServer } from 'node:https';

interface Start { t: 'start'; cert: string; key: string; ca: string }

/** A ServiceAccount as our server answers for bench/harness's serviceAccountBody (about 500 bytes). */
const canned = JSON.stringify({
  kind: 'ServiceAccount', apiVersion: 'v1',
  metadata: {
    name: 'crud-0-000000', namespace: 'crud', uid: '0e6f6c1e-3d0c-4f5a-9a53-2d8b3c1f7a10', resourceVersion: '123456',
    creationTimestamp: '2026-11-22T00:00:00Z', labels: { app: 'bench', shard: '0' },
    managedFields: [{
      manager: 'node', operation: 'Update', apiVersion: 'v1', time: '2026-11-22T00:00:00Z', fieldsType: 'FieldsV1',
      fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {}, 'f:shard': {} } }, 'f:secrets': { 'k:{"name":"token-0"}': {} } },
    }],
  },
  secrets: [{ name: 'token-0' }],
});
const body = Buffer.from(canned);

process.once('message', (m: Start) => {
  const server = createServer({ cert: m.cert, key: m.key, ca: m.ca, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    req.resume(); // read the body as any server must
    req.on('end', () => {
      res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json', 'content-length': body.length });
      res.end(body);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    process.send?.({ t: 'listening', port: (server.address() as { port: number }).port });
  });
  process.on('disconnect', () => process.exit(0));
});
