/**
 * The runtime API registry: group → version → resource → the KindDeclaration served there.
 * Entries are added and removed while the server runs (custom resources, tests); routing,
 * discovery, OpenAPI, the stores, the encoder pool and the controllers all read it, and those that
 * cache what they derive from it (discovery documents, OpenAPI) rebuild when its generation moves.
 */
import { apiVersionOf, storageResourceOf, type KindDeclaration } from '../kind.js';

export type RegistryListener = (change: { added: readonly KindDeclaration[]; removed: readonly KindDeclaration[] }) => void;

function pathKey(group: string, version: string, resource: string): string {
  return `${group}/${version}/${resource}`;
}

export class ApiRegistry {
  private readonly byPath = new Map<string, KindDeclaration>();
  /** `apiVersion/kind` → declaration (the REST mapping) */
  private readonly byKind = new Map<string, KindDeclaration>();
  /** storage table → the storage version's declaration */
  private readonly byTable = new Map<string, KindDeclaration>();
  private readonly listeners = new Set<RegistryListener>();
  /** bumped on every change: a cache derived from the registry is current while its generation matches */
  generation = 0;

  constructor(kinds: readonly KindDeclaration[] = []) {
    for (const k of kinds) this.index(k);
  }

  private index(k: KindDeclaration): void {
    this.byPath.set(pathKey(k.group, k.version, k.resource), k);
    this.byKind.set(`${apiVersionOf(k)}/${k.kind}`, k);
    if (!k.storage) this.byTable.set(storageResourceOf(k), k);
  }

  private unindex(k: KindDeclaration): void {
    this.byPath.delete(pathKey(k.group, k.version, k.resource));
    if (this.byKind.get(`${apiVersionOf(k)}/${k.kind}`) === k) this.byKind.delete(`${apiVersionOf(k)}/${k.kind}`);
    if (this.byTable.get(storageResourceOf(k)) === k) this.byTable.delete(storageResourceOf(k));
  }

  /** Every served declaration, views included, in registration order. */
  get kinds(): KindDeclaration[] { return [...this.byPath.values()]; }

  /** Serves `kinds` from now on; a path already served is an error (nothing is added then). */
  add(...kinds: KindDeclaration[]): void {
    for (const k of kinds) {
      if (this.byPath.has(pathKey(k.group, k.version, k.resource))) {
        throw new Error(`${k.resource} in ${k.group || 'core'}/${k.version} is already served`);
      }
    }
    for (const k of kinds) this.index(k);
    this.changed(kinds, []);
  }

  /** Stops serving these declarations (their stored objects stay in storage). */
  remove(...kinds: KindDeclaration[]): void {
    const removed = kinds.filter((k) => this.byPath.get(pathKey(k.group, k.version, k.resource)) === k);
    for (const k of removed) this.unindex(k);
    if (removed.length) this.changed([], removed);
  }

  /**
   * Registers the storage version of a resource that is not served itself (a CRD's `served: false`
   * storage version): the served views store through it, and what works on stored objects
   * (storageKinds, storageKind) finds it, but it is neither routed nor discovered.
   */
  addUnservedStorage(k: KindDeclaration): void {
    const table = storageResourceOf(k);
    if (this.byTable.has(table)) throw new Error(`${table} already has a storage version`);
    this.byTable.set(table, k);
  }

  removeUnservedStorage(k: KindDeclaration): void {
    if (this.byTable.get(storageResourceOf(k)) === k) this.byTable.delete(storageResourceOf(k));
  }

  onChange(listener: RegistryListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  lookup(group: string, version: string, resource: string): KindDeclaration | undefined {
    return this.byPath.get(pathKey(group, version, resource));
  }

  /** group → versions served, core group as '', in registration order */
  groups(): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const k of this.byPath.values()) {
      const versions = out.get(k.group) ?? [];
      if (!versions.includes(k.version)) versions.push(k.version);
      out.set(k.group, versions);
    }
    return out;
  }

  inGroupVersion(group: string, version: string): KindDeclaration[] {
    return this.kinds.filter((k) => k.group === group && k.version === version);
  }

  /**
   * One declaration per stored resource: the storage version itself, not its views. What works
   * on stored objects whatever their version (namespace deletion, garbage collection) uses these.
   */
  storageKinds(): KindDeclaration[] {
    return [...this.byTable.values()];
  }

  /** The declaration an `apiVersion` and `kind` pair names (an ownerReference's): the REST mapping. */
  kindFor(apiVersion: string, kind: string): KindDeclaration | undefined {
    return this.byKind.get(`${apiVersion}/${kind}`);
  }

  /** The declaration whose representation is stored in a storage table. */
  storageKind(table: string): KindDeclaration | undefined {
    return this.byTable.get(table);
  }

  private changed(added: readonly KindDeclaration[], removed: readonly KindDeclaration[]): void {
    this.generation++;
    for (const listener of [...this.listeners]) listener({ added, removed });
  }
}
