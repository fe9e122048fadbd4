/**
 * A value being validated on update, correlated with its old value by the structural schema
 * (apiserver's cel/common CorrelatedObject): properties by name, items of map-type lists by their
 * keys, items of lists without a list type by index; set and atomic items do not correlate. Its
 * deep equality with the old value is computed lazily and cached, reusing the children's, so that
 * validation ratcheting (errors dropped on values that did not change) costs nothing on valid
 * objects and one comparison per node on invalid ones.
 */
import type { Structural } from './structural.js';
import { jsonEqual } from './value-validation.js';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function mapKeyOf(item: unknown, keys: readonly string[]): string | undefined {
  if (!isObject(item)) return undefined;
  return JSON.stringify(keys.map((k) => item[k] ?? null));
}

export class Correlated {
  private equal?: boolean;
  private children?: Map<string | number, Correlated | undefined>;
  private oldByKey?: Map<string, unknown>;

  constructor(readonly value: unknown, readonly old: unknown, readonly schema: Structural) {}

  /** The child under a property present in both values, when the schema describes it. */
  key(field: string): Correlated | undefined {
    const cached = this.children?.get(field);
    if (cached || this.children?.has(field)) return cached;
    let child: Correlated | undefined;
    if (isObject(this.value) && isObject(this.old) && Object.hasOwn(this.value, field) && Object.hasOwn(this.old, field)) {
      const s = this.schema.properties && Object.hasOwn(this.schema.properties, field) ? this.schema.properties[field]
        : typeof this.schema.additionalProperties === 'object' ? this.schema.additionalProperties : undefined;
      if (s) child = new Correlated(this.value[field], this.old[field], s);
    }
    (this.children ??= new Map()).set(field, child);
    return child;
  }

  /** The child at an index of the new list, when its item correlates with an old one. */
  index(i: number): Correlated | undefined {
    const cached = this.children?.get(i);
    if (cached || this.children?.has(i)) return cached;
    let child: Correlated | undefined;
    const old = this.oldItemFor(i);
    if (old !== undefined && this.schema.items) child = new Correlated((this.value as unknown[])[i], old, this.schema.items);
    (this.children ??= new Map()).set(i, child);
    return child;
  }

  private oldItemFor(i: number): unknown {
    if (!Array.isArray(this.value) || !Array.isArray(this.old) || i >= this.value.length) return undefined;
    switch (this.schema.listType) {
      case 'map': {
        const keys = this.schema.listMapKeys ?? [];
        if (!this.oldByKey) {
          this.oldByKey = new Map();
          for (const item of this.old) {
            const k = mapKeyOf(item, keys);
            if (k !== undefined && !this.oldByKey.has(k)) this.oldByKey.set(k, item);
          }
        }
        const k = mapKeyOf(this.value[i], keys);
        return k === undefined ? undefined : this.oldByKey.get(k);
      }
      case 'set': case 'atomic': return undefined;
      default: return i < this.old.length ? this.old[i] : undefined;
    }
  }

  /** Whether the value equals its old value (cached; through the children where they correlate). */
  deepEqual(): boolean {
    this.equal ??= this.compare();
    return this.equal;
  }

  private compare(): boolean {
    const { value, old } = this;
    if (value === undefined || value === null || old === undefined || old === null) return (value ?? null) === (old ?? null);
    if (Array.isArray(value) !== Array.isArray(old)) return false;
    if (Array.isArray(value)) {
      const oldList = old as unknown[];
      if (value.length !== oldList.length) return false;
      for (let i = 0; i < value.length; i++) {
        const child = this.index(i);
        // a list whose items do not correlate is compared as a whole
        if (!child) return this.schema.listType === 'map' ? false : jsonEqual(value, oldList);
        if (!child.deepEqual()) return false;
      }
      return true;
    }
    if (isObject(value) !== isObject(old)) return false;
    if (isObject(value)) {
      const keys = Object.keys(value);
      if (keys.length !== Object.keys(old as object).length) return false;
      return keys.every((k) => this.key(k)?.deepEqual() ?? false);
    }
    return jsonEqual(value, old);
  }
}
