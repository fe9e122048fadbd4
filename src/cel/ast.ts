/** Walks over parsed CEL (@bufbuild/cel's AST), shared by every CEL environment here; types only, so importing it loads no CEL. */
import type { parse } from '@bufbuild/cel';

export type CelExpr = NonNullable<ReturnType<typeof parse>['expr']>;

/** The identifiers an expression reads that no comprehension binds (to refuse undeclared names at compile time). */
export function freeIdentifiers(expr: CelExpr | undefined, bound: ReadonlySet<string>, out: Set<string>): void {
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
