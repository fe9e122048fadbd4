/**
 * Evaluates a schema's validation rules on a custom resource (apiextensions' CEL validator):
 * each rule at every value its schema node describes, `self` bound to that value and, on update,
 * `oldSelf` to the old value where it correlates (same property; same key in a map-type list;
 * same value in a set), transition rules skipped where there is none unless `optionalOldSelf`.
 * A failed rule reports its message, messageExpression, reason and fieldPath as Kubernetes does.
 */
import { isCelError } from '@bufbuild/cel';
import type { Structural } from '../../api/schema/structural.js';
import { jsonEqual } from '../../api/schema/value-validation.js';
import { fieldErrors, type FieldError } from '../../status/status-error.js';
import { compileRule, type CompiledRule } from './rules.js';
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

  validate(obj: unknown, old?: unknown): FieldError[] {
    const errs: FieldError[] = [];
    if (this.active) this.walk(this.root, obj, old, '', errs);
    return errs;
  }

  private walk(s: Structural, value: unknown, old: unknown, path: string, errs: FieldError[]): void {
    if (value === undefined || value === null) return;
    for (const rule of this.compiled.get(s) ?? []) this.evaluate(rule, s, value, old, path, errs);
    if (isObject(value)) {
      const oldObject = isObject(old) ? old : undefined;
      for (const [k, v] of Object.entries(value)) {
        const prop = s.properties && Object.hasOwn(s.properties, k) ? s.properties[k] : typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
        if (prop) this.walk(prop, v, oldObject && Object.hasOwn(oldObject, k) ? oldObject[k] : undefined, childPath(path, k), errs);
      }
    } else if (Array.isArray(value) && s.items) {
      const oldList = Array.isArray(old) ? old : [];
      value.forEach((item, i) => this.walk(s.items!, item, this.correlate(s, item, oldList), `${path}[${i}]`, errs));
    }
  }

  /** The old element an element correlates with: by key in map lists, by value in sets, none in atomic lists. */
  private correlate(s: Structural, item: unknown, oldList: readonly unknown[]): unknown {
    if (s.listType === 'set') return oldList.find((o) => jsonEqual(o, item));
    if (s.listType !== 'map' || !isObject(item)) return undefined;
    const keys = s.listMapKeys ?? [];
    return oldList.find((o) => isObject(o) && keys.every((k) => jsonEqual(o[k], item[k])));
  }

  private evaluate(rule: CompiledRule, s: Structural, value: unknown, old: unknown, path: string, errs: FieldError[]): void {
    const optional = rule.rule.optionalOldSelf === true;
    if (rule.usesOldSelf && old === undefined && !optional) return;
    const self = celValueOf(value, s);
    const oldSelf = optional ? optionalOf(old === undefined ? undefined : celValueOf(old, s)) : celValueOf(old, s);
    const result = rule.program({ self, oldSelf });
    const type = s.type ?? '';
    if (isCelError(result)) {
      const message = (result as Error).message.replace(/^field not found: /, 'no such key: ');
      const detail = message.startsWith('found no matching overload')
        ? `'no such overload': call arguments did not match a supported operator, function or macro signature for rule: ${ruleText(rule.rule)}`
        : `${message} evaluating rule: ${ruleText(rule.rule)}`;
      errs.push(fieldErrors.invalid(path, type, detail));
      return;
    }
    if (result === true) return;
    let target = path;
    for (const seg of rule.fieldPath ?? []) target = typeof seg === 'number' ? `${target}[${seg}]` : childPath(target, seg);
    const detail = this.message(rule, self, oldSelf);
    switch (rule.rule.reason) {
      case 'FieldValueForbidden': errs.push(fieldErrors.forbidden(target, detail)); break;
      case 'FieldValueRequired': errs.push(fieldErrors.required(target, detail)); break;
      case 'FieldValueDuplicate': errs.push(fieldErrors.duplicate(target, type)); break;
      default: errs.push(fieldErrors.invalid(target, type, detail));
    }
  }

  /** messageExpression's string when it gives one, else message, else `failed rule: <rule>`. */
  private message(rule: CompiledRule, self: unknown, oldSelf: unknown): string {
    if (rule.messageProgram) {
      const out = plainOf(rule.messageProgram({ self, oldSelf }));
      if (typeof out === 'string' && out.trim() && !out.includes('\n')) return out;
    }
    return rule.rule.message?.trim() || `failed rule: ${rule.rule.rule.trim()}`;
  }
}
