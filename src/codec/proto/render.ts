/**
 * kinds.proto as text: the message types the codec builds from the kinds' declarations
 * (message-types.ts), written in protobuf's own language so the wire format can be read, diffed
 * and compiled by other tools. The declarations stay the one source of truth: a test renders
 * the built-in kinds and compares the result with the checked-in file
 * (regenerate: `node scripts/render-kinds-proto.mjs`).
 */
import type * as protobuf from 'protobufjs';
import type { StructSchema } from '../../api/schema.js';
import { MessageTypes } from './message-types.js';

function fieldLine(field: protobuf.Field): string {
  const type = field.type.replace(/^\.orch\.kinds\./, '').replace(/^\./, '');
  return `  ${field.repeated ? 'repeated' : 'optional'} ${type} ${field.name} = ${field.id};`;
}

/** The messages of `schemas` (and of everything they refer to), in the order they are first reached. */
export function renderKindsProto(schemas: readonly StructSchema[]): string {
  const types = new MessageTypes();
  for (const schema of schemas) types.planOf(schema);
  const messages = types.namespace.nestedArray.map((nested) => {
    const type = nested as protobuf.Type;
    const fields = [...type.fieldsArray].sort((a, b) => a.id - b.id).map(fieldLine);
    return `message ${type.name} {\n${fields.join('\n')}\n}\n`;
  });
  return [
    '// Generated from the kinds\' declarations (their schemas\' `proto` field numbers, as in',
    '// Kubernetes 1.32\'s generated.proto files) by src/codec/proto/render.ts; do not edit:',
    '// run `node scripts/render-kinds-proto.mjs`. map<string, V> fields are written as repeated',
    '// {key = 1; value = 2} entries (the same bytes, sorted by key as gogo writes them).',
    'syntax = "proto2";',
    '',
    'package orch.kinds;',
    '',
    'import "runtime.proto";',
    '',
    messages.join('\n'),
  ].join('\n');
}
