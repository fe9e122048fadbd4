/**
 * Feature gates as kube-apiserver's `--feature-gates=A=true,B=false` sets them,
 * with Kubernetes' parsing rules and error wording.
 */

export type FeatureStage = 'ALPHA' | 'BETA' | 'GA' | 'DEPRECATED';

export interface FeatureSpec {
  readonly stage: FeatureStage;
  readonly default: boolean;
  /** a GA (or removed-behaviour) gate that can no longer be set to anything but its default */
  readonly lockToDefault?: boolean;
}

export type FeatureSpecs = Readonly<Record<string, FeatureSpec>>;

/**
 * The gates this server consults, with their Kubernetes 1.32 stage and default.
 * To consult another gate, add it here; callers needing a different set pass
 * their own table to `defaultFeatureGates`.
 */
export const KNOWN_FEATURES: FeatureSpecs = freezeSpecs({
  AnonymousAuthConfigurableEndpoints: { stage: 'BETA', default: true },
  APIResponseCompression: { stage: 'BETA', default: true },
  CBORServingAndStorage: { stage: 'ALPHA', default: false },
  ComponentSLIs: { stage: 'BETA', default: true },
  ConsistentListFromCache: { stage: 'BETA', default: true },
  CRDValidationRatcheting: { stage: 'BETA', default: true },
  CustomResourceFieldSelectors: { stage: 'GA', default: true, lockToDefault: true },
  AggregatedDiscoveryEndpoint: { stage: 'GA', default: true, lockToDefault: true },
  KMSv1: { stage: 'DEPRECATED', default: false },
  StructuredAuthenticationConfiguration: { stage: 'BETA', default: true },
  StructuredAuthorizationConfiguration: { stage: 'BETA', default: true },
  WatchFromStorageWithoutResourceVersion: { stage: 'BETA', default: false },
  WatchList: { stage: 'BETA', default: true },
});

/** An immutable gate set: the known gates plus the ones set explicitly. */
export interface FeatureGates {
  readonly known: FeatureSpecs;
  /** Gates set explicitly, whatever their default. */
  readonly overrides: Readonly<Record<string, boolean>>;
  /** Throws for a gate not in `known`: asking for one is a typo in the caller (Kubernetes panics). */
  enabled(name: string): boolean;
  /** what setting deprecated or GA gates warrants saying at start (Kubernetes logs the same) */
  readonly warnings: readonly string[];
}

/** Every gate at its default. */
export function defaultFeatureGates(known: FeatureSpecs = KNOWN_FEATURES): FeatureGates {
  return makeGates(known, {});
}

/**
 * Parses `A=true,B=false` on top of `base` (later settings win), as repeated
 * `--feature-gates` flags accumulate. Empty items are skipped and names and
 * values are trimmed, as in Kubernetes; every item is checked for syntax
 * before any name is looked up, so the first error reported matches theirs.
 */
export function parseFeatureGates(text: string, base: FeatureGates = defaultFeatureGates()): FeatureGates {
  const settings: [name: string, value: boolean][] = [];
  for (const item of text.split(',')) {
    if (item === '') continue;
    const eq = item.indexOf('=');
    const name = (eq < 0 ? item : item.slice(0, eq)).trim();
    if (eq < 0) throw new Error(`missing bool value for ${name}`);
    const raw = item.slice(eq + 1).trim();
    try {
      settings.push([name, parseBool(raw)]);
    } catch (error) {
      throw new Error(`invalid value of ${name}=${raw}, err: ${(error as Error).message}`);
    }
  }
  const overrides = { ...base.overrides };
  for (const [name, value] of settings) {
    if (!Object.hasOwn(base.known, name)) throw new Error(`unrecognized feature gate: ${name}`);
    const spec = base.known[name];
    if (spec.lockToDefault && value !== spec.default) {
      throw new Error(`cannot set feature gate ${name} to ${value}, feature is locked to ${spec.default}`);
    }
    overrides[name] = value;
  }
  return makeGates(base.known, overrides);
}

/**
 * One line per gate, sorted, in Kubernetes' help format: `Name=true|false (BETA - default=true)`;
 * GA and deprecated gates are left out, as KnownFeatures leaves them out.
 */
export function describeFeatureGates(known: FeatureSpecs = KNOWN_FEATURES): string[] {
  return Object.keys(known)
    .filter((name) => known[name].stage !== 'GA' && known[name].stage !== 'DEPRECATED')
    .sort()
    .map((name) => `${name}=true|false (${known[name].stage} - default=${known[name].default})`);
}

/**
 * Go's strconv.ParseBool, error wording included; exported for boolean flags,
 * which Kubernetes parses the same way.
 */
export function parseBool(text: string): boolean {
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(text)) return false;
  throw new Error(`strconv.ParseBool: parsing ${JSON.stringify(text)}: invalid syntax`);
}

/** The warnings featuregate.Set logs for gates that are on their way out. */
function warningsOf(known: FeatureSpecs, overrides: Readonly<Record<string, boolean>>): string[] {
  return Object.keys(overrides).sort().flatMap((name) => {
    const stage = known[name].stage;
    if (stage === 'DEPRECATED') return [`Setting deprecated feature gate ${name}=${overrides[name]}. It will be removed in a future release.`];
    if (stage === 'GA') return [`Setting GA feature gate ${name}=${overrides[name]}. It will be removed in a future release.`];
    return [];
  });
}

function makeGates(known: FeatureSpecs, overrides: Record<string, boolean>): FeatureGates {
  const frozen = Object.freeze(overrides);
  return Object.freeze({
    known,
    overrides: frozen,
    warnings: Object.freeze(warningsOf(known, frozen)),
    enabled(name: string): boolean {
      if (!Object.hasOwn(known, name)) throw new Error(`feature gate "${name}" is not registered`);
      return Object.hasOwn(frozen, name) ? frozen[name] : known[name].default;
    },
  });
}

function freezeSpecs(specs: Record<string, FeatureSpec>): FeatureSpecs {
  for (const spec of Object.values(specs)) Object.freeze(spec);
  return Object.freeze(specs);
}
