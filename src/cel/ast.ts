/** Walks over parsed CEL (@bufbuild/cel's AST), shared by every CEL environment here; types only, so importing it loads no CEL. */
import type { parse } from '@bufbuild/cel';

export type CelExpr = NonNullable<ReturnType<typeof parse>['expr']>;

/**
 * The identifiers an expression reads that no comprehension binds (to refuse undeclared names at
 * compile time). The namespace of a call to a qualified function (`format.named(...)`, named in
 * `qualified`) is not read.
 */
export function freeIdentifiers(expr: CelExpr | undefined, bound: ReadonlySet<string>, out: Set<string>, qualified: ReadonlySet<string> = new Set()): void {
  if (!expr) return;
  const kind = expr.exprKind;
  switch (kind.case) {
    case 'identExpr':
      if (!bound.has(kind.value.name)) out.add(kind.value.name);
      return;
    case 'selectExpr':
      freeIdentifiers(kind.value.operand, bound, out, qualified);
      return;
    case 'callExpr': {
      const target = kind.value.target?.exprKind;
      const namespaceOnly = target?.case === 'identExpr' && qualified.has(`${target.value.name}.${kind.value.function}`);
      if (!namespaceOnly) freeIdentifiers(kind.value.target, bound, out, qualified);
      for (const arg of kind.value.args) freeIdentifiers(arg, bound, out, qualified);
      return;
    }
    case 'listExpr':
      for (const element of kind.value.elements) freeIdentifiers(element, bound, out, qualified);
      return;
    case 'structExpr':
      for (const entry of kind.value.entries) {
        if (entry.keyKind.case === 'mapKey') freeIdentifiers(entry.keyKind.value, bound, out, qualified);
        freeIdentifiers(entry.value, bound, out, qualified);
      }
      return;
    case 'comprehensionExpr': {
      const c = kind.value;
      freeIdentifiers(c.iterRange, bound, out, qualified);
      freeIdentifiers(c.accuInit, bound, out, qualified);
      const inner = new Set([...bound, c.iterVar, c.iterVar2, c.accuVar].filter((v) => v !== ''));
      freeIdentifiers(c.loopCondition, inner, out, qualified);
      freeIdentifiers(c.loopStep, inner, out, qualified);
      freeIdentifiers(c.result, inner, out, qualified);
      return;
    }
    default:
      return;
  }
}
