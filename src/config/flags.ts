/**
 * Command-line configuration: kube-apiserver's flag names, parsed the way
 * pflag/cobra parse them, so existing manifests and muscle memory carry over.
 *
 * One declarative table lists every flag, by concern under src/config/flag-table/; the code
 * here is generic over that table: tokenizing argv, parsing values by type, applying environment
 * overrides, validating, building the frozen ServerConfig and printing help.
 */
import { resolve } from 'node:path';
import { ADMISSION_FLAGS } from './flag-table/admission.js';
import { AUDIT_FLAGS } from './flag-table/audit.js';
import { AUTHENTICATION_FLAGS } from './flag-table/authentication.js';
import { AUTHORIZATION_FLAGS, validateAuthorizationOptions } from './flag-table/authorization.js';
import { SERVING_FLAGS } from './flag-table/serving.js';
import { STORAGE_FLAGS } from './flag-table/storage.js';
import { type AnyFlagSpec, FlagError, KINDS, type Kind, quote } from './flag-spec.js';
import type { ServerConfig } from './server-config.js';

const PROGRAM = 'orch-apiserver';

/** ORCH_APISERVER_SECURE_PORT sets --secure-port, and so on; the command line wins. */
const ENV_PREFIX = 'ORCH_APISERVER_';

const FLAGS: readonly AnyFlagSpec[] = [
  ...ADMISSION_FLAGS, ...AUDIT_FLAGS, ...AUTHENTICATION_FLAGS, ...AUTHORIZATION_FLAGS, ...SERVING_FLAGS, ...STORAGE_FLAGS,
];

/** Flags that only make sense as a pair: giving one without the other is an error. */
const REQUIRED_TOGETHER: readonly (readonly [keyof ServerConfig, keyof ServerConfig])[] = [
  ['tlsCertFile', 'tlsPrivateKeyFile'],
  ['etcdCertFile', 'etcdKeyFile'],
];

// ---------------------------------------------------------------------------
// Generic parsing over the table

/**
 * A table entry with its type resolved. The table ties each flag's type to its
 * value and config key; past this point values travel as unknown.
 */
interface Flag {
  readonly name: string;
  readonly shorthand?: string;
  readonly isBool: boolean;
  readonly key: keyof ServerConfig;
  readonly default?: unknown;
  readonly help: string;
  readonly validate?: (value: unknown, flag: string) => string | undefined;
  readonly kind: Kind<unknown>;
  /** How pflag names the flag in errors: `--name`, or `-v, --v` when it has a shorthand. */
  readonly label: string;
  readonly envName: string;
}

const TABLE: readonly Flag[] = FLAGS.map((spec) => ({
  ...spec,
  isBool: spec.type === 'bool',
  validate: spec.validate as Flag['validate'],
  kind: KINDS[spec.type] as Kind<unknown>,
  label: spec.shorthand === undefined ? `--${spec.name}` : `-${spec.shorthand}, --${spec.name}`,
  envName: ENV_PREFIX + spec.name.toUpperCase().replaceAll('-', '_'),
}));
const BY_NAME = new Map(TABLE.map((flag) => [flag.name, flag]));
const BY_SHORTHAND = new Map(
  TABLE.flatMap((flag) => (flag.shorthand === undefined ? [] : [[flag.shorthand, flag] as const])),
);

interface Occurrence {
  readonly flag: Flag;
  readonly text: string;
}

/**
 * Parses the command line (without node and script), over environment
 * variables ORCH_APISERVER_<FLAG_NAME> (empty ones ignored), over defaults.
 * `-h`/`--help` anywhere returns the help text instead. Throws FlagError.
 */
export function parseFlags(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
): { config: ServerConfig } | { help: string } {
  const occurrences = tokenize(argv);
  if (occurrences === 'help') return { help: helpText() };

  const values = new Map<keyof ServerConfig, unknown>();
  for (const flag of TABLE) if (flag.default !== undefined) values.set(flag.key, flag.default);

  // Environment values stand in for defaults, so they too are replaced, not appended to.
  for (const flag of TABLE) {
    const text = env[flag.envName];
    if (text === undefined || text === '') continue;
    try {
      values.set(flag.key, flag.kind.parse(text, values.get(flag.key), true));
    } catch (error) {
      throw new FlagError(
        `invalid value ${quote(text)} in ${flag.envName} for ${quote(flag.label)} flag: ${(error as Error).message}`,
      );
    }
  }

  const explicit = new Set<string>();
  for (const flag of TABLE) {
    const text = env[flag.envName];
    if (text !== undefined && text !== '') explicit.add(flag.name);
  }
  const seen = new Set<Flag>();
  for (const { flag, text } of occurrences) {
    explicit.add(flag.name);
    try {
      values.set(flag.key, flag.kind.parse(text, values.get(flag.key), !seen.has(flag)));
    } catch (error) {
      throw new FlagError(`invalid argument ${quote(text)} for ${quote(flag.label)} flag: ${(error as Error).message}`);
    }
    seen.add(flag);
  }

  for (const flag of TABLE) {
    const value = values.get(flag.key);
    const problem = value === undefined ? undefined : flag.validate?.(value, `--${flag.name}`);
    if (problem !== undefined) throw new FlagError(problem);
  }
  for (const [a, b] of REQUIRED_TOGETHER) {
    if (values.has(a) !== values.has(b)) {
      throw new FlagError(`${flagFor(a)} and ${flagFor(b)} must be specified together`);
    }
  }

  validateAuthorizationOptions(values, explicit);

  values.set('dataDir', resolve(values.get('dataDir') as string));
  values.set('explicitFlags', [...explicit].sort());
  for (const value of values.values()) if (Array.isArray(value) || (typeof value === 'object' && value?.constructor === Object)) Object.freeze(value);
  // Every required key has a flag with a default, so the entries make a whole ServerConfig.
  return { config: Object.freeze(Object.fromEntries(values)) as unknown as ServerConfig };
}

