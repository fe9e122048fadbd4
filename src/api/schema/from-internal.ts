/**
 * The internal Schema of a built-in kind (declared with the `s.*` builders) in structural form,
 * so that one schema language describes built-ins and custom resources alike (OpenAPI output, CEL
 * type information). Times are strings of format date-time, bytes strings of format byte.
 */
import { setOwn } from '../own-member.js';
import type { Schema } from '../schema.js';
import type { Structural } from './structural.js';

export function fromInternal(schema: Schema): Structural {
  const description = schema.description;
  const withDescription = (s: Structural): Structural => (description ? { ...s, description } : s);
  switch (schema.type) {
    case 'string': return withDescription({ type: 'string' });
    case 'boolean': return withDescription({ type: 'boolean' });
    case 'integer': return withDescription({ type: 'integer', format: schema.format });
    case 'time': case 'microTime': return withDescription({ type: 'string', format: 'date-time' });
    case 'bytes': return withDescription({ type: 'string', format: 'byte' });
    case 'any': return withDescription({ preserveUnknownFields: true });
    case 'map': {
      const out: Structural = { type: 'object', additionalProperties: fromInternal(schema.values) };
      if (schema.mapType === 'atomic') out.mapType = 'atomic';
      return withDescription(out);
    }
    case 'list': {
      const out: Structural = { type: 'array', items: fromInternal(schema.items) };
      if (schema.listType !== 'atomic') out.listType = schema.listType;
      if (schema.listMapKeys) out.listMapKeys = [...schema.listMapKeys];
      return withDescription(out);
    }
    case 'struct': {
      const properties: Record<string, Structural> = {};
      for (const [k, v] of Object.entries(schema.fields)) setOwn(properties, k, fromInternal(v));
      const out: Structural = { type: 'object', properties };
      if (schema.required?.length) out.required = [...schema.required];
      if (schema.structType === 'atomic') out.mapType = 'atomic';
      return withDescription(out);
    }
  }
}
