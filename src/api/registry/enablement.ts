/**
 * The built-in kinds `--runtime-config` leaves enabled: a disabled group-version or resource is
 * not registered, so it is absent from discovery and OpenAPI and its paths answer 404. Keys may
 * name a group by our name or Kubernetes'; a key naming a group no built-in serves refuses start.
 */
import { apiEnabled, unknownGroups, type RuntimeConfig } from '../../config/runtime-config.js';
import type { KindDeclaration } from '../kind.js';
import { kubernetesGroupNames } from './alias.js';

export function enabledKinds(kinds: readonly KindDeclaration[], config: RuntimeConfig): KindDeclaration[] {
  const known = new Set<string>();
  for (const k of kinds) {
    known.add(k.group);
    if (kubernetesGroupNames[k.group]) known.add(kubernetesGroupNames[k.group]);
  }
  const unknown = unknownGroups(config, known);
  if (unknown.length) throw new Error(`unknown api groups ${unknown.join(',')}`);
  return kinds.filter((k) => {
    const names = kubernetesGroupNames[k.group] ? [k.group, kubernetesGroupNames[k.group]] : [k.group];
    // a view of another group's objects (the core Event) follows its own group's setting
    return apiEnabled(config, names, k.version, k.resource);
  });
}
