/**
 * The selectors a request narrows itself to, as authorizers see them (AuthorizeWithSelectors,
 * beta and on in Kubernetes 1.32): a list, watch or deletecollection's `fieldSelector` and
 * `labelSelector`, or a review's selector attributes, as authorization/v1 requirements. As in
 * Kubernetes, a selector that does not parse narrows nothing, and a requirement that cannot be
 * read (a label's `gt`, an operator unknown here) is left out: requirements only narrow, so what
 * remains is as broad as the request or broader.
 */
import { FieldSelector } from '../../api/selection/field-selector.js';
import { LabelSelector, type LabelOperator } from '../../api/selection/label-selector.js';

export interface SelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

/** What a selector narrows to, and whether part of it could not be read (a review says so). */
export interface ReadSelector {
  requirements: SelectorRequirement[] | undefined;
  ignored?: 'partially ignored' | 'ignored';
}

interface SelectorAttributes { rawSelector?: string; requirements?: ReadonlyArray<{ key?: string; operator?: string; values?: string[] }> }

const knownOperators = new Set<string>(['In', 'NotIn', 'Exists', 'DoesNotExist']);

const labelOperators: Partial<Record<LabelOperator, SelectorRequirement['operator']>> = {
  in: 'In', '=': 'In', '==': 'In', notin: 'NotIn', '!=': 'NotIn', exists: 'Exists', '!': 'DoesNotExist',
};

function read(requirements: SelectorRequirement[], failed: boolean): ReadSelector {
  const some = requirements.length > 0 ? requirements : undefined;
  return failed ? { requirements: some, ignored: some ? 'partially ignored' : 'ignored' } : { requirements: some };
}

/** The selector, or undefined when it does not parse. */
function parsed<T>(parse: () => T): T | undefined {
  try {
    return parse();
  } catch {
    return undefined;
  }
}

/** fields.ParseSelector, then fieldSelectorToAuthorizationAPI: `=` is In, `!=` NotIn, one value each. */
function readFieldText(text: string): ReadSelector {
  const selector = parsed(() => FieldSelector.parse(text));
  if (!selector) return read([], true);
  return read(selector.requirements.map((r) => ({ key: r.field, operator: r.operator === '=' ? 'In' : 'NotIn', values: [r.value] })), false);
}

/** labels.Parse, then labelSelectorToAuthorizationAPI (which leaves out what it has no operator for). */
function readLabelText(text: string): ReadSelector {
  const selector = parsed(() => LabelSelector.parse(text));
  if (!selector) return read([], true);
  const out: SelectorRequirement[] = [];
  for (const r of selector.requirements) {
    const operator = labelOperators[r.operator];
    if (operator === undefined) continue;
    out.push(r.values.length > 0 ? { key: r.key, operator, values: [...r.values] } : { key: r.key, operator });
  }
  return read(out, false);
}

export function fieldSelectorRequirements(text: string): SelectorRequirement[] | undefined {
  return readFieldText(text).requirements;
}

export function labelSelectorRequirements(text: string): SelectorRequirement[] | undefined {
  return readLabelText(text).requirements;
}

type SentRequirement = NonNullable<SelectorAttributes['requirements']>[number];

/**
 * A review's selector (ResourceAttributesFrom): its requirements when it has any, each read by
 * `readOne` (undefined: it cannot be read), else its raw selector parsed by `readText`.
 */
function reviewSelector(selector: SelectorAttributes | undefined, readOne: (r: SentRequirement) => SelectorRequirement | undefined, readText: (text: string) => ReadSelector): ReadSelector {
  if (selector?.requirements?.length) {
    const out: SelectorRequirement[] = [];
    let failed = false;
    for (const r of selector.requirements) {
      const requirement = readOne(r);
      if (requirement) out.push(requirement);
      else failed = true;
    }
    return read(out, failed);
  }
  return selector?.rawSelector ? readText(selector.rawSelector) : { requirements: undefined };
}

/** As fieldSelectorAsSelector reads a requirement: In and NotIn with exactly one value; Exists, DoesNotExist, more values and unknown operators cannot be read. */
function readFieldRequirement(r: SentRequirement): SelectorRequirement | undefined {
  return (r.operator === 'In' || r.operator === 'NotIn') && r.values?.length === 1 ? { key: r.key ?? '', operator: r.operator, values: [r.values[0]] } : undefined;
}

/** As labelSelectorAsSelector reads a requirement: the four operators (validation refused the rest of what it checks). */
function readLabelRequirement(r: SentRequirement): SelectorRequirement | undefined {
  const operator = r.operator as SelectorRequirement['operator'];
  if (!knownOperators.has(operator)) return undefined;
  return r.values?.length ? { key: r.key ?? '', operator, values: [...r.values] } : { key: r.key ?? '', operator };
}

export function reviewFieldSelector(selector: SelectorAttributes | undefined): ReadSelector {
  return reviewSelector(selector, readFieldRequirement, readFieldText);
}

export function reviewLabelSelector(selector: SelectorAttributes | undefined): ReadSelector {
  return reviewSelector(selector, readLabelRequirement, readLabelText);
}
