/**
 * A webhook's matchConditions: CEL expressions over `request` (the SubjectAccessReview v1 spec)
 * that must all be true for the webhook to be asked (Kubernetes' CELMatcher). One false
 * condition skips the webhook even when others fail to evaluate; otherwise an evaluation error
 * is the webhook's failure. The expressions are compiled once, when the configuration loads.
 */
import type { CompiledExpression } from '../../cel/expression.js';
import { celInput } from '../../cel/values.js';
import { fieldErrors, type FieldError } from '../../../status/status-error.js';

export type MatchOutcome = { matches: boolean; error?: string };

export class MatchConditions {
  private constructor(private readonly expressions: readonly CompiledExpression[]) {}

  /** Compiles the expressions; `path` is the field path of the list, for errors. */
  static async compile(expressions: readonly string[], path: string): Promise<{ conditions: MatchConditions | undefined; errors: FieldError[] }> {
    const { CompiledExpression, CelCompileError } = await import('../../cel/expression.js');
    const errors: FieldError[] = [];
    const compiled: CompiledExpression[] = [];
    const seen = new Set<string>();
    for (const [i, expression] of expressions.entries()) {
      const field = `${path}[${i}].expression`;
      if (expression.trim() === '') { errors.push(fieldErrors.required(field)); continue; }
      if (seen.has(expression)) { errors.push(fieldErrors.duplicate(field, expression)); continue; }
      seen.add(expression);
      try {
        compiled.push(CompiledExpression.compile(expression, 'request'));
      } catch (err) {
        if (!(err instanceof CelCompileError)) throw err;
        errors.push(fieldErrors.invalid(field, expression, err.message));
      }
    }
    return { conditions: compiled.length > 0 ? new MatchConditions(compiled) : undefined, errors };
  }

  /** Evaluates the conditions against a SubjectAccessReview v1 spec. */
  evaluate(spec: Readonly<Record<string, unknown>>): MatchOutcome {
    const request = celInput(spec);
    const failures: string[] = [];
    for (const c of this.expressions) {
      let value: unknown;
      try {
        value = c.evaluate(request);
      } catch (err) {
        failures.push(`cel evaluation error: expression '${c.expression}' resulted in error: ${(err as Error).message}`);
        continue;
      }
      if (typeof value !== 'boolean') failures.push(`cel evaluation error: expression '${c.expression}' eval result type should be bool but got ${typeof value}`);
      else if (!value) return { matches: false };
    }
    return failures.length > 0 ? { matches: false, error: failures.join(', ') } : { matches: true };
  }
}
