/**
 * Evaluates a schema's validation rules on a custom resource (apiextensions' CEL validator):
 * each rule at every value its schema node describes, `self` bound to that value and, on update,
 * `oldSelf` to the old value where it correlates (same property; same key in a map-type list;
 * same value in a set), transition rules skipped where there is none unless `optionalOldSelf`.
 * A failed rule reports its message, messageExpression, reason and fieldPath as Kubernetes does.
 * Each evaluation is metered: past the per-call limit, or past what is left of the object's budget,
 * the failure is reported and no further rule runs (apiextensions' validateExpressions). On update
 * with ratcheting, a failed rule without oldSelf is dropped where the value did not change.
 */
import { cel } from '../../cel/engine.js';
import type { Structural } from '../../api/schema/structural.js';
import type { Correlated } from '../../api/schema/correlation.js';
import { jsonEqual } from '../../api/schema/value-validation.js';
import { fieldErrors, type FieldError } from '../../status/status-error.js';
import { compileRule, type CompiledRule, type Program } from './rules.js';
import { metered, perCallLimit, runtimeCostBudget, type Metered } from './runtime-cost.js';
import { celValueOf, optionalOf, plainOf } from './values.js';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function ruleText(rule: CompiledRule['rule']): string {
  return (rule.message?.trim() || rule.rule.trim());
}

