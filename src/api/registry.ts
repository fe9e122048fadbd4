/** The set of kinds this server serves, looked up by URL parts. */
import { namespaceKind } from './core/namespace.js';
import { secretKind } from './core/secret.js';
import { serviceAccountKind } from './core/service-account.js';
import { eventKind } from './events/event.js';
import { apiVersionOf, type KindDeclaration } from './kind.js';

export class KindRegistry {
  private readonly byPath = new Map<string, KindDeclaration>();
  private readonly byKind = new Map<string, KindDeclaration>();
  private readonly byStorage = new Map<string, KindDeclaration>();
  readonly kinds: readonly KindDeclaration[];

  constructor(kinds: readonly KindDeclaration[]) {
    this.kinds = kinds;
    for (const k of kinds) {
      this.byPath.set(`${k.group}/${k.version}/${k.resource}`, k);
      this.byKind.set(`${apiVersionOf(k)}/${k.kind}`, k);
      if (!this.byStorage.has(k.resource)) this.byStorage.set(k.resource, k);
    }
  }

  lookup(group: string, version: string, resource: string): KindDeclaration | undefined {
    return this.byPath.get(`${group}/${version}/${resource}`);
  }

  /** The kind an `apiVersion` and `kind` pair names (an ownerReference's), if served: the REST mapping. */
  kindFor(apiVersion: string, kind: string): KindDeclaration | undefined {
    return this.byKind.get(`${apiVersion}/${kind}`);
  }

  /** The kind whose objects storage (and the read model) keep under `resource`. */
  storedAs(resource: string): KindDeclaration | undefined {
    return this.byStorage.get(resource);
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

export const builtinKinds: readonly KindDeclaration[] = [namespaceKind, serviceAccountKind, secretKind, eventKind];
