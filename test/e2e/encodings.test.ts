/**
 * Wire encodings: negotiation, YAML, Protobuf (checked with protoc --decode_raw, an independent
 * decoder), CBOR behind its gate, gzip, and round trips of every kind in every encoding.
 */
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { builtinKinds } from '../../src/api/registry/builtin.js';
import { apiVersionOf, type KindDeclaration } from '../../src/api/kind.js';
import { fillGoZeros } from '../../src/api/schema/go-zero-values.js';
import { decodeCbor, encodeCbor } from '../../src/codec/cbor.js';
import { decodeEnvelope } from '../../src/codec/proto/decode.js';
import { encodeEnvelope } from '../../src/codec/proto/encode.js';
import { toYaml, fromYaml } from '../../src/codec/yaml.js';
import { request, startServer, type TestServer } from '../support/server.js';
import { at, decodeRaw, raw, type Raw } from '../support/wire.js';

/** A sample object per served resource (`configmaps`, `leases.coordination.orch.io`). */
const samples: Record<string, Record<string, unknown>> = {
  namespaces: { metadata: { name: 'enc-ns', labels: { team: 'a' } } },
  serviceaccounts: { metadata: { name: 'enc-sa', labels: { app: 'web' }, annotations: { note: 'x' } }, secrets: [{ name: 's1' }, { name: 's2' }], imagePullSecrets: [{ name: 'pull' }], automountServiceAccountToken: false },
  secrets: { metadata: { name: 'enc-secret' }, type: 'Opaque', data: { key: Buffer.from('value\u0000\u00ff').toString('base64') }, immutable: true },
  configmaps: { metadata: { name: 'enc-cm' }, data: { 'a.txt': 'hello' }, binaryData: { bin: Buffer.from([0, 255]).toString('base64') }, immutable: false },
  // core/v1 Events: a converted view of events.events.orch.io
  events: { metadata: { name: 'enc-cev' }, involvedObject: { kind: 'Pod', name: 'p', namespace: 'encodings' }, reason: 'Started', message: 'core hello', source: { component: 'kubelet', host: 'n1' }, firstTimestamp: '2026-01-02T03:04:05Z', lastTimestamp: '2026-01-02T03:04:06Z', count: 2, type: 'Normal' },
  'leases.coordination.orch.io': { metadata: { name: 'enc-lease' }, spec: { holderIdentity: 'me', leaseDurationSeconds: 15, leaseTransitions: 0, renewTime: '2026-01-02T03:04:05.000001Z' } },
  'roles.rbac.authorization.orch.io': { metadata: { name: 'enc-role' }, rules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] }] },
  'clusterroles.rbac.authorization.orch.io': {
    metadata: { name: 'enc-clusterrole' }, rules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }],
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: 'b' }, matchExpressions: [{ key: 'c', operator: 'In', values: ['d'] }] }] },
  },
  'rolebindings.rbac.authorization.orch.io': {
    metadata: { name: 'enc-rolebinding' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' },
    subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'jane' }, { kind: 'ServiceAccount', name: 'sa', namespace: 'default' }],
  },
  'clusterrolebindings.rbac.authorization.orch.io': {
    metadata: { name: 'enc-clusterrolebinding' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'r' },
    subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'dev' }],
  },
  // nominalConcurrencyShares 0 and borrowingLimitPercent 0 are set pointers: kept through every encoding
  'prioritylevelconfigurations.flowcontrol.apiserver.orch.io': { metadata: { name: 'enc-pl' }, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 0, limitResponse: { type: 'Queue', queuing: { queues: 16, handSize: 4, queueLengthLimit: 20 } }, lendablePercent: 10, borrowingLimitPercent: 0 } } },
  'flowschemas.flowcontrol.apiserver.orch.io': { metadata: { name: 'enc-fs' }, spec: { priorityLevelConfiguration: { name: 'global-default' }, matchingPrecedence: 800, distinguisherMethod: { type: 'ByUser' }, rules: [{ subjects: [{ kind: 'User', user: { name: 'enc' } }, { kind: 'ServiceAccount', serviceAccount: { namespace: 'encodings', name: '*' } }], resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], clusterScope: true, namespaces: ['*'] }], nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }] }] } },
  'events.events.orch.io': { metadata: { name: 'enc-ev' }, eventTime: '2026-01-02T03:04:05.123456Z', action: 'Create', reason: 'Started', reportingController: 'orch.io/test', reportingInstance: 'i-1', type: 'Warning', note: 'hello', regarding: { kind: 'Pod', name: 'p', namespace: 'encodings' }, series: { count: 2, lastObservedTime: '2026-01-02T03:04:06.000001Z' } },
};

