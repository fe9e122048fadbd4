/**
 * `x-orch-validations` (`x-kubernetes-validations`) rules: compiled once per schema with
 * @bufbuild/cel and Kubernetes' libraries, checked when a CRD is written (compilation, the
 * rule's fields, transition rules only where old values correlate, the cost estimate), and
 * evaluated on custom resources with `self` (and `oldSelf` on update) bound at the rule's node,
 * their runtime cost metered (runtime-cost.ts).
 */
import type { CelEnv } from '@bufbuild/cel';
import { cel } from '../../cel/engine.js';
import type { Structural, ValidationRule } from '../../api/schema/structural.js';
import { fieldErrors, type FieldError } from '../../status/status-error.js';
import { parseJsonPath, type PathSegment } from '../json-path.js';
import { estimateCost, maxSize, perExpressionCostLimit, perSchemaCostLimit, type Expr } from './cost.js';
import { kubernetesLibraries } from './library.js';
import { formatFunctionNames } from './format-library.js';
import { freeIdentifiers } from '../../cel/ast.js';
import { instrument, meteredEnv } from './runtime-cost.js';

let env: CelEnv | undefined;
/** Rules' environment: Kubernetes' libraries, `self` and `oldSelf`, metered (built on the first rule). */
function ruleEnv(): CelEnv {
  if (env) return env;
  const { celEnv, CelScalar } = cel();
  return env = meteredEnv(celEnv({ funcs: [...kubernetesLibraries()], variables: { self: CelScalar.DYN, oldSelf: CelScalar.DYN } }));
}

const reasons = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];
const maxMessageLength = 2048;

/** A planned expression, and what it costs at each evaluation besides its calls (runtime-cost.ts). */
export interface Program {
  run(vars: { self: unknown; oldSelf: unknown }): unknown;
  baseCost: number;
}

export interface CompiledRule {
  rule: ValidationRule;
  program: Program;
  messageProgram?: Program;
  usesOldSelf: boolean;
  fieldPath?: PathSegment[];
  cost: number;
}

class CompileError extends Error {}

/** Parses and plans an expression; CompileError in Kubernetes' wording. */
function compileExpression(text: string, what: string): { program: Program; ast: Expr; free: Set<string> } {
  let ast: Expr | undefined;
  try {
    ast = cel().parse(text).expr;
  } catch (err) {
    throw new CompileError(`${what} failed: ERROR: ${(err as Error).message}`);
  }
  if (!ast) throw new CompileError(`${what} failed: ERROR: <input>:1:1: Syntax error: empty expression`);
  const free = new Set<string>();
  freeIdentifiers(ast, new Set(), free, formatFunctionNames);
  for (const name of free) {
    if (name !== 'self' && name !== 'oldSelf') throw new CompileError(`${what} failed: ERROR: <input>:1:1: undeclared reference to '${name}' (in container '')`);
  }
  // planned from a parse of its own: the cost estimate reads `ast`, the metered plan a rewritten copy
  const runtimeAst = cel().parse(text).expr as Expr;
  const baseCost = instrument(runtimeAst, formatFunctionNames);
  const run = cel().plan(ruleEnv(), runtimeAst) as unknown as Program['run'];
  return { program: { run, baseCost }, ast, free };
}

