/**
 * CEL for the authentication and authorization configurations, on @bufbuild/cel with its string
 * extensions: claim expressions see `claims` (the token's payload), user rules see `user`
 * (username, uid, groups, extra), authorization match conditions see `request` (the
 * SubjectAccessReview v1 spec), as in Kubernetes' CEL environments. Expressions are parsed and
 * checked for undeclared names when the configuration loads; values are converted as Kubernetes does.
 */
import type { CelEnv } from '@bufbuild/cel';
import { cel, celExtensions } from '../../cel/engine.js';
import { freeIdentifiers, type CelExpr } from '../../cel/ast.js';
import { CelEvalError } from './values.js';

let env: CelEnv | undefined;
function expressionEnv(): CelEnv {
  return env ??= cel().celEnv({ funcs: celExtensions().strings });
}

export type CelVariable = 'claims' | 'user' | 'request';

export class CelCompileError extends Error {}

type AnyExpr = CelExpr;

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
    this.program = cel().plan(expressionEnv(), ast) as (vars: Record<string, unknown>) => unknown;
  }

  /** Parses and checks an expression; CelCompileError with Kubernetes' wording on failure. */
  static compile(expression: string, variable: CelVariable): CompiledExpression {
    let ast: AnyExpr | undefined;
    try {
      ast = cel().parse(expression).expr;
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
    if (cel().isCelError(result)) throw new CelEvalError((result as Error).message);
    return plain(result);
  }
}

function plain(value: unknown): unknown {
  if (cel().isCelList(value)) return [...(value as Iterable<unknown>)].map(plain);
  if (cel().isCelMap(value)) {
    const out = new Map<unknown, unknown>();
    for (const [k, v] of value as Iterable<[unknown, unknown]>) out.set(plain(k), plain(v));
    return out;
  }
  return value;
}

