/**
 * The component configuration files Kubernetes reads (AuthenticationConfiguration,
 * AuthorizationConfiguration): YAML or JSON, with a kind and an apiVersion of
 * `apiserver.config.orch.io` or Kubernetes' `apiserver.config.k8s.io` (files written from
 * Kubernetes' documentation load unchanged), decoded strictly against a schema: an unknown field
 * is an error naming it. Messages are Kubernetes' decoder's.
 */
import { DecodeError, decodeValue, type DecodeOutcome, type StructSchema } from '../api/schema.js';
import { fromYaml } from '../codec/yaml.js';

export const configGroups = ['apiserver.config.orch.io', 'apiserver.config.k8s.io'];

export interface ConfigFileType {
  kind: string;
  versions: readonly string[];
  schema: StructSchema;
}

/** The file's text as the type's fields (apiVersion and kind included); throws on malformed files. */
export function decodeConfigFile(text: string, type: ConfigFileType): Record<string, unknown> {
  if (text.length === 0) throw new Error('empty config data');
  let raw: unknown;
  try {
    raw = fromYaml(text);
  } catch (err) {
    throw new Error(`couldn't get version/kind; yaml parse error: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new Error("Object 'Kind' is missing in the configuration");
  const { apiVersion, kind } = raw as { apiVersion?: unknown; kind?: unknown };
  if (typeof kind !== 'string' || kind === '') throw new Error("Object 'Kind' is missing in the configuration");
  if (typeof apiVersion !== 'string' || apiVersion === '') throw new Error("Object 'apiVersion' is missing in the configuration");
  const [group, version] = apiVersion.split('/', 2);
  if (kind !== type.kind || !configGroups.includes(group) || !type.versions.includes(version ?? '')) {
    throw new Error(`no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)}`);
  }
  const outcome: DecodeOutcome = { unknownFields: [] };
  let decoded: Record<string, unknown>;
  try {
    decoded = decodeValue(type.schema, raw, '', type.schema.goName, outcome) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof DecodeError) throw new Error(err.message);
    throw err;
  }
  if (outcome.unknownFields.length > 0) {
    throw new Error(`strict decoding error: ${outcome.unknownFields.map((f) => `unknown field ${JSON.stringify(f)}`).join(', ')}`);
  }
  return decoded;
}
