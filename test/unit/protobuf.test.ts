import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { leaseKind } from '../../src/api/coordination/lease.js';
import { configMapKind } from '../../src/api/core/config-map.js';
import { coreEventKind } from '../../src/api/core/event.js';
import { namespaceKind } from '../../src/api/core/namespace.js';
import { secretKind } from '../../src/api/core/secret.js';
import { serviceAccountKind } from '../../src/api/core/service-account.js';
import { eventKind } from '../../src/api/events/event.js';
import { apiVersionOf, type KindDeclaration } from '../../src/api/kind.js';
import { builtinKinds } from '../../src/api/registry/builtin.js';
import { decodeValue, type Schema, type StructSchema } from '../../src/api/schema.js';
import { internalStructOf } from '../../src/api/schema/to-internal.js';
import { decodeEnvelope, decodeMessage } from '../../src/codec/proto/decode.js';
import { encodeEnvelope, encodeMessage, protobufMagic } from '../../src/codec/proto/encode.js';
import { ProtobufError } from '../../src/codec/proto/errors.js';

// ---- an independent, byte-level protobuf builder for expected bytes -------------------------------

function varint(v: bigint): number[] {
  let u = BigInt.asUintN(64, v);
  const out: number[] = [];
  while (u > 127n) { out.push(Number(u & 0x7fn) | 0x80); u >>= 7n; }
  out.push(Number(u));
  return out;
}
const key = (n: number, wireType: number) => varint(BigInt(n * 8 + wireType));
const vi = (n: number, v: number | bigint) => [...key(n, 0), ...varint(BigInt(v))];
const ld = (n: number, ...parts: (number[] | Buffer)[]) => {
  const body = parts.flatMap((p) => [...p]);
  return [...key(n, 2), ...varint(BigInt(body.length)), ...body];
};
const str = (n: number, s: string) => ld(n, Buffer.from(s, 'utf8'));
const envelope = (apiVersion: string, kind: string, raw: number[]) =>
  Buffer.from([...protobufMagic, ...ld(1, str(1, apiVersion), str(2, kind)), ...ld(2, raw), ...str(3, ''), ...str(4, '')]);
const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

/** What the JSON path makes of the same object, to compare both encodings' results. */
function fromJson(kind: KindDeclaration, value: unknown): unknown {
  return decodeValue(kind.schema, value, '', kind.schema.goName, { unknownFields: [] });
}

function roundTrip(kind: KindDeclaration, object: Record<string, unknown>): void {
  const typeMeta = { apiVersion: apiVersionOf(kind), kind: kind.kind };
  const expected = { ...typeMeta, ...object };
  assert.deepEqual(fromJson(kind, expected), expected, 'the fixture is what the JSON path stores');
  const decoded = decodeEnvelope(encodeEnvelope(object, kind.schema, typeMeta), kind.schema);
  assert.deepEqual(decoded, { ...typeMeta, object: expected });
}

// ---- fixtures -------------------------------------------------------------------------------------

const fullMetadata = {
  name: 'full',
  generateName: 'ful-',
  namespace: 'team-a',
  selfLink: '/api/v1/x',
  uid: '6f1e1d1c-0000-4000-8000-000000000001',
  resourceVersion: '42',
  generation: 2 ** 40 + 3,
  creationTimestamp: '2024-05-06T07:08:09Z',
  deletionTimestamp: '2024-05-06T07:09:09Z',
  deletionGracePeriodSeconds: 30,
  labels: { 'app.kubernetes.io/name': 'web', tier: '', zeta: 'ž' },
  annotations: { note: 'x'.repeat(300) },
  ownerReferences: [
    { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: 'u-1', controller: true, blockOwnerDeletion: false },
    { apiVersion: 'v1', kind: 'Secret', name: 'other', uid: 'u-2' },
  ],
  finalizers: ['example.com/a', 'example.com/b'],
  managedFields: [{
    manager: 'kubectl', operation: 'Update', apiVersion: 'v1', time: '2024-05-06T07:08:09Z', fieldsType: 'FieldsV1',
    fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:tier': {} } } }, subresource: 'status',
  }],
};

