/**
 * Table columns of a custom resource (the CRD's additionalPrinterColumns, as apiextensions'
 * tableconvertor builds them): Name first, then each column's JSON path evaluated per object;
 * without columns, an Age column. `date` cells print as ages, as kube-apiserver converts them.
 */
import { age, ageColumn, nameColumn, type TableColumn } from '../api/printing.js';
import type { PrinterColumn } from './crd-types.js';
import { parseJsonPath, valueAt } from './json-path.js';

function cell(type: string, value: unknown, now: number): unknown {
  if (value === undefined) return null;
  switch (type) {
    case 'date': return typeof value === 'string' && !Number.isNaN(Date.parse(value)) ? age(value, now) : null;
    case 'integer': return Number.isInteger(value) ? value : null;
    case 'number': return typeof value === 'number' ? value : null;
    case 'boolean': return typeof value === 'boolean' ? value : null;
    default: return typeof value === 'string' ? value : JSON.stringify(value);
  }
}

export function printerColumns(columns: readonly PrinterColumn[] | undefined): TableColumn[] {
  if (!columns?.length) return [nameColumn, ageColumn];
  return [nameColumn, ...columns.map((c): TableColumn => {
    const path = parseJsonPath(c.jsonPath);
    const type = (['integer', 'number', 'boolean', 'date'].includes(c.type) ? c.type : 'string') as TableColumn['type'];
    return {
      name: c.name, type, format: c.format, description: c.description ?? '', priority: c.priority ?? 0,
      cell: (o, now) => cell(c.type, valueAt(o, path), now),
    };
  })];
}
