/**
 * Field sets in Kubernetes' FieldsV1 notation, computed from a kind's schema: `f:<field>` for
 * struct fields and map entries, `k:{...}` for elements of map-lists, `v:<json>` for elements of
 * set-lists, `.` for a node that is itself a member while it has members below it.
 */
import type { ListSchema, Schema, StructSchema } from '../api/schema.js';

/** A path is the JSON of its element array; membership and leaf values are keyed by it. */
export type PathKey = string;

/** Every path of an object with, for leaves, the JSON of the value (for comparing versions). */
export type ValuePaths = Map<PathKey, string | null>;

const keyOf = (elements: readonly string[]): PathKey => JSON.stringify(elements);

function listElement(schema: ListSchema, item: unknown, index: number): string {
  if (schema.listType === 'set') return `v:${JSON.stringify(item)}`;
  if (schema.listType === 'map' && schema.listMapKeys && item && typeof item === 'object') {
    const key: Record<string, unknown> = {};
    for (const k of [...schema.listMapKeys].sort()) key[k] = (item as Record<string, unknown>)[k];
    return `k:${JSON.stringify(key)}`;
  }
  return `i:${index}`;
}

function walk(schema: Schema, value: unknown, path: string[], out: ValuePaths): void {
  if (value === undefined) return;
  switch (schema.type) {
    case 'struct': {
      if (schema.structType === 'atomic' || typeof value !== 'object' || value === null) break;
      const entries = Object.entries(value as Record<string, unknown>);
      if (entries.length === 0) break;
      for (const [field, v] of entries) {
        const child = schema.fields[field];
        if (child) walk(child, v, [...path, `f:${field}`], out);
      }
      return;
    }
    case 'map': {
      if (schema.mapType === 'atomic' || typeof value !== 'object' || value === null) break;
      out.set(keyOf(path), null);
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) walk(schema.values, v, [...path, `f:${k}`], out);
      return;
    }
    case 'list': {
      if (schema.listType === 'atomic' || !Array.isArray(value)) break;
      value.forEach((item, i) => {
        const element = [...path, listElement(schema, item, i)];
        if (schema.listType === 'set' || schema.items.type !== 'struct') {
          out.set(keyOf(element), JSON.stringify(item));
        } else {
          out.set(keyOf(element), null);
          walk(schema.items, item, element, out);
        }
      });
      return;
    }
    default:
      break;
  }
  out.set(keyOf(path), JSON.stringify(value));
}

/** Paths Kubernetes never records as owned (StripMetaManager), plus a kind's reset fields. */
function stripped(path: PathKey, resetFields: readonly string[]): boolean {
  const elements = JSON.parse(path) as string[];
  if (elements.length === 0) return true;
  const [first, second] = elements;
  if (first === 'f:apiVersion' || first === 'f:kind') return true;
  if (resetFields.includes(first)) return true;
  if (first === 'f:metadata') {
    if (elements.length === 1) return true;
    return ['f:name', 'f:namespace', 'f:creationTimestamp', 'f:selfLink', 'f:uid', 'f:generation', 'f:managedFields', 'f:resourceVersion'].includes(second);
  }
  return false;
}

export function valuePaths(schema: StructSchema, object: unknown, resetFields: readonly string[] = []): ValuePaths {
  const all: ValuePaths = new Map();
  walk(schema, object, [], all);
  for (const key of all.keys()) if (stripped(key, resetFields)) all.delete(key);
  return all;
}

/** Reads a FieldsV1 document into the set of paths it names. */
export function parseFieldsV1(fields: unknown, prefix: string[] = [], out = new Set<PathKey>()): Set<PathKey> {
  if (!fields || typeof fields !== 'object') return out;
  for (const [k, v] of Object.entries(fields as Record<string, unknown>)) {
    if (k === '.') { out.add(keyOf(prefix)); continue; }
    const path = [...prefix, k];
    const children = v && typeof v === 'object' ? Object.keys(v) : [];
    if (children.length === 0) out.add(keyOf(path));
    else parseFieldsV1(v, path, out);
  }
  return out;
}

const elementOrder: Record<string, number> = { '.': 0, f: 1, k: 2, v: 3, i: 4 };

function sortNode(node: Record<string, unknown>): Record<string, unknown> {
  const keys = Object.keys(node).sort((a, b) => {
    const ta = a === '.' ? 0 : elementOrder[a[0]] ?? 5;
    const tb = b === '.' ? 0 : elementOrder[b[0]] ?? 5;
    return ta !== tb ? ta - tb : a < b ? -1 : a > b ? 1 : 0;
  });
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = sortNode(node[k] as Record<string, unknown>);
  return out;
}

/** Writes a set of paths as a FieldsV1 document, in Kubernetes' element order. */
export function toFieldsV1(set: ReadonlySet<PathKey>): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  const members: string[][] = [...set].map((k) => JSON.parse(k) as string[]);
  for (const elements of members) {
    let node = root;
    for (const e of elements) node = (node[e] ??= {}) as Record<string, unknown>;
  }
  for (const elements of members) {
    let node = root;
    for (const e of elements) node = node[e] as Record<string, unknown>;
    if (Object.keys(node).some((k) => k !== '.')) node['.'] = {};
  }
  return sortNode(root);
}