function childPath(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

const outOfBudget = 'validation failed due to running out of cost budget, no further validation rules will be run';

/** One object's validation: its errors, what is left of its cost budget, `stopped` once a rule ran out of it or past its own limit. */
interface Pass { errs: FieldError[]; remaining: number; stopped: boolean }

/**
 * Where a node stands for ratcheting (apiextensions' ratchetingOptions): its correlation with the
 * old object, else the nearest correlated ancestor's. Undefined without ratcheting.
 */
interface Ratchet { current?: Correlated; parent?: Correlated }

function keyRatchet(r: Ratchet | undefined, field: string, atRoot: boolean): Ratchet | undefined {
  if (!r?.current) return r;
  // apiVersion and kind are the same in both (both are converted to the served version)
  if (atRoot && (field === 'apiVersion' || field === 'kind')) return {};
  return { current: r.current.key(field), parent: r.current };
}

function indexRatchet(r: Ratchet | undefined, i: number): Ratchet | undefined {
  return r?.current ? { current: r.current.index(i), parent: r.current } : r;
}

/** A failed rule's error is dropped when its node (or, uncorrelated, its nearest correlated ancestor) did not change. */
function ratchets(r: Ratchet | undefined): boolean {
  if (!r) return false;
  return r.current ? r.current.deepEqual() : r.parent?.deepEqual() ?? false;
}

export class RuleValidator {
  private readonly compiled = new WeakMap<Structural, CompiledRule[]>();
  /** false when the schema has no rules: nothing to walk */
  readonly active: boolean;

  constructor(private readonly root: Structural) {
    this.active = this.compileTree(root);
  }

  private compileTree(s: Structural): boolean {
    let any = false;
    if (s.validations?.length) {
      const rules = s.validations.map((r) => compileRule(r, s, '').compiled).filter((c): c is CompiledRule => c !== undefined);
      this.compiled.set(s, rules);
      any = rules.length > 0;
    }
    for (const v of Object.values(s.properties ?? {})) any = this.compileTree(v) || any;
    if (typeof s.additionalProperties === 'object') any = this.compileTree(s.additionalProperties) || any;
    if (s.items) any = this.compileTree(s.items) || any;
    return any;
  }

  /** The rules' errors; on update with `correlation`, failures of unchanged values ratcheted away. */
  validate(obj: unknown, old?: unknown, budget = runtimeCostBudget, correlation?: Correlated): FieldError[] {
    const pass: Pass = { errs: [], remaining: budget, stopped: false };
    if (this.active) this.walk(this.root, obj, old, '', pass, correlation && { current: correlation });
    return pass.errs;
  }

  private walk(s: Structural, value: unknown, old: unknown, path: string, pass: Pass, ratchet: Ratchet | undefined): void {
    if (value === undefined || value === null) return;
    for (const rule of this.compiled.get(s) ?? []) {
      this.evaluate(rule, s, value, old, path, pass, ratchet);
      if (pass.stopped) return;
    }
    if (isObject(value)) {
      const oldObject = isObject(old) ? old : undefined;
      for (const [k, v] of Object.entries(value)) {
        const prop = s.properties && Object.hasOwn(s.properties, k) ? s.properties[k] : typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
        if (prop) this.walk(prop, v, oldObject && Object.hasOwn(oldObject, k) ? oldObject[k] : undefined, childPath(path, k), pass, keyRatchet(ratchet, k, path === ''));
        if (pass.stopped) return;
      }
    } else if (Array.isArray(value) && s.items) {
      const oldList = Array.isArray(old) ? old : [];
      for (let i = 0; i < value.length && !pass.stopped; i++) this.walk(s.items, value[i], this.correlate(s, value[i], oldList), `${path}[${i}]`, pass, indexRatchet(ratchet, i));
    }
  }

  /** One metered evaluation, charged to the budget: undefined when it ran out (the error is pushed, validation stops). */
  private run(program: Program, vars: { self: unknown; oldSelf: unknown }, pass: Pass): Metered | undefined {
    const outcome = metered(program.baseCost, Math.min(perCallLimit, pass.remaining), () => program.run(vars));
    if (outcome.cost > pass.remaining) {
      pass.stopped = true;
      return undefined;
    }
    pass.remaining -= outcome.cost;
    return outcome;
  }

  /** The old element an element correlates with: by key in map lists, by value in sets, none in atomic lists. */
  private correlate(s: Structural, item: unknown, oldList: readonly unknown[]): unknown {
    if (s.listType === 'set') return oldList.find((o) => jsonEqual(o, item));
    if (s.listType !== 'map' || !isObject(item)) return undefined;
    const keys = s.listMapKeys ?? [];
    return oldList.find((o) => isObject(o) && keys.every((k) => jsonEqual(o[k], item[k])));
  }

  private evaluate(rule: CompiledRule, s: Structural, value: unknown, old: unknown, path: string, pass: Pass, ratchet: Ratchet | undefined): void {
    const optional = rule.rule.optionalOldSelf === true;
    if (rule.usesOldSelf && old === undefined && !optional) return;
    const type = s.type ?? '';
    if (pass.remaining <= 0) {
      pass.stopped = true;
      pass.errs.push(fieldErrors.invalid(path, type, outOfBudget));
      return;
    }
    const self = celValueOf(value, s);
    const oldSelf = optional ? optionalOf(old === undefined ? undefined : celValueOf(old, s)) : celValueOf(old, s);
    const outcome = this.run(rule.program, { self, oldSelf }, pass);
    if (!outcome) {
      pass.errs.push(fieldErrors.invalid(path, type, outOfBudget));
      return;
    }
    if (outcome.exceeded) {
      pass.stopped = true;
      pass.errs.push(fieldErrors.invalid(path, type, `'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleText(rule.rule)}`));
      return;
    }
    const result = outcome.result;
    if (cel().isCelError(result)) {
      const message = (result as Error).message.replace(/^field not found: /, 'no such key: ');
      const detail = message.startsWith('found no matching overload')
        ? `'no such overload': call arguments did not match a supported operator, function or macro signature for rule: ${ruleText(rule.rule)}`
        : `${message} evaluating rule: ${ruleText(rule.rule)}`;
      pass.errs.push(fieldErrors.invalid(path, type, detail));
      return;
    }
    if (result === true) return;
    let target = path;
    for (const seg of rule.fieldPath ?? []) target = typeof seg === 'number' ? `${target}[${seg}]` : childPath(target, seg);
    const { detail, failure } = this.message(rule, self, oldSelf, pass);
    if (failure !== undefined) {
      pass.errs.push(fieldErrors.invalid(target, type, failure));
      return;
    }
    // transition rules (oldSelf) never ratchet: they are about the change
    if (!rule.usesOldSelf && ratchets(ratchet)) return;
    switch (rule.rule.reason) {
      case 'FieldValueForbidden': pass.errs.push(fieldErrors.forbidden(target, detail)); break;
      case 'FieldValueRequired': pass.errs.push(fieldErrors.required(target, detail)); break;
      case 'FieldValueDuplicate': pass.errs.push(fieldErrors.duplicate(target, type)); break;
      default: pass.errs.push(fieldErrors.invalid(target, type, detail));
    }
  }

  /**
   * messageExpression's string when it gives one, else message, else `failed rule: <rule>`; a
   * failure (evaluateMessageExpression's) when the messageExpression ran out of cost.
   */
  private message(rule: CompiledRule, self: unknown, oldSelf: unknown, pass: Pass): { detail: string; failure?: string } {
    if (rule.messageProgram) {
      const outcome = this.run(rule.messageProgram, { self, oldSelf }, pass);
      if (!outcome) return { detail: '', failure: 'messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run' };
      if (outcome.exceeded) {
        pass.stopped = true;
        return { detail: '', failure: 'messageExpression evaluation failed due to: operation cancelled: actual cost limit exceeded' };
      }
      const out = plainOf(outcome.result);
      if (typeof out === 'string' && out.trim() && !out.includes('\n')) return { detail: out };
    }
    return { detail: rule.rule.message?.trim() || `failed rule: ${rule.rule.rule.trim()}` };
  }
}
