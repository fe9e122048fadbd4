/**
 * The server's parts a kind declaration needs at request time (an authenticator for TokenReview,
 * a token issuer for TokenRequest), looked up by typed key: declarations stay static data and
 * name what they need, the assembly provides it.
 */

/** A typed slot; `T` is the type of what the assembly puts there. */
export interface ServiceKey<T> {
  readonly name: string;
  /** never set: carries T for the type checker */
  readonly type?: T;
}

export function serviceKey<T>(name: string): ServiceKey<T> {
  return Object.freeze({ name });
}

export class Services {
  private readonly entries = new Map<ServiceKey<unknown>, unknown>();

  set<T>(key: ServiceKey<T>, value: T): this {
    this.entries.set(key, value);
    return this;
  }

  get<T>(key: ServiceKey<T>): T {
    if (!this.entries.has(key)) throw new Error(`no ${key.name} is configured on this server`);
    return this.entries.get(key) as T;
  }

  has(key: ServiceKey<unknown>): boolean {
    return this.entries.has(key);
  }
}
