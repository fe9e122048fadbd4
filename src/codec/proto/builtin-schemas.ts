/** The messages kinds.proto lists: every built-in kind with field numbers, its list, and the meta messages bodies use. */
import { deleteOptionsSchema, listSchemaOf, partialObjectMetadataListSchema, partialObjectMetadataSchema, statusSchema } from '../../api/meta.js';
import { builtinKinds } from '../../api/registry/builtin.js';
import type { StructSchema } from '../../api/schema.js';

export function builtinProtoSchemas(): StructSchema[] {
  const kinds = builtinKinds.filter((k) => k.schema.proto).flatMap((k) => [k.schema, listSchemaOf(k.schema)]);
  return [...kinds, statusSchema, deleteOptionsSchema, partialObjectMetadataSchema, partialObjectMetadataListSchema];
}
