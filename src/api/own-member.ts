/**
 * Objects whose keys come from clients: label, annotation and Secret data keys may be
 * `__proto__`, `constructor` or `toString`, and must stay plain data. Assignment would call the
 * `__proto__` setter (dropping the key, or replacing the object's prototype), and a plain read
 * finds what Object.prototype has under those names; these helpers touch own properties only.
 */

/** Sets `key` as an own, enumerable data property. */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}

/** The own property `key`, or undefined. */
export function ownValue(target: Readonly<Record<string, unknown>>, key: string): unknown {
  return Object.hasOwn(target, key) ? target[key] : undefined;
}
