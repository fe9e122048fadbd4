/**
 * Kubernetes' group names beside the spec's: an unchanged client hard-codes `events.k8s.io`,
 * `coordination.k8s.io`, ... The alias serves the same stored objects under the other group; only
 * the apiVersion differs, and every response names the group that was asked.
 */
import type { KObject } from '../meta.js';
import { apiVersionOf, type KindDeclaration } from '../kind.js';

/** The spec's group → the Kubernetes name real clients use for it. */
export const kubernetesGroupNames: Readonly<Record<string, string>> = {
  'events.orch.io': 'events.k8s.io',
  'coordination.orch.io': 'coordination.k8s.io',
  'rbac.authorization.orch.io': 'rbac.authorization.k8s.io',
  'authorization.orch.io': 'authorization.k8s.io',
  'authentication.orch.io': 'authentication.k8s.io',
  'apiextensions.orch.io': 'apiextensions.k8s.io',
  'flowcontrol.apiserver.orch.io': 'flowcontrol.apiserver.k8s.io',
};

function withApiVersion(obj: KObject, apiVersion: string): KObject {
  return obj.apiVersion === apiVersion ? obj : { ...obj, apiVersion };
}

/** `kind` served under `group` as well, over the same stored objects. */
export function aliasOf(kind: KindDeclaration, group: string): KindDeclaration {
  if (kind.storage) throw new Error(`${kind.resource}: an alias is made of the storage declaration, not of a view`);
  // a kind served without storage (a review) answers in the group it was asked in: nothing to convert
  if (kind.virtualCreate) return { ...kind, group };
  const storedApiVersion = apiVersionOf(kind);
  const aliasApiVersion = apiVersionOf({ group, version: kind.version });
  return {
    ...kind,
    group,
    storage: { group: kind.group, resource: kind.resource },
    conversion: {
      fromStorage: (stored) => withApiVersion(stored, aliasApiVersion),
      toStorage: (served) => withApiVersion(served, storedApiVersion),
    },
  };
}

/**
 * The declarations to serve for `kinds`: each, and its alias where Kubernetes names the group
 * otherwise. An aliased kind's short names and categories are listed under Kubernetes' name only:
 * kubectl resolves them through every group that lists them, warning of a short name's other
 * groups (`kubectl get crd`) and listing a category's resources once per group
 * (`kubectl get api-extensions`), where kube-apiserver has one group.
 */
export function withKubernetesAliases(kinds: readonly KindDeclaration[]): KindDeclaration[] {
  return kinds.flatMap((k) => {
    const alias = !k.storage ? kubernetesGroupNames[k.group] : undefined;
    return alias ? [{ ...k, shortNames: [], categories: undefined }, aliasOf(k, alias)] : [k];
  });
}
