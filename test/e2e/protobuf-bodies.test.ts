/**
 * Protobuf request bodies as client-go's typed clients send them (Content-Type
 * application/vnd.kubernetes.protobuf): DeleteOptions on Delete and DeleteCollection, and objects on
 * Create and Update. The bytes are built by protoc from a .proto text, independently of the server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createNamespace, createSA, type Obj } from '../support/api.js';
import { request, startServer, type TestServer } from '../support/server.js';
import { at, decodeRaw, protocEncode, raw, textBytes } from '../support/wire.js';

/** runtime.Unknown and the metav1 messages client-go writes, as in Kubernetes' generated.proto. */
const proto = `
syntax = "proto2";
package k8s;
message TypeMeta { optional string apiVersion = 1; optional string kind = 2; }
message Unknown { optional TypeMeta typeMeta = 1; optional bytes raw = 2; optional string contentEncoding = 3; optional string contentType = 4; }
message Preconditions { optional string uid = 1; optional string resourceVersion = 2; }
message DeleteOptions {
  optional int64 gracePeriodSeconds = 1;
  optional Preconditions preconditions = 2;
  optional bool orphanDependents = 3;
  optional string propagationPolicy = 4;
  repeated string dryRun = 5;
}
message ObjectMeta { optional string name = 1; optional string namespace = 3; optional string resourceVersion = 6; map<string, string> labels = 11; }
message LocalObjectReference { optional string name = 1; }
message ServiceAccount { optional ObjectMeta metadata = 1; repeated LocalObjectReference imagePullSecrets = 3; optional bool automountServiceAccountToken = 4; }
`;

const magic = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** "k8s\0" + Unknown{typeMeta, raw, contentEncoding: "", contentType: ""}, as gogo writes the envelope. */
function body(apiVersion: string, kind: string, message: string, text: string): Buffer {
  const inner = protocEncode(proto, `k8s.${message}`, text);
  const unknown = protocEncode(proto, 'k8s.Unknown', `typeMeta { apiVersion: "${apiVersion}" kind: "${kind}" } raw: ${textBytes(inner)} contentEncoding: "" contentType: ""`);
  return Buffer.concat([magic, unknown]);
}
const deleteOptions = (text: string) => body('v1', 'DeleteOptions', 'DeleteOptions', text);
const protobuf = { 'content-type': 'application/vnd.kubernetes.protobuf', accept: 'application/json' };
const ns = 'pb-bodies';
const path = `/api/v1/namespaces/${ns}/serviceaccounts`;

