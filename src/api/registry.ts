/** The set of kinds this server serves, looked up by URL parts. */
import { namespaceKind } from './core/namespace.js';
import { secretKind } from './core/secret.js';
import { serviceAccountKind } from './core/service-account.js';
import { eventKind } from './events/event.js';
import { underKubernetesName } from './authentication/group.js';
import { selfSubjectReviewKind } from './authentication/self-subject-review.js';
import { tokenReviewKind } from './authentication/token-review.js';
import type { KindDeclaration } from './kind.js';

export class KindRegistry {
  private readonly byPath = new Map<string, KindDeclaration>();
  readonly kinds: readonly KindDeclaration[];

  constructor(kinds: readonly KindDeclaration[]) {
    this.kinds = kinds;
    for (const k of kinds) this.byPath.set(`${k.group}/${k.version}/${k.resource}`, k);
  }

  lookup(group: string, version: string, resource: string): KindDeclaration | undefined {
    return this.byPath.get(`${group}/${version}/${resource}`);
  }

  /** group → versions served, core group as '' */
  groups(): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const k of this.kinds) {
      const versions = out.get(k.group) ?? [];
      if (!versions.includes(k.version)) versions.push(k.version);
      out.set(k.group, versions);
    }
    return out;
  }

  inGroupVersion(group: string, version: string): KindDeclaration[] {
    return this.kinds.filter((k) => k.group === group && k.version === version);
  }
}

export const builtinKinds: readonly KindDeclaration[] = [
  namespaceKind, serviceAccountKind, secretKind, eventKind, tokenReviewKind, selfSubjectReviewKind,
  // Kubernetes' group name, which kubectl auth whoami hard-codes (one line per alias)
  underKubernetesName(tokenReviewKind),
  underKubernetesName(selfSubjectReviewKind),
];
