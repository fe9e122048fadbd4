/**
 * --admission-control-config-file: an AdmissionConfiguration (apiserver.config.orch.io/v1, or
 * Kubernetes' apiserver.config.k8s.io/v1 and apiserver.k8s.io/v1alpha1) naming each plugin's
 * configuration, inline (`configuration`) or in a file (`path`, relative to this file), in YAML
 * or JSON. Problems are thrown as Errors that name the file: the server refuses to start.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { fromYaml } from '../codec/yaml.js';

const admissionConfigVersions = ['apiserver.config.orch.io/v1', 'apiserver.config.k8s.io/v1', 'apiserver.k8s.io/v1alpha1'];

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function readDocument(path: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`unable to read ${what} from ${JSON.stringify(path)} [${(err as Error).message}]`);
  }
  try {
    return fromYaml(text);
  } catch (err) {
    throw new Error(`unable to decode ${what} from ${JSON.stringify(path)}: ${(err as Error).message.split('\n')[0]}`);
  }
}

/** The configuration document of each plugin the file names (undefined: the file names none). */
export function readAdmissionConfig(path: string | undefined): Map<string, unknown> {
  const configs = new Map<string, unknown>();
  if (!path) return configs;
  const doc = readDocument(path, 'admission control configuration');
  if (!isRecord(doc) || doc.kind !== 'AdmissionConfiguration' || !admissionConfigVersions.includes(String(doc.apiVersion))) {
    throw new Error(`${path}: not an AdmissionConfiguration of ${admissionConfigVersions.join(', ')}`);
  }
  for (const plugin of Array.isArray(doc.plugins) ? doc.plugins : []) {
    if (!isRecord(plugin) || typeof plugin.name !== 'string' || !plugin.name) throw new Error(`${path}: every plugin needs a name`);
    if (plugin.configuration !== undefined) {
      configs.set(plugin.name, plugin.configuration);
    } else if (typeof plugin.path === 'string' && plugin.path) {
      const file = isAbsolute(plugin.path) ? plugin.path : join(dirname(path), plugin.path);
      configs.set(plugin.name, readDocument(file, `${plugin.name} configuration`));
    }
  }
  return configs;
}
