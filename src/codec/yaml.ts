/**
 * YAML as Kubernetes writes and reads it (sigs.k8s.io/yaml over go-yaml): keys sorted, sequences
 * not indented under their key, strings that need quoting double-quoted, no line folding; read
 * with the JSON schema so that `yes` or `1.0` stay what JSON would make of them.
 *
 * Read with the JSON bodies' nesting limit. Aliases are allowed, as go-yaml allows them, but the
 * document is copied into a plain tree: an alias that contains itself is refused, and so is one
 * whose expansion would be much larger than the text (go-yaml's "excessive aliasing").
 */
import { setOwn } from '../api/own-member.js';
import { maxNestingDepth } from './json.js';
import { jsYaml } from './libraries.js';

export function toYaml(value: unknown): string {
  return jsYaml().dump(value, { sortKeys: true, seqNoIndent: true, quoteStyle: 'double', lineWidth: -1, noRefs: true });
}

/** Expanded nodes a document may have beyond one per character of its text. */
const aliasAllowance = 10_000;

class YamlLimitError extends Error {}

/** A tree copy of a loaded document, without shared nodes; throws at a cycle, depth or size past the limits. */
function plainTree(value: unknown, budget: { nodes: number }, ancestors: Set<object>, depth: number): unknown {
  if (--budget.nodes < 0) throw new YamlLimitError('yaml: document contains excessive aliasing');
  if (value === null || typeof value !== 'object') return value;
  if (depth >= maxNestingDepth) throw new YamlLimitError(`yaml: exceeded max depth of ${maxNestingDepth}`);
  if (ancestors.has(value)) throw new YamlLimitError('yaml: an alias refers to a node that contains it');
  ancestors.add(value);
  let out: unknown;
  if (Array.isArray(value)) {
    out = value.map((v) => plainTree(v, budget, ancestors, depth + 1));
  } else {
    const copy: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      setOwn(copy, k, plainTree(v, budget, ancestors, depth + 1));
    }
    out = copy;
  }
  ancestors.delete(value);
  return out;
}

export function fromYaml(text: string): unknown {
  let loaded: unknown;
  try {
    // js-yaml counts the collection being opened: one more than the nesting allowed
    const yaml = jsYaml();
    loaded = yaml.load(text, { schema: yaml.JSON_SCHEMA, maxDepth: maxNestingDepth + 1 });
  } catch (err) {
    if ((err as Error).message.startsWith('nesting exceeded maxDepth')) throw new YamlLimitError(`yaml: exceeded max depth of ${maxNestingDepth}`);
    throw err;
  }
  return plainTree(loaded, { nodes: text.length + aliasAllowance }, new Set(), 0);
}
