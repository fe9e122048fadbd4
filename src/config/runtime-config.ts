/**
 * `--runtime-config`: which built-in API group-versions (and resources) are served, with
 * kube-apiserver's rules (MergeAPIResourceConfigs): GA versions on by default, beta and alpha off
 * (no built-in beta here predates 1.22); then `api/all`, `api/ga`, `api/beta`, `api/alpha` in that
 * order; then `<group>/<version>` keys; then `<group>/<version>/<resource>` keys. A key alone means
 * true; `v1` (and `v1/<resource>`) names the core group. Custom resources are governed by their CRDs, not by this flag.
 */
export type RuntimeConfig = Readonly<Record<string, string>>;

const matchers: ReadonlyArray<[key: string, matches: (version: string) => boolean]> = [
  ['api/all', () => true],
  ['api/ga', (v) => /^v\d+$/.test(v)],
  ['api/beta', (v) => /^v\d+beta\d+$/.test(v)],
  ['api/alpha', (v) => /^v\d+alpha\d+$/.test(v)],
];
const matcherKeys = new Set(matchers.map(([k]) => k));

/** Go's strconv.ParseBool, an empty value meaning true (getRuntimeConfigValue). */
function value(config: RuntimeConfig, key: string): boolean {
  const text = config[key];
  if (text === '') return true;
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(text)) return false;
  throw new Error(`invalid value of ${key}: ${text}, err: strconv.ParseBool: parsing ${JSON.stringify(text)}: invalid syntax`);
}

/** ConfigurationMap.Set: comma-separated `key[=value]` pairs merged into `previous`. */
export function parseRuntimeConfig(text: string, previous: RuntimeConfig = {}): RuntimeConfig {
  const out: Record<string, string> = { ...previous };
  for (const item of text.split(',')) {
    if (item === '') continue;
    const eq = item.indexOf('=');
    out[(eq < 0 ? item : item.slice(0, eq)).trim()] = eq < 0 ? '' : item.slice(eq + 1).trim();
  }
  checkRuntimeConfig(out);
  return Object.freeze(out);
}

/** The key shapes and values kube-apiserver accepts (ParseGroups, getRuntimeConfigValue). */
export function checkRuntimeConfig(config: RuntimeConfig): void {
  const keys = Object.keys(config);
  for (const key of keys) {
    if (!matcherKeys.has(key) && key !== 'v1') {
      const tokens = key.split('/');
      if ((tokens.length !== 2 && tokens.length !== 3) || tokens.some((t) => t === '')) throw new Error(`runtime-config invalid key ${key}`);
    }
    value(config, key);
  }
  if (keys.length === 1 && keys[0] === 'api/all' && !value(config, 'api/all')) throw new Error('invalid key with only api/all=false');
}

function groupVersionKey(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

/** The groups the keys name that no built-in serves (kube-apiserver: `unknown api groups a,b`). */
export function unknownGroups(config: RuntimeConfig, known: ReadonlySet<string>): string[] {
  const out = new Set<string>();
  for (const key of Object.keys(config)) {
    // `v1` and `v1/<resource>` name the core group
    if (matcherKeys.has(key) || key === 'v1' || /^v1\/[^/]+$/.test(key)) continue;
    const group = key.split('/')[0];
    if (!known.has(group)) out.add(group);
  }
  return [...out].sort();
}

/**
 * Whether a built-in resource is served. `groups` are the names the group goes by (ours and
 * Kubernetes'): a key under either name applies.
 */
export function apiEnabled(config: RuntimeConfig, groups: readonly string[], version: string, resource: string): boolean {
  let enabled = /^v\d+$/.test(version);
  for (const [key, matches] of matchers) if (Object.hasOwn(config, key) && matches(version)) enabled = value(config, key);
  for (const group of groups) {
    const gv = groupVersionKey(group, version);
    if (Object.hasOwn(config, gv)) enabled = value(config, gv);
  }
  for (const group of groups) {
    const gvr = `${groupVersionKey(group, version)}/${resource}`;
    if (Object.hasOwn(config, gvr)) enabled = value(config, gvr);
  }
  return enabled;
}
