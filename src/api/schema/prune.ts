/**
 * Pruning of fields a structural schema does not declare (apiextensions' pruning algorithm):
 * unknown fields are dropped and their paths reported (for fieldValidation Warn/Strict), except
 * under `x-orch-preserve-unknown-fields`. apiVersion, kind and metadata of the root and of every
 * embedded resource are kept (metadata is decoded as ObjectMeta elsewhere).
 */
import type { Structural } from './structural.js';

const typeMetaFields = new Set(['apiVersion', 'kind', 'metadata']);

/** Prunes `value` in place; returns the paths of the fields removed, in Kubernetes' notation. */
export function prune(value: unknown, s: Structural): string[] {
  const removed: string[] = [];
  pruneNode(value, s, '', true, removed);
  return removed;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function pruneNode(value: unknown, s: Structural | undefined, path: string, isResource: boolean, removed: string[]): void {
  if (Array.isArray(value)) {
    if (!s) return;
    value.forEach((item, i) => pruneNode(item, s.items, `${path}[${i}]`, s.items?.embeddedResource === true, removed));
    return;
  }
  if (!isObject(value) || !s) return;
  for (const key of Object.keys(value)) {
    const fieldPath = path ? `${path}.${key}` : key;
    if (isResource && typeMetaFields.has(key)) {
      // metadata is ObjectMeta's business; a declared metadata schema only restricts name/generateName
      continue;
    }
    const prop = s.properties && Object.hasOwn(s.properties, key) ? s.properties[key] : undefined;
    const sub = prop ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
    if (sub) {
      pruneNode(value[key], sub, fieldPath, sub.embeddedResource === true, removed);
    } else if (!s.preserveUnknownFields && s.additionalProperties !== true) {
      removed.push(fieldPath);
      delete value[key];
    }
  }
}