function flagFor(key: keyof ServerConfig): string {
  return `--${TABLE.find((flag) => flag.key === key)!.name}`;
}

/**
 * Splits argv into flag occurrences with pflag's syntax: `--name=value`,
 * `--name value`, bools as `--name` or `--name=false`, shorthands as `-v=4`,
 * `-v 4` or `-v4`, and `--` ending the flags. Underscores in names read as
 * dashes (Kubernetes' WordSepNormalizeFunc). Stops at the first -h/--help.
 */
function tokenize(argv: readonly string[]): Occurrence[] | 'help' {
  const occurrences: Occurrence[] = [];
  const positional: string[] = [];
  let i = 0;
  // A flag's value may be the next argument, even if it starts with a dash, as in pflag.
  const next = (): string | undefined => (i < argv.length ? argv[i++] : undefined);

  while (i < argv.length) {
    const arg = argv[i++]!;
    if (arg === '--') {
      positional.push(...argv.slice(i));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positional.push(arg);
    } else if (arg.startsWith('--')) {
      const body = arg.slice(2);
      if (body.startsWith('-') || body.startsWith('=')) throw new FlagError(`bad flag syntax: ${arg}`);
      const eq = body.indexOf('=');
      const name = eq < 0 ? body : body.slice(0, eq);
      const normalized = name.replaceAll('_', '-');
      const flag = BY_NAME.get(normalized);
      if (flag === undefined) {
        if (normalized === 'help') return 'help';
        throw new FlagError(`unknown flag: --${name}`);
      }
      const text = eq >= 0 ? body.slice(eq + 1) : flag.isBool ? 'true' : next();
      if (text === undefined) throw new FlagError(`flag needs an argument: ${arg}`);
      occurrences.push({ flag, text });
    } else {
      // Several shorthands may share one dash (`-ab`); a value ends the group.
      let shorthands = arg.slice(1);
      while (shorthands !== '') {
        const letter = String.fromCodePoint(shorthands.codePointAt(0)!);
        const rest = shorthands.slice(letter.length);
        const flag = BY_SHORTHAND.get(letter);
        if (flag === undefined) {
          if (letter === 'h') return 'help';
          throw new FlagError(`unknown shorthand flag: '${letter}' in -${shorthands}`);
        }
        let text: string | undefined;
        if (rest.startsWith('=')) text = rest.slice(1);
        else if (flag.isBool) text = 'true';
        else if (rest !== '') text = rest;
        else text = next();
        if (text === undefined) throw new FlagError(`flag needs an argument: '${letter}' in -${shorthands}`);
        occurrences.push({ flag, text });
        shorthands = flag.isBool && !rest.startsWith('=') ? rest : '';
      }
    }
  }
  if (positional.length > 0) throw new FlagError(`unexpected argument ${quote(positional[0]!)}`);
  return occurrences;
}

/** Usage and every flag, sorted by name, laid out as pflag's FlagUsages. */
export function helpText(): string {
  const rows = [
    ...TABLE.map((flag) => {
      const shown = flag.default === undefined ? undefined : flag.kind.show(flag.default);
      return {
        name: flag.name,
        left: `${flag.shorthand === undefined ? '    ' : `-${flag.shorthand}, `}--${flag.name}${
          flag.kind.typeName === '' ? '' : ` ${flag.kind.typeName}`
        }`,
        right: flag.help + (shown === undefined ? '' : ` (default ${shown})`),
      };
    }),
    { name: 'help', left: '-h, --help', right: `help for ${PROGRAM}` },
  ].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

  const width = Math.max(...rows.map((row) => row.left.length)) + 3;
  const lines = rows.map(
    (row) => `  ${row.left.padEnd(width)}${row.right.replaceAll('\n', `\n${' '.repeat(width + 2)}`)}`,
  );
  return [
    'Usage:',
    `  ${PROGRAM} [flags]`,
    '',
    'Every flag can also be set through an environment variable named after it, such as',
    `${ENV_PREFIX}SECURE_PORT for --secure-port; the command line takes precedence.`,
    '',
    'Flags:',
    ...lines,
    '',
  ].join('\n');
}