function collection(kind: KindDeclaration): string {
  const prefix = kind.group ? `/apis/${kind.group}/${kind.version}` : `/api/${kind.version}`;
  return kind.namespaced ? `${prefix}/namespaces/encodings/${kind.resource}` : `${prefix}/${kind.resource}`;
}

function encodeBody(kind: KindDeclaration, encoding: string, object: Record<string, unknown>): { type: string; body: Buffer } {
  const typed = { apiVersion: apiVersionOf(kind), kind: kind.kind, ...object };
  switch (encoding) {
    case 'json': return { type: 'application/json', body: Buffer.from(JSON.stringify(typed)) };
    case 'yaml': return { type: 'application/yaml', body: Buffer.from(toYaml(typed)) };
    case 'protobuf': return { type: 'application/vnd.orch.protobuf', body: encodeEnvelope(typed, kind.schema, { apiVersion: apiVersionOf(kind), kind: kind.kind }) };
    default: return { type: 'application/cbor', body: encodeCbor(typed, kind.schema) };
  }
}

function decodeResponse(kind: KindDeclaration, encoding: string, body: Buffer): Record<string, unknown> {
  switch (encoding) {
    case 'json': return JSON.parse(body.toString());
    case 'yaml': return fromYaml(body.toString()) as Record<string, unknown>;
    case 'protobuf': {
      // a Go client decodes into the typed struct, whose zeros (`eventTime: null`) JSON then writes
      const object = decodeEnvelope(body, kind.schema).object;
      fillGoZeros(kind.schema, object);
      return object;
    }
    default: return decodeCbor(body) as Record<string, unknown>;
  }
}

/** Kinds whose server-written status arrives just after create: read back once it has */
const settled: Record<string, (o: { status?: { conditions?: unknown[] } }) => boolean> = {
  'flowschemas.flowcontrol.apiserver.orch.io': (o) => (o.status?.conditions?.length ?? 0) > 0,
};

const accepts: Record<string, string> = { json: 'application/json', yaml: 'application/yaml', protobuf: 'application/vnd.kubernetes.protobuf', cbor: 'application/cbor' };

