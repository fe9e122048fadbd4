/**
 * An ABAC policy file (`--authorization-policy-file`): one JSON `Policy` a line, blank lines and
 * `#` comments skipped (pkg/auth/authorizer/abac NewFromFile). Lines of
 * `abac.authorization.kubernetes.io/v1beta1` (or this server's `abac.authorization.orch.io`) carry
 * a `spec`; unversioned lines are the v0 format, converted as Kubernetes converts them.
 */
import { readFileSync } from 'node:fs';
import { parseJsonAsGo } from '../../../api/validation/go-json-syntax.js';

export interface AbacPolicy {
  user: string;
  group: string;
  readonly: boolean;
  apiGroup: string;
  resource: string;
  namespace: string;
  nonResourcePath: string;
}

const versions = ['abac.authorization.kubernetes.io/v1beta1', 'abac.authorization.orch.io/v1beta1'];
const stringFields = ['user', 'group', 'apiGroup', 'resource', 'namespace', 'nonResourcePath'] as const;

export class PolicyFileError extends Error {}

function specOf(raw: Record<string, unknown>, v0: boolean): AbacPolicy {
  for (const field of [...stringFields, 'readonly']) {
    const want = field === 'readonly' ? 'boolean' : 'string';
    if (raw[field] !== undefined && typeof raw[field] !== want) throw new Error(`spec.${field}: must be a ${want}`);
  }
  const s = (k: (typeof stringFields)[number]) => (raw[k] as string | undefined) ?? '';
  const policy: AbacPolicy = {
    user: s('user'), group: s('group'), readonly: raw.readonly === true, apiGroup: s('apiGroup'), resource: s('resource'),
    namespace: s('namespace'), nonResourcePath: s('nonResourcePath'),
  };
  if (v0) {
    // v0: no subject means every authenticated user; no resource or namespace means all; groups and paths are open
    if (!policy.user && !policy.group) policy.group = 'system:authenticated';
    policy.namespace ||= '*';
    policy.resource ||= '*';
    policy.apiGroup = '*';
    policy.nonResourcePath = '*';
  }
  return policy;
}

function parseLine(text: string): AbacPolicy {
  let raw: unknown;
  try {
    raw = parseJsonAsGo(text);
  } catch (err) {
    // the line goes through the API machinery's JSON decoder, which says so
    throw new Error(`couldn't get version/kind; json parse error: ${(err as Error).message}`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new Error('a policy must be a JSON object');
  const obj = raw as Record<string, unknown>;
  if (obj.apiVersion === undefined) return specOf(obj, true);
  if (!versions.includes(String(obj.apiVersion))) throw new Error(`apiVersion: unsupported value ${JSON.stringify(obj.apiVersion)}, expected ${versions[0]}`);
  if (obj.kind !== 'Policy') throw new Error(`kind: must be "Policy", got ${JSON.stringify(obj.kind)}`);
  if (!obj.spec || typeof obj.spec !== 'object') throw new Error('spec: Required value');
  return specOf(obj.spec as Record<string, unknown>, false);
}

export function parsePolicyText(text: string, path: string): AbacPolicy[] {
  const policies: AbacPolicy[] = [];
  text.split('\n').forEach((line, i) => {
    const trimmed = line.trim();
    if (!trimmed || trimmed.startsWith('#')) return;
    try {
      policies.push(parseLine(trimmed));
    } catch (err) {
      throw new PolicyFileError(`error reading policy file ${path}, line ${i + 1}: ${trimmed}: ${(err as Error).message}`);
    }
  });
  return policies;
}

export function loadPolicyFile(path: string): AbacPolicy[] {
  let text: string;
  try { text = readFileSync(path, 'utf8'); } catch (err) { throw new PolicyFileError(`error reading policy file ${path}: ${(err as Error).message}`); }
  return parsePolicyText(text, path);
}