const fullObjects: [KindDeclaration, Record<string, unknown>][] = [
  [namespaceKind, {
    metadata: { ...fullMetadata, namespace: undefined },
    spec: { finalizers: ['orch', 'example.com/cleanup'] },
    status: {
      phase: 'Terminating',
      conditions: [{ type: 'NamespaceDeletionContentFailure', status: 'True', lastTransitionTime: '2024-05-06T07:08:10Z', reason: 'Failed', message: 'could not delete' }],
    },
  }],
  [serviceAccountKind, {
    metadata: fullMetadata,
    secrets: [{ kind: 'Secret', namespace: 'team-a', name: 'tok', uid: 'u-3', apiVersion: 'v1', resourceVersion: '7', fieldPath: 'data' }],
    imagePullSecrets: [{ name: 'pull-1' }, { name: 'pull-2' }],
    automountServiceAccountToken: false,
  }],
  [secretKind, {
    metadata: fullMetadata,
    immutable: true,
    data: { 'bin.dat': Buffer.from([0, 1, 2, 253, 254, 255]).toString('base64'), big: Buffer.alloc(20_000, 7).toString('base64'), empty: '' },
    stringData: { plain: 'text', blank: '' },
    type: 'orch.io/tls',
  }],
  [eventKind, {
    metadata: fullMetadata,
    eventTime: '2024-05-06T07:08:09.123456Z',
    series: { count: 5, lastObservedTime: '2024-05-06T07:08:19.000001Z' },
    reportingController: 'orch.io/kubelet',
    reportingInstance: 'kubelet-xyzf',
    action: 'Pulling',
    reason: 'Started',
    regarding: { kind: 'Pod', namespace: 'team-a', name: 'p', uid: 'u-4', apiVersion: 'v1', resourceVersion: '9', fieldPath: 'spec.containers{a}' },
    related: { kind: 'Node', name: 'n1' },
    note: 'pulling image ✓',
    type: 'Normal',
    deprecatedSource: { component: 'kubelet', host: 'n1' },
    deprecatedFirstTimestamp: '2024-05-06T07:08:00Z',
    deprecatedLastTimestamp: '2024-05-06T07:08:30Z',
    deprecatedCount: -1,
  }],
  [configMapKind, {
    metadata: fullMetadata,
    immutable: false,
    data: { 'app.properties': 'a=b\nc=d', empty: '', unicode: 'ž ✓' },
    binaryData: { 'bin.dat': Buffer.from([0, 1, 2, 255]).toString('base64') },
  }],
  [coreEventKind, {
    metadata: fullMetadata,
    involvedObject: { kind: 'Pod', namespace: 'team-a', name: 'p', uid: 'u-4', apiVersion: 'v1', resourceVersion: '9', fieldPath: 'spec.containers{a}' },
    reason: 'Started',
    message: 'started container ✓',
    source: { component: 'kubelet', host: 'n1' },
    firstTimestamp: '2024-05-06T07:08:00Z',
    lastTimestamp: '2024-05-06T07:08:30Z',
    count: 3,
    type: 'Normal',
    eventTime: '2024-05-06T07:08:09.123456Z',
    series: { count: 5, lastObservedTime: '2024-05-06T07:08:19.000001Z' },
    action: 'Pulling',
    related: { kind: 'Node', name: 'n1' },
    reportingComponent: 'orch.io/kubelet',
    reportingInstance: 'kubelet-xyzf',
  }],
  [leaseKind, {
    metadata: fullMetadata,
    spec: {
      holderIdentity: 'node-a_1234', leaseDurationSeconds: 15, acquireTime: '2024-05-06T07:08:09.000001Z',
      renewTime: '2024-05-06T07:08:19.123456Z', leaseTransitions: 0, strategy: 'OldestEmulationVersion', preferredHolder: 'node-b',
    },
  }],
];

