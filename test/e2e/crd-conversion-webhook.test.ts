/**
 * A CRD with two versions converted by webhook: the test serves the conversion webhook over HTTPS
 * on loopback (its own CA in the CRD's caBundle) and renames a field between versions; objects
 * created in either version read back in both, lists convert in one review, metadata beyond labels
 * and annotations stays the server's, and a failing webhook answers 500 with Kubernetes' wording.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { waitEstablished } from '../support/crds.js';
import { servingCert, testCa } from '../support/certs.js';
import { startInProcess, type InProcessServer } from '../support/in-process.js';
import { request, type TestServer } from '../support/server.js';
import { request as httpsRequest } from 'node:https';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** The JSON lines of a watch until `until` holds (or 10 s pass). */
function watchLines(server: TestServer, path: string, until: (lines: any[]) => boolean): Promise<any[]> {
  return new Promise((resolve, reject) => {
    const lines: any[] = [];
    const req = httpsRequest(`${server.url}${path}`, { ca: server.admin.ca, cert: server.admin.cert, key: server.admin.key, agent: false }, (res) => {
      let rest = '';
      const timer = setTimeout(() => { req.destroy(); reject(new Error(`watch saw only ${JSON.stringify(lines)}`)); }, 10_000);
      res.on('data', (c: Buffer) => {
        rest += c.toString('utf8');
        const parts = rest.split('\n');
        rest = parts.pop() ?? '';
        for (const p of parts) if (p) lines.push(JSON.parse(p));
        if (until(lines)) { clearTimeout(timer); req.destroy(); resolve(lines); }
      });
    });
    req.on('error', () => { /* destroyed on purpose */ });
    req.end();
  });
}

/** v1 says spec.hostPort "host:port"; v2 says spec.host and spec.port. */
function convert(obj: any, to: string): any {
  const out = structuredClone(obj);
  const spec = out.spec ?? {};
  if (to === 'conv.example.com/v2' && spec.hostPort !== undefined) {
    const [host, port] = String(spec.hostPort).split(':');
    delete spec.hostPort;
    spec.host = host;
    spec.port = Number(port);
  } else if (to === 'conv.example.com/v1' && spec.host !== undefined) {
    spec.hostPort = `${spec.host}:${spec.port}`;
    delete spec.host;
    delete spec.port;
  }
  out.apiVersion = to;
  out.metadata = { ...out.metadata, uid: 'changed-by-webhook', labels: { ...(out.metadata.labels ?? {}), converted: 'true' } };
  return out;
}

