/**
 * The protobuf form of /openapi/v2 for the schema shapes custom resources bring (the built-in
 * document is checked end to end in test/e2e/openapi-v2-protobuf.test.ts): read back by protoc.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { openApiV2Protobuf } from '../../src/codec/proto/openapi-v2.js';

const protoDir = fileURLToPath(new URL('../../../src/codec/proto/', import.meta.url));

function protocText(bytes: Uint8Array): string {
  const out = spawnSync('protoc', [`--proto_path=${protoDir}`, '--decode=openapi.v2.Document', 'openapi-v2.proto'], { input: bytes });
  assert.equal(out.status, 0, String(out.stderr));
  return String(out.stdout).replace(/\s+/g, ' ');
}

describe('/openapi/v2 in protobuf: schema shapes', () => {
  const doc = {
    swagger: '2.0',
    info: { title: 'Kubernetes', version: 'v1.32.0' },
    paths: {},
    definitions: {
      'com.example.v1.Widget': {
        type: 'object',
        properties: {
          spec: {
            type: 'object',
            additionalProperties: false,
            properties: {
              size: { type: 'string', enum: ['small', 'yes'], default: 'small', nullable: true },
              port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }], maximum: 65535 },
              tags: { type: 'array', items: { type: 'string' }, maxItems: 3 },
            },
          },
          status: { type: 'object', properties: {} },
          extra: { type: 'object', additionalProperties: true },
        },
      },
    },
  };
  const text = protocText(openApiV2Protobuf(doc));

  it('writes additionalProperties as its boolean, enum and default as YAML text, numbers as numbers', () => {
    assert.match(text, /name: "spec" value \{ additional_properties \{ boolean: false \} type \{ value: "object" \}/);
    assert.match(text, /name: "extra" value \{ additional_properties \{ boolean: true \}/);
    assert.match(text, /name: "size" value \{ default \{ yaml: "small\\n" \} enum \{ yaml: "small\\n" \} enum \{ yaml: "\\"yes\\"\\n" \} type \{ value: "string" \} \}/);
    assert.match(text, /name: "tags" value \{ max_items: 3 type \{ value: "array" \} items \{ schema \{ type \{ value: "string" \} \} \} \}/);
  });

  it('keeps x-* keys as vendor extensions and leaves out what Swagger 2.0 has no field for (nullable, anyOf)', () => {
    assert.match(text, /name: "port" value \{ maximum: 65535 vendor_extension \{ name: "x-kubernetes-int-or-string" value \{ yaml: "true\\n" \} \} \}/);
    assert.doesNotMatch(text, /nullable|any_of|anyOf/);
  });

  it('keeps an empty properties object: kubectl tells a struct from a map by it', () => {
    assert.match(text, /name: "status" value \{ type \{ value: "object" \} properties \{ \} \}/);
  });
});