// Request bodies kubectl v1.32.4 sends, captured with `-v=9` (protobuf) and `--dry-run=client -o json`.
const kubectl = {
  namespace: hex(`6b 38 73 00 0a 0f 0a 02 76 31 12 09 4e 61 6d 65 73 70 61 63 65 12 1e 0a 16 0a 06 74 65 61 6d 2d
    61 12 00 1a 00 22 00 2a 00 32 00 38 00 42 00 12 00 1a 02 0a 00 1a 00 22 00`),
  secret: hex(`6b 38 73 00 0a 0c 0a 02 76 31 12 06 53 65 63 72 65 74 12 3f 0a 1c 0a 05 63 72 65 64 73 12 00 1a
    07 64 65 66 61 75 6c 74 22 00 2a 00 32 00 38 00 42 00 12 0e 0a 04 70 61 73 73 12 06 73 33 63 72
    33 74 12 0d 0a 04 75 73 65 72 12 05 61 64 6d 69 6e 1a 00 1a 00 22 00`),
  serviceAccount: hex(`6b 38 73 00 0a 14 0a 02 76 31 12 0e 53 65 72 76 69 63 65 41 63 63 6f 75 6e 74 12 1e 0a 1c 0a 05
    72 6f 62 6f 74 12 00 1a 07 64 65 66 61 75 6c 74 22 00 2a 00 32 00 38 00 42 00 1a 00 22 00`),
};
const kubectlJson = {
  namespace: { kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'team-a', creationTimestamp: null }, spec: {}, status: {} },
  secret: { kind: 'Secret', apiVersion: 'v1', metadata: { name: 'creds', namespace: 'default', creationTimestamp: null }, data: { pass: 'czNjcjN0', user: 'YWRtaW4=' } },
  serviceAccount: { kind: 'ServiceAccount', apiVersion: 'v1', metadata: { name: 'robot', namespace: 'default', creationTimestamp: null } },
};

/** ObjectMeta as client-go writes it for an object with only these strings set */
const clientMeta = (name: string, namespace = '') =>
  [...str(1, name), ...str(2, ''), ...str(3, namespace), ...str(4, ''), ...str(5, ''), ...str(6, ''), ...vi(7, 0), ...ld(8)];

function protobufError(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ProtobufError, `expected ProtobufError, got ${String(err)}`);
    return err.message;
  }
  assert.fail('expected a ProtobufError');
}

// ---- tests ----------------------------------------------------------------------------------------

describe('protobuf field numbers', () => {
  it('number every field of every builtin kind served in Protobuf, except the top-level TypeMeta', () => {
    const missing: string[] = [];
    const visit = (schema: Schema, path: string, top: boolean): void => {
      if (schema.type === 'list') return visit(schema.items, `${path}[]`, false);
      if (schema.type === 'map') return visit(schema.values, `${path}{}`, false);
      if (schema.type !== 'struct') return;
      for (const [name, field] of Object.entries(schema.fields)) {
        if (top && (name === 'apiVersion' || name === 'kind')) continue;
        if (schema.proto?.[name] === undefined) missing.push(`${path}.${name}`);
        visit(field, `${path}.${name}`, false);
      }
    };
    // kinds declared `protobuf: false` (CustomResourceDefinition) are served in JSON, YAML and CBOR only
    for (const kind of builtinKinds.filter((k) => k.protobuf !== false)) visit(kind.schema, kind.kind, true);
    assert.deepEqual(missing, []);
  });
});

describe('protobuf round trip', () => {
  for (const [kind, object] of fullObjects) {
    it(`${kind.kind} with every field set`, () => {
      // drop the undefined placeholders the fixtures use to unset a field
      roundTrip(kind, JSON.parse(JSON.stringify(object)));
    });
  }

  it('a minimal object of each kind served in Protobuf', () => {
    for (const kind of builtinKinds.filter((k) => k.protobuf !== false)) roundTrip(kind, { metadata: { name: 'x' } });
  });

  it('writes pointer fields only when set and keeps their zero values (LeaseSpec)', () => {
    const spec = leaseKind.schema.fields.spec as StructSchema;
    // holderIdentity = "", leaseTransitions = 0: set pointers, as client-go sends a fresh lease
    const set = Buffer.from([...str(1, ''), ...vi(5, 0)]);
    assert.deepEqual(encodeMessage({ holderIdentity: '', leaseTransitions: 0 }, spec), set);
    assert.deepEqual(decodeMessage(set, spec), { holderIdentity: '', leaseTransitions: 0 });
    // unset pointers are not written, where a plain string is written empty
    assert.deepEqual(encodeMessage({}, spec), Buffer.alloc(0));
    const series = coreEventKind.schema.fields.series as StructSchema;
    assert.deepEqual(decodeMessage(Buffer.from(vi(1, 0)), series), {}, 'a plain int32 zero is omitted, as omitempty does');
  });

  it('encodeMessage / decodeMessage without the envelope', () => {
    const status = { phase: 'Active', conditions: [{ type: 'A', status: 'False' }, {}] };
    const schema = namespaceKind.schema.fields.status as StructSchema;
    assert.deepEqual(decodeMessage(encodeMessage(status, schema), schema), status);
  });
});

