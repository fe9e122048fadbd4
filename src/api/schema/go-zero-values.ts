/**
 * Go's zero values. In Kubernetes a built-in object is a Go struct: decoded into it and encoded
 * again, it has every field whose json tag lacks omitempty (`reportingComponent: ""`,
 * `rules: null`), every struct it holds by value (`source: {}`, a Lease's `spec: {}`) and every
 * metav1.Time it holds by value (`eventTime: null`, a review's `creationTimestamp: null`), set or
 * not. kube-apiserver stores and answers objects so. This server fills them in when a write is
 * prepared, before its field ownership is recorded, and compares a create with the kind's zero
 * object, filled alike: as structured-merge-diff compares typed objects, no writer owns a zero
 * it did not send. Custom resources are unstructured and have none beyond their ObjectMeta's.
 */
import type { Schema, StructSchema } from '../schema.js';

interface FillPlan {
  /** fields written when unset, each with its schema */
  zeros: ReadonlyArray<readonly [string, Schema]>;
  /** fields whose values may hold structs with zeros of their own */
  nested: ReadonlyArray<readonly [string, Schema]>;
}

const plans = new WeakMap<StructSchema, FillPlan>();
/** a struct whose plan is being made: a recursive type is descended into (its plan comes next) */
const planning: FillPlan = { zeros: [], nested: [] };

function planOf(schema: StructSchema): FillPlan {
  let plan = plans.get(schema);
  if (plan) return plan;
  plans.set(schema, planning);
  const zeros: Array<readonly [string, Schema]> = [];
  const nested: Array<readonly [string, Schema]> = [];
  for (const field of schema.writesZero ?? []) zeros.push([field, schema.fields[field]]);
  for (const [field, fieldSchema] of Object.entries(schema.fields)) {
    if (holdsZeros(fieldSchema)) nested.push([field, fieldSchema]);
  }
  plan = { zeros, nested };
  plans.set(schema, plan);
  return plan;
}

/** Whether values of the schema may hold a struct that has zeros to fill. */
function holdsZeros(schema: Schema): boolean {
  switch (schema.type) {
    case 'struct': {
      const plan = planOf(schema);
      return plan === planning || plan.zeros.length > 0 || plan.nested.length > 0;
    }
    case 'list': return holdsZeros(schema.items);
    case 'map': return holdsZeros(schema.values);
    default: return false;
  }
}

/** What Go writes for the unset field: a struct held by value filled in turn, else its type's zero. */
function zeroOf(parent: StructSchema, field: string, schema: Schema): unknown {
  switch (schema.type) {
    case 'struct': {
      if (!parent.heldByValue?.has(field)) return null; // a pointer without omitempty (TokenRequest's boundObjectRef)
      const zero: Record<string, unknown> = {};
      fillGoZeros(schema, zero);
      return zero;
    }
    case 'string': return schema.pointer ? null : '';
    case 'integer': return schema.pointer ? null : 0;
    case 'boolean': return false;
    default: return null; // times, lists, maps, []byte, RawExtension's any
  }
}

function fillValue(schema: Schema, value: unknown): void {
  if (typeof value !== 'object' || value === null) return;
  if (schema.type === 'struct') {
    if (!Array.isArray(value)) fillGoZeros(schema, value as Record<string, unknown>);
  } else if (schema.type === 'list') {
    if (Array.isArray(value)) for (const item of value) fillValue(schema.items, item);
  } else if (schema.type === 'map') {
    for (const key in value) fillValue(schema.values, (value as Record<string, unknown>)[key]);
  }
}

/** Adds, in place, the fields Go's encoder would write for `obj` and everything in it. */
export function fillGoZeros(schema: StructSchema, obj: Record<string, unknown>): void {
  const plan = planOf(schema);
  for (const [field, fieldSchema] of plan.zeros) {
    if (obj[field] === undefined) obj[field] = zeroOf(schema, field, fieldSchema);
  }
  for (const [field, fieldSchema] of plan.nested) fillValue(fieldSchema, obj[field]);
}

const zeroObjects = new WeakMap<StructSchema, Readonly<Record<string, unknown>>>();

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** The kind's empty object as Go encodes it (`metadata: {creationTimestamp: null}`, ...): read-only. */
export function zeroObjectOf(schema: StructSchema): Readonly<Record<string, unknown>> {
  let zero = zeroObjects.get(schema);
  if (!zero) {
    const obj: Record<string, unknown> = {};
    fillGoZeros(schema, obj);
    zero = deepFreeze(obj);
    zeroObjects.set(schema, zero);
  }
  return zero;
}