/** Compiles one rule of a schema node; errors with the rule's field paths. */
export function compileRule(rule: ValidationRule, s: Structural, path: string): { compiled?: CompiledRule; errs: FieldError[] } {
  const errs: FieldError[] = [];
  if (!rule.rule.trim()) return { errs: [fieldErrors.required(`${path}.rule`, 'rule is not specified')] };
  if (rule.message !== undefined) {
    if (!rule.message.trim()) errs.push(fieldErrors.invalid(`${path}.message`, rule.message, 'message must be non-empty if specified'));
    else if (rule.message.includes('\n')) errs.push(fieldErrors.invalid(`${path}.message`, rule.message, 'message must not contain line breaks'));
    else if (rule.message.length > maxMessageLength) errs.push(fieldErrors.tooLong(`${path}.message`, maxMessageLength));
  }
  if (rule.messageExpression !== undefined && !rule.messageExpression.trim()) {
    errs.push(fieldErrors.required(`${path}.messageExpression`, 'messageExpression must be non-empty if specified'));
  }
  if (rule.reason !== undefined && !reasons.includes(rule.reason)) errs.push(fieldErrors.notSupported(`${path}.reason`, rule.reason, reasons));
  let fieldPath: PathSegment[] | undefined;
  if (rule.fieldPath) {
    try {
      fieldPath = parseJsonPath(rule.fieldPath);
    } catch (err) {
      errs.push(fieldErrors.invalid(`${path}.fieldPath`, rule.fieldPath, `fieldPath must be a valid path: ${(err as Error).message}`));
    }
  }
  let compiled: CompiledRule | undefined;
  try {
    const { program, ast, free } = compileExpression(rule.rule, 'compilation');
    const cost = estimateCost(ast, new Map([['self', s], ['oldSelf', s]]));
    compiled = { rule, program, usesOldSelf: free.has('oldSelf'), fieldPath, cost };
  } catch (err) {
    if (!(err instanceof CompileError)) throw err;
    errs.push(fieldErrors.invalid(`${path}.rule`, rule.rule, err.message));
  }
  if (rule.messageExpression?.trim()) {
    try {
      const { program } = compileExpression(rule.messageExpression, 'messageExpression compilation');
      if (compiled) compiled.messageProgram = program;
    } catch (err) {
      if (!(err instanceof CompileError)) throw err;
      errs.push(fieldErrors.invalid(`${path}.messageExpression`, rule.messageExpression, err.message));
    }
  }
  if (compiled && rule.optionalOldSelf !== undefined && !compiled.usesOldSelf) {
    errs.push(fieldErrors.invalid(`${path}.optionalOldSelf`, rule.optionalOldSelf, 'may not be set if oldSelf is not used in rule'));
  }
  return { compiled, errs };
}

function costMessage(what: string, cost: number, limit: number): string {
  const factor = cost / limit;
  const text = factor > 100 ? 'more than 100x' : factor < 1.5 ? `${factor.toFixed(6)}x` : `${factor.toFixed(1)}x`;
  return `${what} exceeds budget by factor of ${text} (try simplifying the rule(s), or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}

/** Every rule of a CRD schema checked: compilation, fields, correlation of transition rules, cost. */
export function validateRules(root: Structural, rootPath: string): FieldError[] {
  const errs: FieldError[] = [];
  let total = 0;
  const visit = (s: Structural, path: string, cardinality: number, uncorrelatable: string | undefined) => {
    (s.validations ?? []).forEach((rule, i) => {
      const rulePath = `${path}.x-kubernetes-validations[${i}]`;
      const { compiled, errs: ruleErrs } = compileRule(rule, s, rulePath);
      errs.push(...ruleErrs);
      if (!compiled) return;
      if (compiled.usesOldSelf && uncorrelatable) {
        errs.push(fieldErrors.forbidden(`${rulePath}.rule`, `oldSelf cannot be used on the uncorrelatable portion of the schema within ${uncorrelatable}`));
      }
      if (compiled.cost > perExpressionCostLimit) {
        errs.push(fieldErrors.forbidden(`${rulePath}.rule`, costMessage('estimated rule cost', compiled.cost, perExpressionCostLimit)));
      }
      total += compiled.cost * cardinality;
    });
    for (const [k, v] of Object.entries(s.properties ?? {})) visit(v, `${path}.properties[${k}]`, cardinality, uncorrelatable);
    if (typeof s.additionalProperties === 'object') visit(s.additionalProperties, `${path}.additionalProperties`, cardinality * maxSize(s), uncorrelatable);
    if (s.items) {
      const correlated = s.listType === 'map' || s.listType === 'set';
      visit(s.items, `${path}.items`, cardinality * maxSize(s), uncorrelatable ?? (correlated ? undefined : `${path}.items`));
    }
  };
  visit(root, rootPath, 1, undefined);
  if (total > perSchemaCostLimit) {
    errs.push(fieldErrors.forbidden(rootPath, costMessage('x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema', total, perSchemaCostLimit)));
  }
  return errs;
}