describe('protobuf decoding of real client bytes', () => {
  it('matches a Namespace assembled byte by byte as client-go writes it', () => {
    const raw = [...ld(1, clientMeta('team-a')), ...ld(2), ...ld(3, str(1, ''))];
    assert.deepEqual(envelope('v1', 'Namespace', raw), kubectl.namespace);
  });

  it('decodes kubectl create namespace to what its JSON body yields', () => {
    const decoded = decodeEnvelope(kubectl.namespace, namespaceKind.schema);
    const object = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' }, spec: {}, status: {} };
    assert.deepEqual(decoded, { apiVersion: 'v1', kind: 'Namespace', object });
    assert.deepEqual(decoded.object, fromJson(namespaceKind, kubectlJson.namespace));
  });

  it('decodes kubectl create secret generic', () => {
    const object = decodeEnvelope(kubectl.secret, secretKind.schema).object;
    assert.deepEqual(object, {
      apiVersion: 'v1', kind: 'Secret',
      metadata: { name: 'creds', namespace: 'default' },
      data: { pass: Buffer.from('s3cr3t').toString('base64'), user: Buffer.from('admin').toString('base64') },
    });
    assert.deepEqual(object, fromJson(secretKind, kubectlJson.secret));
  });

  it('decodes kubectl create serviceaccount', () => {
    const object = decodeEnvelope(kubectl.serviceAccount, serviceAccountKind.schema).object;
    assert.deepEqual(object, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot', namespace: 'default' } });
    assert.deepEqual(object, fromJson(serviceAccountKind, kubectlJson.serviceAccount));
  });

  it('re-encodes them as client-go does, but for the absent non-pointer generation and creationTimestamp', () => {
    for (const [name, kind] of [['namespace', namespaceKind], ['secret', secretKind], ['serviceAccount', serviceAccountKind]] as const) {
      const { apiVersion, kind: kindName, object } = decodeEnvelope(kubectl[name], kind.schema);
      const ours = encodeEnvelope(object, kind.schema, { apiVersion, kind: kindName });
      const theirs = kubectl[name];
      // kubectl writes `38 00 42 00` (generation 0, zero creationTimestamp) inside metadata; both decode alike
      const at = theirs.indexOf(Buffer.from([0x38, 0x00, 0x42, 0x00]));
      const withoutZeros = Buffer.concat([theirs.subarray(0, at), theirs.subarray(at + 4)]);
      assert.equal(ours.length, withoutZeros.length, name);
      assert.deepEqual(decodeEnvelope(ours, kind.schema), decodeEnvelope(theirs, kind.schema), name);
    }
  });

  it('accepts fields in any order and skips unknown field numbers of every wire type', () => {
    const raw = [
      ...ld(3, str(1, 'Active')),
      ...vi(99, 5), ...key(98, 1), 1, 2, 3, 4, 5, 6, 7, 8, ...key(97, 5), 1, 2, 3, 4, ...str(96, 'ignored'),
      ...ld(1, vi(7, 4), str(1, 'ns'), ...[ld(11, str(2, 'v'), str(1, 'k'))], ld(8, vi(2, 0), vi(1, 1714979289), vi(9, 1))),
    ];
    assert.deepEqual(decodeEnvelope(envelope('v1', 'Namespace', raw), namespaceKind.schema).object, {
      apiVersion: 'v1', kind: 'Namespace', status: { phase: 'Active' },
      metadata: { generation: 4, name: 'ns', labels: { k: 'v' }, creationTimestamp: '2024-05-06T07:08:09Z' },
    });
  });

  it('reads a packed run of scalars', () => {
    const schema: StructSchema = { type: 'struct', goName: 'T', fields: { n: { type: 'list', items: { type: 'integer', format: 'int32' }, listType: 'atomic' } }, proto: { n: 1 } };
    assert.deepEqual(decodeMessage(Buffer.from([...ld(1, varint(1n), varint(-2n), varint(300n)), ...vi(1, 4)]), schema), { n: [1, -2, 300, 4] });
  });
});

describe('protobuf encoding as kube-apiserver writes it', () => {
  it('writes non-pointer strings always, in field order, maps sorted by key', () => {
    const ns = {
      metadata: { name: 'team-a', uid: 'u', resourceVersion: '5', generation: 1, creationTimestamp: '2024-05-06T07:08:09Z', labels: { b: '2', a: '1' } },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Active' },
    };
    const meta = [
      ...str(1, 'team-a'), ...str(2, ''), ...str(3, ''), ...str(4, ''), ...str(5, 'u'), ...str(6, '5'), ...vi(7, 1),
      ...ld(8, vi(1, 1714979289), vi(2, 0)),
      ...ld(11, str(1, 'a'), str(2, '1')), ...ld(11, str(1, 'b'), str(2, '2')),
    ];
    const expected = envelope('v1', 'Namespace', [...ld(1, meta), ...ld(2, str(1, 'kubernetes')), ...ld(3, str(1, 'Active'))]);
    assert.deepEqual(encodeEnvelope(ns, namespaceKind.schema, { apiVersion: 'v1', kind: 'Namespace' }), expected);
  });

  it('writes pointer fields only when set, keeping false and zero', () => {
    const sa = encodeMessage({ metadata: { name: 'a' }, automountServiceAccountToken: false }, serviceAccountKind.schema);
    assert.deepEqual(sa, Buffer.from([...ld(1, str(1, 'a'), str(2, ''), str(3, ''), str(4, ''), str(5, ''), str(6, '')), ...vi(4, 0)]));
    assert.deepEqual(decodeMessage(sa, serviceAccountKind.schema), { metadata: { name: 'a' }, automountServiceAccountToken: false });
    const unset = encodeMessage({}, serviceAccountKind.schema);
    assert.equal(unset.length, 0);
  });

  it('writes Time as whole seconds and MicroTime with microseconds, negative int32 as 10 bytes', () => {
    const event = { eventTime: '2024-05-06T07:08:09.123456Z', deprecatedFirstTimestamp: '1969-12-31T23:59:59Z', deprecatedCount: -1 };
    const bytes = encodeMessage(event, eventKind.schema);
    const strings = [4, 5, 6, 7, 10, 11].map((n) => str(n, ''));
    assert.deepEqual(bytes, Buffer.from([
      ...ld(2, vi(1, 1714979289), vi(2, 123456000)), ...strings.slice(0, 4).flat(), ...strings.slice(4).flat(),
      ...ld(13, vi(1, -1), vi(2, 0)), 0x78, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
    ]));
    assert.deepEqual(decodeMessage(bytes, eventKind.schema), event);
  });

  it('writes FieldsV1 as {raw = 1} holding the JSON bytes', () => {
    const fieldsV1 = { 'f:data': {} };
    const bytes = encodeMessage({ fieldsV1 }, metaSchema('managedFields'));
    assert.deepEqual(bytes, Buffer.from([...str(1, ''), ...str(2, ''), ...str(3, ''), ...str(6, ''), ...ld(7, str(1, '{"f:data":{}}')), ...str(8, '')]));
  });

  it('writes lengths of more than one byte', () => {
    const note = 'n'.repeat(20_000);
    const bytes = encodeMessage({ note }, eventKind.schema);
    const at = bytes.indexOf(Buffer.from([0x52, 0xa0, 0x9c, 0x01]));
    assert.ok(at >= 0, 'note written with a 3-byte length');
    assert.equal(decodeMessage(bytes, eventKind.schema).note, note);
  });
});

describe('protobuf zero values', () => {
  const nsWith = (...timestamp: number[][]) => decodeMessage(Buffer.from(ld(1, str(1, 'x'), ld(8, ...timestamp))), namespaceKind.schema);

  it('an empty Time is Go\'s zero time: absent, like JSON null', () => {
    assert.deepEqual(nsWith(), { metadata: { name: 'x' } });
    assert.deepEqual(nsWith(vi(1, -62135596800n)), { metadata: { name: 'x' } });
  });

  it('formats times across years 0001-9999 as RFC 3339 UTC', () => {
    const samples = [-62135596799, -2208988801, -1, 0, 951782399, 951868800, 4107542399, 4107628800, 1714979289, 253402300799];
    for (let i = 0; i < 200; i++) samples.push(Math.floor(Math.random() * 315538070400) - 62135596800);
    for (const seconds of samples) {
      const expected = new Date(seconds * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
      assert.deepEqual(nsWith(vi(1, seconds)), { metadata: { name: 'x', creationTimestamp: expected } }, `seconds ${seconds}`);
      // and back: the seconds Kubernetes would write for this text
      const encoded = encodeMessage({ metadata: { creationTimestamp: expected } }, namespaceKind.schema);
      assert.ok(encoded.includes(Buffer.from(ld(8, vi(1, seconds), vi(2, 0)))), `encoded seconds ${seconds}`);
    }
    const micro = (text: string) => decodeMessage(encodeMessage({ eventTime: text }, eventKind.schema), eventKind.schema).eventTime;
    assert.equal(micro('2024-05-06T07:08:09.5Z'), '2024-05-06T07:08:09.500000Z');
    assert.equal(micro('2024-05-06T07:08:09.123456789Z'), '2024-05-06T07:08:09.123456Z');
    assert.equal(micro('2024-05-06T09:08:09.000001+02:00'), '2024-05-06T07:08:09.000001Z');
    assert.match(protobufError(() => nsWith(vi(1, 253402300800))), /metadata\.creationTimestamp holds a time outside years 0001-9999/);
  });

  it('a set Time of 0 seconds is the Unix epoch, as Kubernetes decodes it', () => {
    assert.deepEqual(nsWith(vi(1, 0), vi(2, 0)), { metadata: { name: 'x', creationTimestamp: '1970-01-01T00:00:00Z' } });
  });

  it('Time drops nanos; empty strings and zero ints are absent; empty structs stay, as Go writes them', () => {
    const raw = [...ld(1, str(1, 'x'), vi(7, 0), ld(8, vi(1, 1714979289), vi(2, 999))), ...ld(2), ...ld(3, str(1, ''))];
    assert.deepEqual(decodeMessage(Buffer.from(raw), namespaceKind.schema),
      { metadata: { name: 'x', creationTimestamp: '2024-05-06T07:08:09Z' }, spec: {}, status: {} });
  });

  it('keeps empty map values and empty list items', () => {
    const raw = ld(1, ld(11, str(1, 'k'), str(2, '')), ld(11, str(1, 'only-key')), str(14, ''));
    assert.deepEqual(decodeMessage(Buffer.from(raw), namespaceKind.schema), { metadata: { labels: { k: '', 'only-key': '' }, finalizers: [''] } });
  });
});

describe('protobuf errors', () => {
  it('names the missing prefix', () => {
    assert.match(protobufError(() => decodeEnvelope(Buffer.from('{"kind":"Namespace"}'), namespaceKind.schema)),
      /does not appear to be a protobuf message, expected prefix \[107 56 115 0\]/);
    assert.match(protobufError(() => decodeEnvelope(Buffer.from('k8'), namespaceKind.schema)), /expected prefix/);
    assert.equal(protobufError(() => decodeEnvelope(new Uint8Array(0), namespaceKind.schema)), 'empty data');
    assert.equal(protobufError(() => decodeEnvelope(protobufMagic, namespaceKind.schema)), 'empty body');
  });

  it('reports a truncated varint', () => {
    const body = Buffer.from([...protobufMagic, ...key(2, 2), 0x80]);
    assert.match(protobufError(() => decodeEnvelope(body, namespaceKind.schema)), /truncated: varint at byte/);
    assert.match(protobufError(() => decodeMessage(Buffer.from([...key(1, 2), 0x02, 0x0a, 0x80]), namespaceKind.schema)), /truncated: varint/);
  });

  it('reports a length running past its message', () => {
    const body = kubectl.namespace.subarray(0, kubectl.namespace.length - 10);
    assert.match(protobufError(() => decodeEnvelope(body, namespaceKind.schema)), /truncated: raw at byte 22/);
    const inner = Buffer.from([...key(1, 2), 0x03, ...key(1, 2), 0x05, 0x61]);
    assert.match(protobufError(() => decodeMessage(inner, namespaceKind.schema)), /truncated: metadata\.name at byte 3 runs past the end of its message \(byte 5\)/);
  });

  it('reports a wrong wire type with the field path', () => {
    const raw = [...ld(1, vi(1, 7))];
    assert.equal(protobufError(() => decodeEnvelope(envelope('v1', 'Namespace', raw), namespaceKind.schema)),
      'protobuf field metadata.name has wire type 0 (varint), expected 2 (length-delimited)');
    assert.match(protobufError(() => decodeMessage(Buffer.from(str(4, 'yes')), serviceAccountKind.schema)),
      /automountServiceAccountToken has wire type 2 \(length-delimited\), expected 0 \(varint\)/);
  });

  it('rejects overlong varints, groups and a contentEncoding', () => {
    assert.match(protobufError(() => decodeMessage(Buffer.from([0x38, ...Array(10).fill(0xff), 0x01]), metaSchema())), /longer than 10 bytes/);
    assert.match(protobufError(() => decodeMessage(Buffer.from([...key(50, 3)]), metaSchema())), /unsupported wire type 3/);
    const gzipped = Buffer.from([...protobufMagic, ...ld(1, str(1, 'v1'), str(2, 'Namespace')), ...ld(2), ...str(3, 'gzip')]);
    assert.equal(protobufError(() => decodeEnvelope(gzipped, namespaceKind.schema)), 'unsupported protobuf contentEncoding "gzip"');
  });

  it('rejects values that do not fit the schema when encoding', () => {
    assert.match(protobufError(() => encodeMessage({ metadata: { name: 5 } }, namespaceKind.schema)), /ObjectMeta\.name: expected a string/);
    assert.match(protobufError(() => encodeMessage({ metadata: {} }, { type: 'struct', goName: 'NoNumbers', fields: { metadata: { type: 'string' } } })),
      /NoNumbers has no protobuf field numbers/);
  });
});

/** ObjectMeta, or the item schema of one of its list fields */
function metaSchema(list?: string): StructSchema {
  const meta = namespaceKind.schema.fields.metadata as StructSchema;
  if (!list) return meta;
  return (meta.fields[list] as { items: StructSchema }).items;
}

describe('lists nested in maps (authentication\'s ExtraValue)', () => {
  it('writes each list as a message of its items at field 1, and reads it back', async () => {
    const { userInfoStructural } = await import('../../src/api/authentication/user-info.js');
    const userInfoSchema = internalStructOf(userInfoStructural);
    const user = { username: 'u', groups: ['a'], extra: { 'example.com/k': ['x', 'y'], empty: [] } };
    const bytes = encodeMessage(user, userInfoSchema);
    // the entry for "empty" is a key and an empty ExtraValue; "example.com/k" holds two items
    const entry = (k: string, items: string[]) => ld(4, str(1, k), ld(2, ...items.map((i) => str(1, i))));
    // an empty uid is written, as gogo writes non-pointer strings
    assert.deepEqual([...bytes], [...str(1, 'u'), ...str(2, ''), ...str(3, 'a'), ...entry('empty', []), ...entry('example.com/k', ['x', 'y'])]);
    assert.deepEqual(decodeMessage(bytes, userInfoSchema), user);
  });
});
