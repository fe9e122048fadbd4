/**
 * The watchers of one resource, indexed so that a change reaches only those that may care: a
 * watcher is filed under the most selective term its selectors pin down — an object name
 * (`fieldSelector=metadata.name=x`, a watch on one object), a label value (`app=web`,
 * `tier in (a,b)`), a namespace — or, selecting nothing pinnable, under all. A change then visits
 * the watchers filed under its object's (and previous version's) name, label values and namespace,
 * plus the unfiled ones: never a scan of every watcher. Candidates still run their full selector.
 */

export type IndexTerm =
  | { by: 'name'; value: string }
  | { by: 'label'; key: string; values: readonly string[] }
  | { by: 'namespace'; value: string }
  | { by: 'all' };

/** What the index reads of an object version. */
export interface IndexedObject {
  name: string;
  namespace?: string;
  labels?: Readonly<Record<string, string>>;
}

function addTo<K, T>(map: Map<K, Set<T>>, key: K, w: T): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(w);
}

function removeFrom<K, T>(map: Map<K, Set<T>>, key: K, w: T): void {
  const set = map.get(key);
  if (!set) return;
  set.delete(w);
  if (set.size === 0) map.delete(key);
}

export class WatcherIndex<T> {
  private readonly unfiled = new Set<T>();
  private readonly byName = new Map<string, Set<T>>();
  private readonly byNamespace = new Map<string, Set<T>>();
  /** label key → value → watchers */
  private readonly byLabel = new Map<string, Map<string, Set<T>>>();
  private readonly terms = new Map<T, IndexTerm>();

  get size(): number { return this.terms.size; }

  add(w: T, term: IndexTerm): void {
    this.terms.set(w, term);
    switch (term.by) {
      case 'name': addTo(this.byName, term.value, w); return;
      case 'namespace': addTo(this.byNamespace, term.value, w); return;
      case 'all': this.unfiled.add(w); return;
      case 'label': {
        let values = this.byLabel.get(term.key);
        if (!values) this.byLabel.set(term.key, (values = new Map()));
        for (const v of term.values) addTo(values, v, w);
      }
    }
  }

  delete(w: T): void {
    const term = this.terms.get(w);
    if (!term) return;
    this.terms.delete(w);
    switch (term.by) {
      case 'name': removeFrom(this.byName, term.value, w); return;
      case 'namespace': removeFrom(this.byNamespace, term.value, w); return;
      case 'all': this.unfiled.delete(w); return;
      case 'label': {
        const values = this.byLabel.get(term.key);
        if (!values) return;
        for (const v of term.values) removeFrom(values, v, w);
        if (values.size === 0) this.byLabel.delete(term.key);
      }
    }
  }

  /** Every watcher (bookmarks, shutdown). */
  all(): IterableIterator<T> { return this.terms.keys(); }

  /** Calls `visit` once for each watcher a change of `object` (previously `previous`) may concern. */
  forCandidates(object: IndexedObject, previous: IndexedObject | undefined, visit: (w: T) => void): void {
    for (const w of this.unfiled) visit(w);
    if (this.unfiled.size === this.terms.size) return;
    const reached: Set<T>[] = [];
    for (const o of previous ? [object, previous] : [object]) {
      const byName = this.byName.get(o.name);
      if (byName) reached.push(byName);
      const byNamespace = o.namespace === undefined ? undefined : this.byNamespace.get(o.namespace);
      if (byNamespace) reached.push(byNamespace);
      if (this.byLabel.size > 0 && o.labels) {
        for (const key in o.labels) {
          const byValue = this.byLabel.get(key)?.get(o.labels[key]);
          if (byValue) reached.push(byValue);
        }
      }
    }
    if (reached.length === 1) {
      for (const w of reached[0]) visit(w);
      return;
    }
    // a watcher may be reached twice (filed under two values of an `in`, or by both versions)
    const seen = new Set<T>();
    for (const set of reached) for (const w of set) if (!seen.has(w)) { seen.add(w); visit(w); }
  }
}
