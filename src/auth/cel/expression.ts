/**
 * CEL for the authentication and authorization configurations, on @bufbuild/cel with its string
 * extensions: claim expressions see `claims` (the token's payload), user rules see `user`
 * (username, uid, groups, extra), authorization match conditions see `request` (the
 * SubjectAccessReview v1 spec), as in Kubernetes' CEL environments. Expressions are parsed and
 * checked for undeclared names when the configuration loads; values are converted as Kubernetes does.
 */
import { celEnv, isCelError, isCelList, isCelMap, parse, plan } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { CelEvalError } from './values.js';

const env = celEnv({ funcs: strings });

export type CelVariable = 'claims' | 'user' | 'request';

export class CelCompileError extends Error {}

type Expr = ReturnType<typeof parse>['expr'];
type AnyExpr = NonNullable<Expr>;

/** The identifiers an expression reads that no comprehension binds. */
function freeIdentifiers(expr: AnyExpr | undefined, bound: ReadonlySet<string>, out: Set<string>): void {
  if (!expr) return;
  const kind = expr.exprKind;
  switch (kind.case) {
    case 'identExpr':
      if (!bound.has(kind.value.name)) out.add(kind.value.name);
      return;
    case 'selectExpr':
      freeIdentifiers(kind.value.operand, bound, out);
      return;
    case 'callExpr':
      freeIdentifiers(kind.value.target, bound, out);
      for (const arg of kind.value.args) freeIdentifiers(arg, bound, out);
      return;
    case 'listExpr':
      for (const element of kind.value.elements) freeIdentifiers(element, bound, out);
      return;
    case 'structExpr':
      for (const entry of kind.value.entries) {
        if (entry.keyKind.case === 'mapKey') freeIdentifiers(entry.keyKind.value, bound, out);
        freeIdentifiers(entry.value, bound, out);
      }
      return;
    case 'comprehensionExpr': {
      const c = kind.value;
      freeIdentifiers(c.iterRange, bound, out);
      freeIdentifiers(c.accuInit, bound, out);
      const inner = new Set([...bound, c.iterVar, c.iterVar2, c.accuVar].filter((v) => v !== ''));
      freeIdentifiers(c.loopCondition, inner, out);
      freeIdentifiers(c.loopStep, inner, out);
      freeIdentifiers(c.result, inner, out);
      return;
    }
    default:
      return;
  }
}

/** Whether the expression selects `operand.field` anywhere (Kubernetes' hasSelectExp). */
function selects(expr: AnyExpr | undefined, operand: string, field: string): boolean {
  if (!expr) return false;
  const kind = expr.exprKind;
  switch (kind.case) {
    case 'selectExpr': {
      const op = kind.value.operand?.exprKind;
      if (op?.case === 'identExpr' && op.value.name === operand && kind.value.field === field) return true;
      return selects(kind.value.operand, operand, field);
    }
    case 'callExpr':
      return selects(kind.value.target, operand, field) || kind.value.args.some((a) => selects(a, operand, field));
    case 'listExpr':
      return kind.value.elements.some((e) => selects(e, operand, field));
    case 'structExpr':
      return kind.value.entries.some((e) => (e.keyKind.case === 'mapKey' && selects(e.keyKind.value, operand, field)) || selects(e.value, operand, field));
    case 'comprehensionExpr': {
      const c = kind.value;
      return [c.iterRange, c.accuInit, c.loopCondition, c.loopStep, c.result].some((e) => selects(e, operand, field));
    }
    default:
      return false;
  }
}

export class CompiledExpression {
  private readonly program: (vars: Record<string, unknown>) => unknown;

  private constructor(readonly expression: string, private readonly variable: CelVariable, private readonly ast: AnyExpr) {
    this.program = plan(env, ast) as (vars: Record<string, unknown>) => unknown;
  }

  /** Parses and checks an expression; CelCompileError with Kubernetes' wording on failure. */
  static compile(expression: string, variable: CelVariable): CompiledExpression {
    let ast: AnyExpr | undefined;
    try {
      ast = parse(expression).expr;
    } catch (err) {
      throw new CelCompileError(`compilation failed: ERROR: ${(err as Error).message}`);
    }
    if (!ast) throw new CelCompileError('compilation failed: ERROR: empty expression');
    const free = new Set<string>();
    freeIdentifiers(ast, new Set(), free);
    for (const name of free) {
      if (name !== variable) throw new CelCompileError(`compilation failed: ERROR: <input>: undeclared reference to '${name}' (in container '')`);
    }
    return new CompiledExpression(expression, variable, ast);
  }

  /** `claims.<field>` appears in the expression */
  selectsClaim(field: string): boolean {
    return selects(this.ast, 'claims', field);
  }

  /** The expression's value as plain JavaScript (lists as arrays, maps as Maps, ints as bigint). */
  evaluate(input: unknown): unknown {
    const result = this.program({ [this.variable]: input });
    if (isCelError(result)) throw new CelEvalError((result as Error).message);
    return plain(result);
  }
}

function plain(value: unknown): unknown {
  if (isCelList(value)) return [...(value as Iterable<unknown>)].map(plain);
  if (isCelMap(value)) {
    const out = new Map<unknown, unknown>();
    for (const [k, v] of value as Iterable<[unknown, unknown]>) out.set(plain(k), plain(v));
    return out;
  }
  return value;
}

