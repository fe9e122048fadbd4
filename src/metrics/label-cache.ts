/**
 * A metric's cells by label values: the first use of a tuple binds its cell, every later one walks
 * a tree of maps keyed by the values themselves — `root.next(a).next(b).leaf(c)` — allocating
 * nothing (no key string is built).
 */
export class LabelNode<T> {
  private readonly children = new Map<string, LabelNode<T>>();
  private readonly leaves = new Map<string, T>();

  constructor(private readonly bind: (values: string[]) => T, private readonly path: readonly string[] = []) {}

  /** the node of the next label's value */
  next(value: string): LabelNode<T> {
    let child = this.children.get(value);
    if (!child) {
      child = new LabelNode(this.bind, [...this.path, value]);
      this.children.set(value, child);
    }
    return child;
  }

  /** the bound child for the last label's value */
  leaf(value: string): T {
    let bound = this.leaves.get(value);
    if (bound === undefined) {
      bound = this.bind([...this.path, value]);
      this.leaves.set(value, bound);
    }
    return bound;
  }
}
