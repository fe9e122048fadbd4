/**
 * The selectors a request narrows itself to, as authorizers see them (AuthorizeWithSelectors,
 * beta and on in Kubernetes 1.32): a list, watch or deletecollection's `fieldSelector` and
 * `labelSelector`, or a review's selector attributes, as authorization/v1 requirements. As in
 * Kubernetes, a selector that does not parse narrows nothing, and a requirement whose operator has
 * no authorization/v1 form (a label's `gt`, `lt`) is left out: requirements only narrow, so what
 * remains is as broad as the request or broader.
 */
import { FieldSelector } from '../../api/selection/field-selector.js';
import { LabelSelector, type LabelOperator } from '../../api/selection/label-selector.js';

export interface SelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

const knownOperators = new Set<string>(['In', 'NotIn', 'Exists', 'DoesNotExist']);

const labelOperators: Partial<Record<LabelOperator, SelectorRequirement['operator']>> = {
  in: 'In', '=': 'In', '==': 'In', notin: 'NotIn', '!=': 'NotIn', exists: 'Exists', '!': 'DoesNotExist',
};

/** The selector, or undefined when it does not parse (it then narrows nothing). */
function parsed<T>(parse: () => T): T | undefined {
  try {
    return parse();
  } catch {
    return undefined;
  }
}

/** fields.ParseSelector, then fieldSelectorToAuthorizationAPI: `=` is In, `!=` NotIn, one value each. */
export function fieldSelectorRequirements(text: string): SelectorRequirement[] | undefined {
  const selector = parsed(() => FieldSelector.parse(text));
  if (!selector) return undefined;
  const out = selector.requirements.map((r): SelectorRequirement => ({ key: r.field, operator: r.operator === '=' ? 'In' : 'NotIn', values: [r.value] }));
  return out.length > 0 ? out : undefined;
}

/** labels.Parse, then labelSelectorToAuthorizationAPI. */
export function labelSelectorRequirements(text: string): SelectorRequirement[] | undefined {
  const selector = parsed(() => LabelSelector.parse(text));
  if (!selector) return undefined;
  const out: SelectorRequirement[] = [];
  for (const r of selector.requirements) {
    const operator = labelOperators[r.operator];
    if (operator === undefined) continue;
    out.push(r.values.length > 0 ? { key: r.key, operator, values: [...r.values] } : { key: r.key, operator });
  }
  return out.length > 0 ? out : undefined;
}

/** A review's selector attributes: its requirements as given (those with an operator authorizers know), else its raw selector parsed. */
export function reviewSelectorRequirements(
  selector: { rawSelector?: string; requirements?: ReadonlyArray<{ key?: string; operator?: string; values?: string[] }> } | undefined,
  parse: (text: string) => SelectorRequirement[] | undefined,
): SelectorRequirement[] | undefined {
  if (!selector) return undefined;
  if (selector.requirements?.length) {
    const known: SelectorRequirement[] = [];
    for (const r of selector.requirements) {
      const operator = r.operator as SelectorRequirement['operator'];
      if (!knownOperators.has(operator)) continue;
      known.push(r.values?.length ? { key: r.key ?? '', operator, values: [...r.values] } : { key: r.key ?? '', operator });
    }
    return known.length > 0 ? known : undefined;
  }
  return selector.rawSelector ? parse(selector.rawSelector) : undefined;
}
