import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';

import { serviceAccountKind } from '../../src/api/core/service-account.js';
import { builtinProtoSchemas } from '../../src/codec/proto/builtin-schemas.js';
import { encodeMessage } from '../../src/codec/proto/encode.js';
import { renderKindsProto } from '../../src/codec/proto/render.js';

const protoFile = (name: string) => readFileSync(new URL(`../../../src/codec/proto/${name}`, import.meta.url), 'utf8');

describe('the .proto definitions', () => {
  it('kinds.proto is what the declarations generate (one source of truth)', () => {
    assert.equal(renderKindsProto(builtinProtoSchemas()), protoFile('kinds.proto'),
      'kinds.proto is stale: run `node scripts/render-kinds-proto.mjs` after the build');
  });

  it('compiles with protobufjs\' parser and writes the codec\'s bytes', () => {
    const root = protobuf.parse(protoFile('runtime.proto'), { keepCase: true }).root;
    protobuf.parse(protoFile('kinds.proto'), root, { keepCase: true });
    root.resolveAll();
    const type = root.lookupType('orch.kinds.ServiceAccount');
    const sa = { metadata: { name: 'build-robot', namespace: 'default', labels: { b: '2', a: '1' } }, automountServiceAccountToken: false, secrets: [{ name: 's' }] };
    const fromText = type.encode({
      metadata: { name: 'build-robot', generateName: '', namespace: 'default', selfLink: '', uid: '', resourceVersion: '', labels: [{ key: 'a', value: '1' }, { key: 'b', value: '2' }] },
      secrets: [{ kind: '', namespace: '', name: 's', uid: '', apiVersion: '', resourceVersion: '', fieldPath: '' }],
      automountServiceAccountToken: false,
    }).finish();
    assert.deepEqual(Buffer.from(fromText), encodeMessage(sa, serviceAccountKind.schema));
  });
});
