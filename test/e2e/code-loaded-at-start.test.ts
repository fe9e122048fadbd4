/**
 * A running server does not read its code again: it runs on, writes and protobuf watches (the
 * writer worker and the encoder pool) included, after the dist/ it was started from is deleted,
 * as a build or `npm test` in the same checkout may rewrite it under a running server.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { request, startServer, type TestServer } from '../support/server.js';

/** the checkout: dist/test/e2e/ is three levels below it */
const checkout = fileURLToPath(new URL('../../..', import.meta.url));

/** counts the length-prefixed frames of a protobuf watch until `want` have arrived */
function protobufFrames(server: TestServer, path: string, want: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`${server.url}${path}`, {
      ca: server.admin.ca, cert: server.admin.cert, key: server.admin.key, agent: false,
      headers: { accept: 'application/vnd.kubernetes.protobuf;stream=watch' },
    }, (res) => {
      if (res.statusCode !== 200) { reject(new Error(`watch answered ${res.statusCode}`)); return; }
      let buf = Buffer.alloc(0);
      let frames = 0;
      res.on('data', (chunk: Buffer) => {
        buf = Buffer.concat([buf, chunk]);
        while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
          buf = buf.subarray(4 + buf.readUInt32BE(0));
          if (++frames === want) { req.destroy(); resolve(frames); }
        }
      });
      res.on('end', () => reject(new Error(`the watch ended after ${frames} of ${want} frames`)));
    });
    req.on('error', (err) => { if (!req.destroyed) reject(err); });
    req.end();
  });
}

describe('a running server and the files it started from', () => {
  const copy = mkdtempSync(join(tmpdir(), 'orch-copy-'));
  let server: TestServer | undefined;
  after(async () => {
    await server?.dispose();
    rmSync(copy, { recursive: true, force: true });
  });

  it('keeps serving writes and protobuf watches after its dist/ is deleted', async () => {
    // a checkout of its own: the compiled server, package.json (its module type) and the dependencies
    cpSync(join(checkout, 'dist', 'src'), join(copy, 'dist', 'src'), { recursive: true });
    cpSync(join(checkout, 'dist', 'workers'), join(copy, 'dist', 'workers'), { recursive: true });
    cpSync(join(checkout, 'package.json'), join(copy, 'package.json'));
    symlinkSync(join(checkout, 'node_modules'), join(copy, 'node_modules'));
    server = await startServer({ script: join(copy, 'dist', 'src', 'cli', 'main.js') });

    rmSync(join(copy, 'dist'), { recursive: true });

    const ns = await request(server, '/api/v1/namespaces', { method: 'POST', body: { metadata: { name: 'after-rm' } } });
    assert.equal(ns.status, 201, ns.body);
    const watching = protobufFrames(server, '/api/v1/namespaces/after-rm/secrets?watch=true', 2);
    for (const name of ['one', 'two']) {
      const created = await request(server, '/api/v1/namespaces/after-rm/secrets', { method: 'POST', body: { metadata: { name } } });
      assert.equal(created.status, 201, created.body);
    }
    assert.equal(await watching, 2, 'both events arrive, encoded by the pool');
    assert.equal((await request(server, '/readyz')).status, 200);
    assert.equal(await server.stop(), 0, server.logs.join('\n'));
  });
});
