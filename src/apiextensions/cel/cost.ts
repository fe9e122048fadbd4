/**
 * A static estimate of a validation rule's cost, in the spirit of cel-go's cost estimator as
 * apiextensions uses it (@bufbuild/cel has none): every node costs 1, string functions cost by
 * the string's maximum length, list functions and `in` by the list's maximum size, and a
 * comprehension (all, exists, map, filter, ...) costs its body times the range's maximum size. A
 * list, map or string without maxItems / maxProperties / maxLength is as large as a request
 * (3 MiB) allows, as Kubernetes assumes. The limits are Kubernetes': 10^7 per expression
 * (StaticEstimatedCostLimit) and 10^8 for all rules of a schema, each weighted by how many times
 * it runs (StaticEstimatedCRDCostLimit). There is no runtime budget: the estimate is the limit.
 */
import type { parse } from '@bufbuild/cel';
import type { Structural } from '../../api/schema/structural.js';

export type Expr = NonNullable<ReturnType<typeof parse>['expr']>;

export const perExpressionCostLimit = 10_000_000;
export const perSchemaCostLimit = 100_000_000;
const maxRequestBytes = 3 * 1024 * 1024;

/** The smallest JSON an element of this schema can take, plus its comma. */
function minSerializedSize(s: Structural | undefined): number {
  switch (s?.type) {
    case 'string': return 2;
    case 'boolean': return 4;
    case 'integer': case 'number': return 1;
    default: return 2;
  }
}

/** The most elements (list, map) or characters (string) a value of this schema can have. */
export function maxSize(s: Structural | undefined): number {
  if (!s) return 1;
  if (s.type === 'array') return s.maxItems ?? Math.floor((maxRequestBytes - 2) / (minSerializedSize(s.items) + 1));
  if (s.type === 'string') return s.maxLength !== undefined ? s.maxLength * 4 : maxRequestBytes;
  if (s.type === 'object') {
    const values = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
    return s.maxProperties ?? (values ? Math.floor((maxRequestBytes - 2) / (minSerializedSize(values) + 4)) : Object.keys(s.properties ?? {}).length || 1);
  }
  return 1;
}

const stringFunctions = new Set(['matches', 'contains', 'startsWith', 'endsWith', 'find', 'findAll', 'split', 'replace', 'lowerAscii', 'upperAscii', 'trim', 'indexOf', 'lastIndexOf', 'substring', 'charAt']);
const listFunctions = new Set(['isSorted', 'sum', 'min', 'max', 'indexOf', 'lastIndexOf', '@in', 'join']);

type Scope = ReadonlyMap<string, Structural | undefined>;

function schemaOf(e: Expr | undefined, scope: Scope): Structural | undefined {
  if (!e) return undefined;
  const k = e.exprKind;
  if (k.case === 'identExpr') return scope.get(k.value.name);
  if (k.case === 'selectExpr') {
    const parent = schemaOf(k.value.operand, scope);
    const prop = parent?.properties && Object.hasOwn(parent.properties, k.value.field) ? parent.properties[k.value.field] : undefined;
    return prop ?? (typeof parent?.additionalProperties === 'object' ? parent.additionalProperties : undefined);
  }
  if (k.case === 'callExpr' && k.value.function === '_[_]') {
    const parent = schemaOf(k.value.args[0], scope);
    return parent?.items ?? (typeof parent?.additionalProperties === 'object' ? parent.additionalProperties : undefined);
  }
  return undefined;
}

/** The element schema a comprehension's variable ranges over (a map's keys are strings). */
function elementOf(range: Structural | undefined): Structural | undefined {
  if (!range) return undefined;
  if (range.type === 'array') return range.items;
  if (range.type === 'object') return { type: 'string' };
  return undefined;
}

export function estimateCost(e: Expr | undefined, scope: Scope): number {
  if (!e) return 0;
  const k = e.exprKind;
  switch (k.case) {
    case 'constExpr': case 'identExpr': return 1;
    case 'selectExpr': return 1 + estimateCost(k.value.operand, scope);
    case 'listExpr': return 1 + k.value.elements.reduce((sum, x) => sum + estimateCost(x, scope), 0);
    case 'structExpr': return 1 + k.value.entries.reduce((sum, x) => sum + estimateCost(x.value, scope) + (x.keyKind.case === 'mapKey' ? estimateCost(x.keyKind.value, scope) : 0), 0);
    case 'callExpr': {
      const call = k.value;
      let cost = 1 + estimateCost(call.target, scope) + call.args.reduce((sum, x) => sum + estimateCost(x, scope), 0);
      const subject = call.target ?? (call.function === '@in' ? call.args[1] : call.args[0]);
      if (stringFunctions.has(call.function)) cost += Math.ceil(maxSize(schemaOf(subject, scope)) * 0.1);
      if (listFunctions.has(call.function)) cost += maxSize(schemaOf(subject, scope));
      return cost;
    }
    case 'comprehensionExpr': {
      const c = k.value;
      const range = schemaOf(c.iterRange, scope);
      const inner = new Map(scope);
      inner.set(c.iterVar, elementOf(range));
      if (c.iterVar2) inner.set(c.iterVar2, range?.type === 'array' ? range.items : typeof range?.additionalProperties === 'object' ? range.additionalProperties : undefined);
      inner.set(c.accuVar, undefined);
      const n = range ? maxSize(range) : 1;
      return estimateCost(c.iterRange, scope) + estimateCost(c.accuInit, scope)
        + n * (estimateCost(c.loopCondition, inner) + estimateCost(c.loopStep, inner)) + estimateCost(c.result, inner);
    }
    default: return 1;
  }
}