describe('Protobuf request bodies (client-go)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await createNamespace(server, ns);
  });
  after(async () => { await server?.dispose(); });

  it('the DeleteOptions bytes are what protoc --decode_raw reads back', () => {
    const bytes = deleteOptions('gracePeriodSeconds: 0 preconditions { uid: "u" resourceVersion: "7" } propagationPolicy: "Background" dryRun: "All"');
    assert.deepEqual([...bytes.subarray(0, 4)], [...magic]);
    const unknown = decodeRaw(bytes.subarray(4));
    assert.deepEqual([...unknown.keys()], [1, 2, 3, 4]);
    assert.equal(at(unknown, 1, 1), 'v1');
    assert.equal(at(unknown, 1, 2), 'DeleteOptions');
    assert.equal(at(unknown, 2, 1), '0');            // gracePeriodSeconds = 1, present though zero
    assert.equal(at(unknown, 2, 2, 1), 'u');         // preconditions = 2 {uid = 1
    assert.equal(at(unknown, 2, 2, 2), '7');         //   resourceVersion = 2}
    assert.equal(at(unknown, 2, 4), 'Background');   // propagationPolicy = 4
    assert.equal(at(unknown, 2, 5), 'All');          // dryRun = 5
  });

  it('Delete with gracePeriodSeconds and preconditions: a wrong uid or resourceVersion is 409, the right ones delete', async () => {
    const sa: Obj = await createSA(server, ns, 'gone');
    const wrongUid = await raw(server, `${path}/gone`, protobuf, 'DELETE', deleteOptions('gracePeriodSeconds: 0 preconditions { uid: "not-it" }'));
    assert.equal(wrongUid.status, 409, wrongUid.body.toString());
    assert.match(JSON.parse(wrongUid.body.toString()).message, /the UID in the precondition \(not-it\) does not match the UID in record/);
    const wrongRv = await raw(server, `${path}/gone`, protobuf, 'DELETE', deleteOptions('preconditions { resourceVersion: "1" }'));
    assert.equal(wrongRv.status, 409, wrongRv.body.toString());
    assert.match(JSON.parse(wrongRv.body.toString()).message, /the ResourceVersion in the precondition \(1\) does not match/);
    const ok = await raw(server, `${path}/gone`, protobuf, 'DELETE',
      deleteOptions(`gracePeriodSeconds: 0 preconditions { uid: "${sa.metadata.uid}" resourceVersion: "${sa.metadata.resourceVersion}" } propagationPolicy: "Background"`));
    assert.equal(ok.status, 200, ok.body.toString());
    assert.equal((await request(server, `${path}/gone`)).status, 404);
  });

  it('dryRun in the body deletes nothing', async () => {
    await createSA(server, ns, 'kept');
    const r = await raw(server, `${path}/kept`, protobuf, 'DELETE', deleteOptions('dryRun: "All"'));
    assert.equal(r.status, 200, r.body.toString());
    assert.equal((await request(server, `${path}/kept`)).status, 200);
  });

  it('invalid options are 422 as from JSON: an unknown policy, orphanDependents with a policy, a negative grace period', async () => {
    await createSA(server, ns, 'checked');
    const cases: Array<[string, string]> = [
      ['propagationPolicy: "Sometimes"', 'DeleteOptions.meta.orch.io "" is invalid: propagationPolicy: Unsupported value: "Sometimes": supported values: "Foreground", "Background", "Orphan", "nil"'],
      ['orphanDependents: true propagationPolicy: "Foreground"', 'DeleteOptions.meta.orch.io "" is invalid: propagationPolicy: Invalid value: "Foreground": orphanDependents and deletionPropagation cannot be both set'],
      ['gracePeriodSeconds: -1', 'DeleteOptions.meta.orch.io "" is invalid: gracePeriodSeconds: Invalid value: -1: must be greater than or equal to 0'],
    ];
    for (const [text, message] of cases) {
      const r = await raw(server, `${path}/checked`, protobuf, 'DELETE', deleteOptions(text));
      assert.equal(r.status, 422, `${text}: ${r.body.toString()}`);
      assert.equal(JSON.parse(r.body.toString()).message, message);
    }
    assert.equal((await request(server, `${path}/checked`)).status, 200);
  });

  it('a DeleteOptions body of another kind, or without the magic, is 400', async () => {
    const otherKind = await raw(server, `${path}/checked`, protobuf, 'DELETE', body('v1', 'ServiceAccount', 'DeleteOptions', 'dryRun: "All"'));
    assert.equal(otherKind.status, 400, otherKind.body.toString());
    const noMagic = await raw(server, `${path}/checked`, protobuf, 'DELETE', protocEncode(proto, 'k8s.DeleteOptions', 'dryRun: "All"'));
    assert.equal(noMagic.status, 400, noMagic.body.toString());
  });

  it('DeleteCollection with a Protobuf DeleteOptions body', async () => {
    await Promise.all(['c1', 'c2'].map((n) => createSA(server, ns, n, { labels: { batch: 'one' } })));
    const dry = await raw(server, `${path}?labelSelector=batch%3Done`, protobuf, 'DELETE', deleteOptions('dryRun: "All"'));
    assert.equal(dry.status, 200, dry.body.toString());
    assert.equal((await request(server, `${path}?labelSelector=batch%3Done`)).json.items.length, 2);
    const real = await raw(server, `${path}?labelSelector=batch%3Done`, protobuf, 'DELETE', deleteOptions('propagationPolicy: "Background"'));
    assert.equal(real.status, 200, real.body.toString());
    assert.deepEqual(JSON.parse(real.body.toString()).items.map((i: Obj) => i.metadata.name), ['c1', 'c2']);
    assert.equal((await request(server, `${path}?labelSelector=batch%3Done`)).json.items.length, 0);
  });

  it('Create and Update with a Protobuf ServiceAccount body', async () => {
    const created = await raw(server, path, protobuf, 'POST',
      body('v1', 'ServiceAccount', 'ServiceAccount', `metadata { name: "pb-made" labels { key: "via" value: "protobuf" } } imagePullSecrets { name: "reg" } automountServiceAccountToken: false`));
    assert.equal(created.status, 201, created.body.toString());
    const sa = JSON.parse(created.body.toString());
    assert.equal(sa.metadata.labels.via, 'protobuf');
    assert.deepEqual(sa.imagePullSecrets, [{ name: 'reg' }]);
    assert.equal(sa.automountServiceAccountToken, false);
    const updated = await raw(server, `${path}/pb-made`, protobuf, 'PUT',
      body('v1', 'ServiceAccount', 'ServiceAccount', `metadata { name: "pb-made" namespace: "${ns}" resourceVersion: "${sa.metadata.resourceVersion}" labels { key: "via" value: "update" } } automountServiceAccountToken: true`));
    assert.equal(updated.status, 200, updated.body.toString());
    const after = JSON.parse(updated.body.toString());
    assert.equal(after.metadata.labels.via, 'update');
    assert.equal(after.automountServiceAccountToken, true);
    assert.equal(after.imagePullSecrets, undefined);
  });
});
