/**
 * The garbage collector's graph: for every owner uid, the objects whose ownerReferences name it,
 * so that an owner's dependents are found without a scan. Objects are named by their storage key
 * (`<resource>/<namespace>/<name>` or `<resource>/<name>`), as the read model's change feed does.
 */
export class OwnerIndex {
  private readonly dependents = new Map<string, Set<string>>();
  private readonly owners = new Map<string, readonly string[]>();

  /** Records the owner uids the object at `key` names now (none: it is no one's dependent). */
  set(key: string, ownerUids: readonly string[]): void {
    for (const uid of this.owners.get(key) ?? []) {
      if (ownerUids.includes(uid)) continue;
      const set = this.dependents.get(uid);
      set?.delete(key);
      if (set?.size === 0) this.dependents.delete(uid);
    }
    for (const uid of ownerUids) {
      let set = this.dependents.get(uid);
      if (!set) this.dependents.set(uid, set = new Set());
      set.add(key);
    }
    if (ownerUids.length > 0) this.owners.set(key, [...ownerUids]);
    else this.owners.delete(key);
  }

  remove(key: string): void {
    this.set(key, []);
  }

  /** Keys of the objects that name `ownerUid` among their owners. */
  dependentsOf(ownerUid: string): string[] {
    return [...(this.dependents.get(ownerUid) ?? [])];
  }

  /** How many owner uids are named by some object (for tests and metrics). */
  get ownerCount(): number {
    return this.dependents.size;
  }
}

/** A storage key's resource and its path inside the resource's table. */
export function splitKey(key: string): { resource: string; path: string } {
  const slash = key.indexOf('/');
  return { resource: key.slice(0, slash), path: key.slice(slash + 1) };
}
