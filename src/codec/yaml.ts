/**
 * YAML as Kubernetes writes and reads it (sigs.k8s.io/yaml over go-yaml): keys sorted, sequences
 * not indented under their key, strings that need quoting double-quoted, no line folding; read
 * with the JSON schema so that `yes` or `1.0` stay what JSON would make of them.
 */
import * as yaml from 'js-yaml';

export function toYaml(value: unknown): string {
  return yaml.dump(value, { sortKeys: true, seqNoIndent: true, quoteStyle: 'double', lineWidth: -1, noRefs: true });
}

export function fromYaml(text: string): unknown {
  return yaml.load(text, { schema: yaml.JSON_SCHEMA });
}
