/**
 * The Table representation (server-side printing): a kind's declared columns, one row per
 * object, each row carrying the object as None, PartialObjectMetadata (default) or the Object.
 */
import type { KindDeclaration } from '../api/kind.js';
import type { KObject } from '../api/meta.js';
import { defaultColumns } from '../api/printing.js';

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export interface TableRequest {
  /** meta.orch.io, or meta.k8s.io as real kubectl asks */
  group: string;
  version: string;
  includeObject: IncludeObject;
}

export function tableOf(kind: Pick<KindDeclaration, 'table'>, objects: readonly Readonly<KObject>[], listMeta: Record<string, unknown>, request: TableRequest, now: number): object {
  const columns = kind.table ?? defaultColumns;
  const metaVersion = `${request.group}/${request.version}`;
  return {
    kind: 'Table',
    apiVersion: metaVersion,
    metadata: listMeta,
    columnDefinitions: columns.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description, priority: c.priority ?? 0 })),
    rows: objects.map((o) => {
      const row: { cells: unknown[]; object?: unknown } = { cells: columns.map((c) => c.cell(o, now)) };
      if (request.includeObject === 'Object') row.object = o;
      else if (request.includeObject === 'Metadata') row.object = { kind: 'PartialObjectMetadata', apiVersion: metaVersion, metadata: o.metadata };
      return row;
    }),
  };
}
