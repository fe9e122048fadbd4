/**
 * The codec libraries are loaded on first use (src/codec/libraries.ts): a server whose clients
 * speak JSON (creates, lists, a watch and its events) holds neither protobufjs nor cbor-x; the
 * first Protobuf or CBOR request loads its library, and is answered in that encoding.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { InProcessServer } from '../support/in-process.js';
import { watchModuleLoads } from '../support/loaded-modules.js';

const modules = watchModuleLoads();
let h: InProcessServer;

before(async () => {
  const { startInProcess } = await import('../support/in-process.js');
  h = await startInProcess(['--feature-gates', 'CBORServingAndStorage=true']);
});
after(async () => { await h?.dispose(); });

test('JSON clients load no binary codec; the first Protobuf and CBOR requests load theirs', async () => {
  const { request } = await import('../support/server.js');
  const { raw, watchUntil } = await import('../support/raw.js');
  const created = await request(h.server, '/api/v1/namespaces/default/serviceaccounts', { method: 'POST', body: { metadata: { name: 'json-only' } } });
  assert.equal(created.status, 201, created.body);
  const watch = watchUntil(h.server, '/api/v1/namespaces/default/serviceaccounts?watch=1&resourceVersion=0', 'application/json', (b) => b.includes('"name":"later"'));
  await watch.opened;
  assert.equal((await request(h.server, '/api/v1/namespaces/default/serviceaccounts', { method: 'POST', body: { metadata: { name: 'later' } } })).status, 201);
  const events = (await watch.done).toString();
  assert.match(events, /"type":"ADDED","object":\{"kind":"ServiceAccount".*"name":"json-only"/);
  assert.equal((await request(h.server, '/api/v1/namespaces/default/serviceaccounts')).status, 200);
  assert.equal(await modules.loaded('/protobufjs/'), false, 'JSON requests and a JSON watch loaded protobufjs');
  assert.equal(await modules.loaded('/cbor-x/'), false, 'JSON requests and a JSON watch loaded cbor-x');

  const pb = await raw(h.server, '/api/v1/namespaces/default/serviceaccounts/json-only', { accept: 'application/vnd.kubernetes.protobuf' });
  assert.equal(pb.status, 200);
  assert.deepEqual([...pb.body.subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00], 'a Protobuf answer starts with the k8s magic');
  assert.equal(await modules.loaded('/protobufjs/'), true);

  const cbor = await raw(h.server, '/api/v1/namespaces/default/serviceaccounts/json-only', { accept: 'application/cbor' });
  assert.equal(cbor.status, 200);
  assert.deepEqual([...cbor.body.subarray(0, 3)], [0xd9, 0xd9, 0xf7], 'a CBOR answer starts with the self-described tag');
  assert.equal(await modules.loaded('/cbor-x/'), true);
});
