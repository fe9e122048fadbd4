/**
 * The runtime cost of evaluating a validation rule, counted as cel-go's cost tracker counts it for
 * Kubernetes (@bufbuild/cel has no cost tracking): an identifier or a field/index selection costs
 * 1 (a presence test `has()` nothing), a constant nothing, a list literal 10 and a map literal 30,
 * a function call 1 unless it is one of those cel-go and Kubernetes' library cost by the size of
 * their arguments (string traversal 0.1 per character, regexes 0.25 per pattern character times
 * the string, list traversal 1 per element).
 *
 * Calls are counted as they happen, by a function resolver that charges before it dispatches; the
 * rest is counted per region of the expression: what is outside any comprehension once per
 * evaluation, a comprehension's loop condition and step once per iteration (its loop condition is
 * wrapped in a charging call). Operands skipped by `&&`, `||` and `?:` are charged all the same:
 * a slight overcount of cel-go's. Crossing the limit throws out of the evaluation at once.
 */
import type { CelEnv } from '@bufbuild/cel';
import { cel } from '../../cel/engine.js';
import type { CelExpr } from '../../cel/ast.js';
import { formatOf } from './format-library.js';

/** Kubernetes' limits (celconfig): one rule's evaluation, and all rules of one object's validation. */
export const perCallLimit = 1_000_000;
export const runtimeCostBudget = 10_000_000;

const stringTraversalFactor = 0.1;
const regexLengthFactor = 0.25;
const listCreateCost = 10;
const mapCreateCost = 30;
const structCreateCost = 40;

class CostLimitExceeded extends Error {
  constructor() { super('operation cancelled: actual cost limit exceeded'); }
}

/** The cost of the evaluation running now (evaluation is synchronous: one meter serves all). */
const meter = { cost: 0, limit: Infinity };

function charge(n: number): void {
  meter.cost += n;
  if (meter.cost > meter.limit) throw new CostLimitExceeded();
}

function sizeOf(v: unknown): number {
  if (typeof v === 'string') return Buffer.byteLength(v);
  if (v instanceof Uint8Array) return v.length;
  if (cel().isCelList(v) || cel().isCelMap(v)) return (v as { size: number }).size;
  return 1;
}

/** cel-go's traversalCost: the strings' characters (0.1 each) and the other scalars (1 each) of a value. */
function traversalCost(v: unknown): number {
  if (typeof v === 'string' || v instanceof Uint8Array) return Math.floor(sizeOf(v) * stringTraversalFactor);
  if (cel().isCelList(v)) {
    let cost = 0;
    for (const item of v as Iterable<unknown>) cost += traversalCost(item);
    return cost;
  }
  if (cel().isCelMap(v)) {
    let cost = 0;
    for (const [k, item] of v as Iterable<[unknown, unknown]>) cost += traversalCost(k) + traversalCost(item);
    return cost;
  }
  return 1;
}

const traversal = (n: number) => Math.ceil(n * stringTraversalFactor);
const isText = (v: unknown) => typeof v === 'string' || v instanceof Uint8Array;
const regexCost = (args: readonly unknown[]) => traversal(1 + sizeOf(args[0])) * Math.ceil(sizeOf(args[1]) * regexLengthFactor);
const comparison = (args: readonly unknown[]) => traversal(Math.min(sizeOf(args[0]), sizeOf(args[1])));

/** A call's cost from its arguments (the receiver first) and result (cel-go's costCall, Kubernetes' CallCost). */
type CallCost = (args: readonly unknown[], result: unknown) => number;

const callCosts: Record<string, CallCost> = {
  startsWith: (a) => traversal(sizeOf(a[1])),
  endsWith: (a) => traversal(sizeOf(a[1])),
  '@in': (a) => (cel().isCelList(a[1]) ? sizeOf(a[1]) : 1),
  '_==_': comparison, '_!=_': comparison, '_<_': comparison, '_<=_': comparison, '_>_': comparison, '_>=_': comparison,
  '_+_': (a) => (isText(a[0]) && isText(a[1]) ? traversal(sizeOf(a[0]) + sizeOf(a[1])) : 1),
  matches: regexCost, find: regexCost, findAll: regexCost,
  contains: (a) => (isText(a[0]) && isText(a[1]) ? traversal(sizeOf(a[0])) * traversal(sizeOf(a[1])) : 1),
  replace: (a) => Math.ceil(sizeOf(a[0]) * 2 * stringTraversalFactor),
  split: (a) => Math.ceil(sizeOf(a[0]) * 2 * stringTraversalFactor),
  join: (_a, result) => Math.ceil(sizeOf(result) * 2 * stringTraversalFactor),
  // a format's validation is charged as a regex of the format's size
  validate: (a) => { const f = formatOf(a[0]); return f ? traversal(1 + sizeOf(a[1])) * Math.ceil(f.maxRegexSize * regexLengthFactor) : 1; },
};
for (const name of ['isSorted', 'sum', 'max', 'min', 'indexOf', 'lastIndexOf']) callCosts[name] = (a) => traversalCost(a[0]);
for (const name of ['url', 'lowerAscii', 'upperAscii', 'substring', 'trim', 'cidr', 'isIP', 'isCIDR', 'ip', 'quantity', 'isQuantity', 'semver', 'isSemver']) {
  callCosts[name] = (a) => traversal(sizeOf(a[0]));
}