describe('conversion webhook', () => {
  let h: InProcessServer;
  let server: TestServer;
  let webhook: Server;
  const reviews: any[] = [];
  let failing = false;

  before(async () => {
    const ca = testCa('conversion');
    const serving = servingCert('conversion-webhook', ca);
    webhook = createServer({ cert: serving.cert, key: serving.key }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        reviews.push(review);
        const { uid, desiredAPIVersion, objects } = review.request;
        const response = failing
          ? { uid, result: { status: 'Failure', message: 'the converter is down' } }
          : { uid, convertedObjects: objects.map((o: any) => convert(o, desiredAPIVersion)), result: { status: 'Success' } };
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response }));
      });
    });
    await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
    h = await startInProcess();
    server = h.server;
    const port = (webhook.address() as AddressInfo).port;
    const schema = (props: Record<string, unknown>) => ({ openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: props } } } });
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'endpoints.conv.example.com' },
      spec: {
        group: 'conv.example.com', scope: 'Cluster', names: { plural: 'endpoints', kind: 'Endpoint' },
        conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: `https://127.0.0.1:${port}/convert`, caBundle: Buffer.from(ca.pem).toString('base64') } } },
        versions: [
          { name: 'v1', served: true, storage: true, schema: schema({ hostPort: { type: 'string' } }) },
          { name: 'v2', served: true, storage: false, schema: schema({ host: { type: 'string' }, port: { type: 'integer', default: 80 } }) },
        ],
      },
    };
    const res = await request(server, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { method: 'POST', body: crd });
    assert.equal(res.status, 201, res.body);
    await waitEstablished(server, 'endpoints.conv.example.com');
  });
  after(async () => {
    await h?.dispose();
    await new Promise((resolve) => webhook?.close(resolve));
  });

  it('converts objects written in the served version to storage and back', async () => {
    const created = await request(server, '/apis/conv.example.com/v2/endpoints', { method: 'POST', body: { apiVersion: 'conv.example.com/v2', kind: 'Endpoint', metadata: { name: 'a' }, spec: { host: 'db', port: 5432 } } });
    assert.equal(created.status, 201, created.body);
    assert.deepEqual(created.json.spec, { host: 'db', port: 5432 });
    assert.notEqual(created.json.metadata.uid, 'changed-by-webhook', 'metadata other than labels and annotations is the server\'s');
    assert.equal(created.json.metadata.labels.converted, 'true', 'labels may change');
    const v1 = await request(server, '/apis/conv.example.com/v1/endpoints/a');
    assert.equal(v1.json.apiVersion, 'conv.example.com/v1');
    assert.deepEqual(v1.json.spec, { hostPort: 'db:5432' });
    const review = reviews.find((r) => r.request.desiredAPIVersion === 'conv.example.com/v1');
    assert.equal(review.apiVersion, 'apiextensions.k8s.io/v1');
    assert.equal(review.kind, 'ConversionReview');
  });

  it('converts stored objects for reads of the other version, a list in one review, defaulting after conversion', async () => {
    assert.equal((await request(server, '/apis/conv.example.com/v1/endpoints', { method: 'POST', body: { apiVersion: 'conv.example.com/v1', kind: 'Endpoint', metadata: { name: 'b' }, spec: { hostPort: 'web:8080' } } })).status, 201);
    assert.equal((await request(server, '/apis/conv.example.com/v1/endpoints', { method: 'POST', body: { apiVersion: 'conv.example.com/v1', kind: 'Endpoint', metadata: { name: 'c' }, spec: {} } })).status, 201);
    const before = reviews.length;
    const listed = await request(server, '/apis/conv.example.com/v2/endpoints');
    assert.equal(listed.status, 200, listed.body);
    assert.deepEqual(listed.json.items.map((i: any) => [i.apiVersion, i.metadata.name, i.spec]), [
      ['conv.example.com/v2', 'a', { host: 'db', port: 5432 }],
      ['conv.example.com/v2', 'b', { host: 'web', port: 8080 }],
      ['conv.example.com/v2', 'c', { port: 80 }],
    ]);
    assert.ok(reviews.length - before <= 1, 'one review for the list');
    const patched = await request(server, '/apis/conv.example.com/v2/endpoints/b', { method: 'PATCH', body: { spec: { port: 9090 } }, headers: { 'content-type': 'application/merge-patch+json' } });
    assert.equal(patched.status, 200, patched.body);
    assert.deepEqual((await request(server, '/apis/conv.example.com/v1/endpoints/b')).json.spec, { hostPort: 'web:9090' });
  });

  it('watches the webhook-converted version: initial events and changes converted, bookmarks renamed', async () => {
    const seen = watchLines(server, '/apis/conv.example.com/v2/endpoints?watch=1&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=5',
      (lines) => lines.some((l) => l.type === 'MODIFIED' && l.object.metadata.name === 'a'));
    await new Promise((r) => setTimeout(r, 300));
    const patched = await request(server, '/apis/conv.example.com/v1/endpoints/a', { method: 'PATCH', body: { spec: { hostPort: 'db:6543' } }, headers: { 'content-type': 'application/merge-patch+json' } });
    assert.equal(patched.status, 200, patched.body);
    const lines = await seen;
    const added = lines.filter((l) => l.type === 'ADDED').map((l) => [l.object.apiVersion, l.object.metadata.name, l.object.spec]);
    assert.deepEqual(added.find((a) => a[1] === 'a'), ['conv.example.com/v2', 'a', { host: 'db', port: 5432 }]);
    const bookmark = lines.find((l) => l.type === 'BOOKMARK');
    assert.equal(bookmark?.object.apiVersion, 'conv.example.com/v2');
    const modified = lines.find((l) => l.type === 'MODIFIED');
    assert.deepEqual([modified.object.apiVersion, modified.object.spec], ['conv.example.com/v2', { host: 'db', port: 6543 }]);
  });

  it('answers 500 with Kubernetes\' wording when the webhook fails', async () => {
    failing = true;
    try {
      assert.equal((await request(server, '/apis/conv.example.com/v1/endpoints', { method: 'POST', body: { apiVersion: 'conv.example.com/v1', kind: 'Endpoint', metadata: { name: 'd' }, spec: { hostPort: 'x:1' } } })).status, 201);
      const res = await request(server, '/apis/conv.example.com/v2/endpoints/d');
      assert.equal(res.status, 500, res.body);
      assert.equal(res.json.message, 'conversion webhook for conv.example.com/v1, Kind=Endpoint returned failure: the converter is down');
    } finally {
      failing = false;
    }
  });
});