describe('wire encodings', () => {
  let server: TestServer;
  let plain: TestServer;
  before(async () => {
    // one after the other: a server that fails to start must not leave the other running unseen
    server = await startServer({ args: ['--feature-gates', 'CBORServingAndStorage=true'] });
    plain = await startServer();
    await request(server, '/api/v1/namespaces', { method: 'POST', body: { metadata: { name: 'encodings' } } });
  });
  after(async () => { await Promise.all([server?.dispose(), plain?.dispose()]); });

  describe('negotiation', () => {
    const cases: Array<[string, string]> = [
      ['application/yaml;q=0.5, application/json;q=0.9', 'application/json'],
      ['application/xml, application/yaml', 'application/yaml'],
      ['*/*', 'application/json'],
      ['application/*', 'application/json'],
      ['application/vnd.orch.protobuf, application/json', 'application/vnd.orch.protobuf'],
      ['application/vnd.kubernetes.protobuf, application/json', 'application/vnd.kubernetes.protobuf'],
      // parameters Kubernetes does not know are ignored; the ones it knows are honoured or skip the type
      ['application/vnd.kubernetes.protobuf;type=watch', 'application/vnd.kubernetes.protobuf'],
      ['application/json;charset=utf-8', 'application/json'],
      ['application/json;stream=watch', 'application/json'],
      ['application/yaml;stream=watch, application/json', 'application/json'],
      ['application/json;stream=other, application/yaml', 'application/yaml'],
      ['application/json;sv=v1', 'application/json'],
      ['application/json;sv=v2, application/yaml', 'application/yaml'],
      ['application/json;g=meta.k8s.io;v=v1, application/yaml', 'application/yaml'],
      ['application/json;as=Table;g=meta.example.io;v=v1, application/yaml', 'application/yaml'],
      ['application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1, application/yaml', 'application/yaml'],
      ['application/json;as=Pod;g=meta.k8s.io;v=v1, application/yaml', 'application/yaml'],
      ['application/yaml;q=0, application/json;q=0.1', 'application/json'],
      ['*/*;q=0.5, application/yaml', 'application/yaml'],
    ];
    for (const [accept, expected] of cases) {
      it(`picks ${expected} for ${accept}`, async () => {
        const r = await raw(plain, '/api/v1/namespaces/default', { accept });
        assert.equal(r.status, 200);
        assert.equal(r.headers['content-type'], expected);
      });
    }

    it('answers 406 with the supported types when nothing acceptable is offered', async () => {
      const r = await request(plain, '/api/v1/namespaces/default', { headers: { accept: 'text/html, application/cbor' } });
      assert.equal(r.status, 406);
      assert.equal(r.json.reason, 'NotAcceptable');
      assert.equal(r.json.message, 'only the following media types are accepted: application/json, application/yaml, application/vnd.orch.protobuf');
    });

    it('indents JSON with pretty=true', async () => {
      const r = await request(plain, '/api/v1/namespaces/default?pretty=true');
      assert.match(r.body, /^\{\n {2}"kind": "Namespace",\n {2}"apiVersion": "v1",/);
    });

    it('indents JSON for pretty=1 in the Accept type', async () => {
      const r = await request(plain, '/api/v1/namespaces/default', { headers: { accept: 'application/json;pretty=1' } });
      assert.equal(r.headers['content-type'], 'application/json');
      assert.match(r.body, /^\{\n {2}"kind": "Namespace",/);
    });

    it('lists only the primary media types in a 406, CBOR too when it is on, and writes it indented', async () => {
      const r = await request(server, '/api/v1/namespaces/default', { headers: { accept: 'application/json;as=Foo;g=meta.k8s.io;v=v1' } });
      assert.equal(r.status, 406);
      assert.equal(r.json.message, 'only the following media types are accepted: application/json, application/yaml, application/vnd.orch.protobuf, application/cbor');
      // the Status itself cannot be written in what was asked for: kube-apiserver's WriteRawJSON indents it
      assert.equal(r.headers['content-type'], 'application/json');
      assert.match(r.body, /^\{\n {2}"kind": "Status",\n/);
    });

    it('answers a watch asked for in YAML alone with 406 listing the stream types', async () => {
      const r = await request(plain, '/api/v1/namespaces/default/serviceaccounts?watch=1', { headers: { accept: 'application/yaml' } });
      assert.equal(r.status, 406);
      assert.equal(r.headers['content-type'], 'application/yaml');
      const status = fromYaml(r.body) as { message: string; reason: string };
      assert.equal(status.reason, 'NotAcceptable');
      assert.equal(status.message, 'only the following media types are accepted: application/json;stream=watch, application/vnd.orch.protobuf;stream=watch');
      const cbor = await request(server, '/api/v1/namespaces/default/serviceaccounts?watch=1', { headers: { accept: 'application/yaml' } });
      assert.equal((fromYaml(cbor.body) as { message: string }).message,
        'only the following media types are accepted: application/json;stream=watch, application/vnd.orch.protobuf;stream=watch, application/cbor-seq');
    });
  });

  describe('pretty error bodies', () => {
    const missing = '/api/v1/namespaces/default/serviceaccounts/no-such';
    const indented = /^\{\n {2}"kind": "Status",\n {2}"apiVersion": "v1",\n {2}"metadata": \{\},\n {2}"status": "Failure",\n {2}"message": "serviceaccounts \\"no-such\\" not found",[\s\S]*\n {2}"code": 404\n\}$/;
    const compact = '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"serviceaccounts \\"no-such\\" not found","reason":"NotFound","details":{"name":"no-such","kind":"serviceaccounts"},"code":404}\n';
    const cases: Array<[string, string, Record<string, string>, 'indented' | 'compact']> = [
      ['pretty=true', '?pretty=true', {}, 'indented'],
      ['pretty=True (strconv.ParseBool)', '?pretty=True', {}, 'indented'],
      ['pretty=1 in Accept', '', { accept: 'application/json;pretty=1' }, 'indented'],
      ['a curl user agent', '', { 'user-agent': 'curl/8.5.0' }, 'indented'],
      ['a Wget user agent', '', { 'user-agent': 'Wget/1.21' }, 'indented'],
      ['a browser', '', { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64)' }, 'indented'],
      ['pretty=false from curl', '?pretty=false', { 'user-agent': 'curl/8.5.0' }, 'compact'],
      ['pretty=yes (not a Go bool: false)', '?pretty=yes', {}, 'compact'],
      ['no hint', '', {}, 'compact'],
    ];
    for (const [what, query, headers, expected] of cases) {
      it(`${expected} for ${what}`, async () => {
        const r = await request(plain, `${missing}${query}`, { headers });
        assert.equal(r.status, 404);
        if (expected === 'indented') assert.match(r.body, indented);
        else assert.equal(r.body, compact);
      });
    }
  });

  describe('protobuf', () => {
    it('encodes a ServiceAccount with Kubernetes field numbers (read by protoc --decode_raw)', async () => {
      const created = await request(server, '/api/v1/namespaces/encodings/serviceaccounts', { method: 'POST', body: { metadata: { name: 'pb-raw', labels: { app: 'web' } }, secrets: [{ name: 'tok' }], imagePullSecrets: [{ name: 'reg' }], automountServiceAccountToken: true } });
      assert.equal(created.status, 201);
      const r = await raw(server, '/api/v1/namespaces/encodings/serviceaccounts/pb-raw', { accept: 'application/vnd.orch.protobuf' });
      assert.deepEqual([...r.body.subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00]);
      const unknown = decodeRaw(r.body.subarray(4));
      assert.equal(at(unknown, 1, 1), 'v1');                      // typeMeta.apiVersion
      assert.equal(at(unknown, 1, 2), 'ServiceAccount');          // typeMeta.kind
      assert.equal(at(unknown, 2, 1, 1), 'pb-raw');               // ServiceAccount.metadata.name
      assert.equal(at(unknown, 2, 1, 3), 'encodings');            // metadata.namespace
      assert.equal(at(unknown, 2, 1, 5), created.json.metadata.uid);
      assert.equal(at(unknown, 2, 1, 6), created.json.metadata.resourceVersion);
      assert.equal(at(unknown, 2, 1, 11, 1), 'app');              // labels entry key
      assert.equal(at(unknown, 2, 1, 11, 2), 'web');              // labels entry value
      assert.equal(at(unknown, 2, 2, 3), 'tok');                  // secrets[0].name (ObjectReference.name = 3)
      assert.equal(at(unknown, 2, 3, 1), 'reg');                  // imagePullSecrets[0].name
      assert.equal(at(unknown, 2, 4), '1');                       // automountServiceAccountToken
      assert.ok(at(unknown, 2, 1, 8) instanceof Map, 'creationTimestamp is a Time message');
    });

    it('encodes lists as ListMeta and repeated items', async () => {
      const r = await raw(server, '/api/v1/namespaces/encodings/serviceaccounts', { accept: 'application/vnd.orch.protobuf' });
      const unknown = decodeRaw(r.body.subarray(4));
      assert.equal(at(unknown, 1, 2), 'ServiceAccountList');
      const list = at(unknown, 2) as Raw;
      assert.ok(at(list, 1, 2), 'ListMeta.resourceVersion');
      const names = (list.get(2) ?? []).map((item) => at(item as Raw, 1, 1));
      assert.ok(names.includes('pb-raw') && names.includes('default'), String(names));
    });

    it('refuses a body without the magic prefix, storing nothing', async () => {
      const r = await raw(server, '/api/v1/namespaces/encodings/serviceaccounts', { 'content-type': 'application/vnd.orch.protobuf' }, 'POST', Buffer.from('\u000a\u0002hi'));
      assert.equal(r.status, 400);
      assert.match(JSON.parse(r.body.toString()).message, /expected prefix \[107 56 115 0\]/);
    });
  });

  describe('every kind round-trips through every encoding', () => {
    // kinds answered without storage (reviews) cannot be read back; kinds without a protobuf form
    // (CustomResourceDefinitions, whose status a controller writes at once: test/e2e/crd.test.ts) are not in every encoding
    for (const kind of builtinKinds.filter((k) => !k.virtualCreate && k.protobuf !== false)) {
      for (const sent of ['json', 'yaml', 'protobuf', 'cbor']) {
        it(`${kind.resource}: created in ${sent}, read back identically in every encoding`, async () => {
          const sample = structuredClone(samples[kind.group ? `${kind.resource}.${kind.group}` : kind.resource]);
          (sample.metadata as { name: string }).name += `-${sent}`;
          const { type, body } = encodeBody(kind, sent, sample);
          const created = await raw(server, collection(kind), { 'content-type': type, accept: 'application/json' }, 'POST', body);
          assert.equal(created.status, 201, created.body.toString());
          const name = (sample.metadata as { name: string }).name;
          const readReference = async () => JSON.parse((await raw(server, `${collection(kind)}/${name}`, { accept: 'application/json' })).body.toString());
          let reference = await readReference();
          const isSettled = settled[kind.group ? `${kind.resource}.${kind.group}` : kind.resource];
          for (let i = 0; isSettled && !isSettled(reference) && i < 100; i++) {
            await new Promise((r) => setTimeout(r, 50));
            reference = await readReference();
          }
          for (const field of Object.keys(sample)) if (field !== 'metadata') assert.deepEqual(reference[field], sample[field], `${field} stored as sent`);
          for (const read of ['json', 'yaml', 'protobuf', 'cbor']) {
            const r = await raw(server, `${collection(kind)}/${name}`, { accept: accepts[read] });
            assert.equal(r.status, 200);
            assert.deepEqual(decodeResponse(kind, read, r.body), reference, `read in ${read}`);
          }
        });
      }
    }
  });

  describe('CBOR', () => {
    it('is off by default: 415 for CBOR bodies, 406 for CBOR-only Accept', async () => {
      const body = encodeCbor({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'nope' } });
      const post = await raw(plain, '/api/v1/namespaces/default/serviceaccounts', { 'content-type': 'application/cbor' }, 'POST', body);
      assert.equal(post.status, 415);
      const get = await raw(plain, '/api/v1/namespaces/default', { accept: 'application/cbor' });
      assert.equal(get.status, 406);
    });

    it('answers with the self-described tag, and watches as a CBOR sequence', async () => {
      const r = await raw(server, '/api/v1/namespaces/encodings', { accept: 'application/cbor' });
      assert.equal(r.headers['content-type'], 'application/cbor');
      assert.deepEqual([...r.body.subarray(0, 3)], [0xd9, 0xd9, 0xf7]);
      const w = await raw(server, '/api/v1/namespaces/encodings/serviceaccounts?watch=1&timeoutSeconds=1', { accept: 'application/cbor' });
      assert.equal(w.headers['content-type'], 'application/cbor-seq');
      const items = w.body.toString('latin1').split('\u00d9\u00d9\u00f7').filter(Boolean).map((chunk) => decodeCbor(Buffer.concat([Buffer.from([0xd9, 0xd9, 0xf7]), Buffer.from(chunk, 'latin1')])) as { type: string; object: { kind: string } });
      assert.ok(items.length >= 2);
      for (const item of items) { assert.equal(item.type, 'ADDED'); assert.equal(item.object.kind, 'ServiceAccount'); }
    });

    it('applies with application/apply-patch+cbor when CBOR is on, 415 when it is off', async () => {
      const applied = encodeCbor({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'cbor-applied', labels: { via: 'cbor' } } });
      const on = await raw(server, '/api/v1/namespaces/encodings/serviceaccounts/cbor-applied?fieldManager=cbor-client', { 'content-type': 'application/apply-patch+cbor', accept: 'application/json' }, 'PATCH', applied);
      assert.equal(on.status, 201, on.body.toString());
      const created = JSON.parse(on.body.toString());
      assert.equal(created.metadata.labels.via, 'cbor');
      assert.equal(created.metadata.managedFields[0].manager, 'cbor-client');
      assert.equal(created.metadata.managedFields[0].operation, 'Apply');
      const off = await raw(plain, '/api/v1/namespaces/default/serviceaccounts/cbor-applied?fieldManager=cbor-client', { 'content-type': 'application/apply-patch+cbor' }, 'PATCH', applied);
      assert.equal(off.status, 415);
    });

    it('refuses a malformed CBOR body, storing nothing', async () => {
      const r = await raw(server, '/api/v1/namespaces/encodings/serviceaccounts', { 'content-type': 'application/cbor' }, 'POST', Buffer.from([0xd9, 0xd9, 0xf7, 0xbf, 0x61]));
      assert.equal(r.status, 400);
    });
  });

  describe('malformed YAML', () => {
    it('is a 400 and stores nothing', async () => {
      const before = await request(server, '/api/v1/namespaces/encodings/serviceaccounts');
      const r = await raw(server, '/api/v1/namespaces/encodings/serviceaccounts', { 'content-type': 'application/yaml' }, 'POST', Buffer.from('metadata: {name: [unclosed\n'));
      assert.equal(r.status, 400);
      const after = await request(server, '/api/v1/namespaces/encodings/serviceaccounts');
      assert.equal(after.json.items.length, before.json.items.length);
    });
  });

  describe('gzip', () => {
    before(async () => {
      for (let i = 0; i < 300; i++) {
        await request(server, '/api/v1/namespaces/encodings/secrets', { method: 'POST', body: { metadata: { name: `big-${i}` }, stringData: { blob: 'x'.repeat(600) } } });
      }
    });

    it('compresses get and list bodies over 128 KiB for clients that accept gzip', async () => {
      const r = await raw(server, '/api/v1/namespaces/encodings/secrets', { 'accept-encoding': 'gzip' });
      assert.equal(r.headers['content-encoding'], 'gzip');
      assert.equal(r.headers.vary, 'Accept-Encoding');
      const list = JSON.parse(gunzipSync(r.body).toString());
      assert.ok(list.items.length >= 300);
      assert.ok(r.body.length < 128 * 1024);
    });

    it('leaves small bodies, clients without gzip and watches uncompressed', async () => {
      const small = await raw(server, '/api/v1/namespaces/encodings', { 'accept-encoding': 'gzip' });
      assert.equal(small.headers['content-encoding'], undefined);
      const noGzip = await raw(server, '/api/v1/namespaces/encodings/secrets', {});
      assert.equal(noGzip.headers['content-encoding'], undefined);
      const watch = await raw(server, '/api/v1/namespaces/encodings/secrets?watch=1&timeoutSeconds=1', { 'accept-encoding': 'gzip' });
      assert.equal(watch.headers['content-encoding'], undefined);
      assert.ok(watch.body.length > 128 * 1024);
    });
  });
});