interface FuncGroup {
  readonly name: string;
  call(id: number, target: unknown, args: unknown[]): unknown;
  [Symbol.iterator](): Iterator<unknown>;
}
interface FuncResolver { find(name: string): FuncGroup | undefined; [Symbol.iterator](): Iterator<unknown> }

/** The function that charges a comprehension's per-iteration cost: `@charge:<cost>(loopCondition)`. */
const chargePrefix = '@charge:';

function chargingGroup(name: string): FuncGroup {
  const cost = Number(name.slice(chargePrefix.length));
  return {
    name,
    call(_id, _target, args) { charge(cost); return args[0]; },
    *[Symbol.iterator]() { /* not a function a rule can name */ },
  };
}

function meteredGroup(group: FuncGroup): FuncGroup {
  const cost = callCosts[group.name];
  return {
    name: group.name,
    call(id, target, args) {
      const result = group.call(id, target, args);
      charge(cost ? cost(target === undefined ? args : [target, ...args], result) : 1);
      return result;
    },
    [Symbol.iterator]: () => group[Symbol.iterator](),
  };
}

/** The same environment, its function calls charged to the meter. */
export function meteredEnv<E extends CelEnv>(env: E): E {
  const funcs = env.funcs as unknown as FuncResolver;
  const groups = new Map<string, FuncGroup | undefined>();
  const resolver: FuncResolver = {
    find(name) {
      if (name.startsWith(chargePrefix)) return chargingGroup(name);
      if (!groups.has(name)) {
        const group = funcs.find(name);
        groups.set(name, group && meteredGroup(group));
      }
      return groups.get(name);
    },
    [Symbol.iterator]: () => funcs[Symbol.iterator](),
  };
  return Object.create(env, { funcs: { value: resolver } }) as E;
}

/** Calls the planner does not dispatch to a function (so the resolver never sees them), and what they cost. */
const inlineCalls: Record<string, number> = { '_[_]': 1, '_[?_]': 1, '_?._': 1, '_&&_': 0, '_||_': 0, '_?_:_': 0, '@not_strictly_false': 1 };

/**
 * What an expression costs besides its calls, outside comprehension loops; each comprehension's
 * loop condition is wrapped to charge its loop's share per iteration (the AST is changed in place).
 * The namespace of a qualified function (`format` of `format.named`, named in `qualified`) is not read.
 */
export function instrument(e: CelExpr | undefined, qualified: ReadonlySet<string> = new Set()): number {
  if (!e) return 0;
  const k = e.exprKind;
  switch (k.case) {
    case 'identExpr': return 1;
    case 'selectExpr': return (k.value.testOnly ? 0 : 1) + instrument(k.value.operand, qualified);
    case 'listExpr': return listCreateCost + k.value.elements.reduce((sum, x) => sum + instrument(x, qualified), 0);
    case 'structExpr': return (k.value.messageName ? structCreateCost : mapCreateCost)
      + k.value.entries.reduce((sum, x) => sum + instrument(x.value, qualified) + (x.keyKind.case === 'mapKey' ? instrument(x.keyKind.value, qualified) : 0), 0);
    case 'callExpr': {
      const call = k.value;
      const target = call.target?.exprKind;
      const namespaceOnly = target?.case === 'identExpr' && qualified.has(`${target.value.name}.${call.function}`);
      return (inlineCalls[call.function] ?? 0) + (namespaceOnly ? 0 : instrument(call.target, qualified)) + call.args.reduce((sum, x) => sum + instrument(x, qualified), 0);
    }
    case 'comprehensionExpr': {
      const c = k.value;
      const perIteration = instrument(c.loopCondition, qualified) + instrument(c.loopStep, qualified);
      if (perIteration > 0 && c.loopCondition) c.loopCondition = chargingCall(perIteration, c.loopCondition);
      return instrument(c.iterRange, qualified) + instrument(c.accuInit, qualified) + instrument(c.result, qualified);
    }
    default: return 0;
  }
}

function chargingCall(cost: number, condition: CelExpr): CelExpr {
  const node = cel().parse('charge(true)').expr as CelExpr;
  if (node.exprKind.case !== 'callExpr') throw new Error('unexpected parse of a call');
  node.id = condition.id;
  node.exprKind.value.function = `${chargePrefix}${cost}`;
  node.exprKind.value.args = [condition];
  return node;
}

export interface Metered { result: unknown; cost: number; exceeded: boolean }

/** Runs an evaluation under a cost limit; past it, the evaluation stops and `exceeded` says so. */
export function metered(baseCost: number, limit: number, evaluate: () => unknown): Metered {
  meter.cost = 0;
  meter.limit = limit;
  let result: unknown;
  try {
    charge(baseCost);
    result = evaluate();
  } catch (err) {
    if (!(err instanceof CostLimitExceeded)) throw err;
  } finally {
    meter.limit = Infinity;
  }
  return { result, cost: meter.cost, exceeded: meter.cost > limit };
}
