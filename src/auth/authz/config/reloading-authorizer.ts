/**
 * The authorizer chain of `--authorization-config`, swapped when the file changes as
 * kube-apiserver reloads it: a change that does not parse, validate or build is logged and the
 * chain in force stays until the file changes again. Requests in flight finish on the chain they
 * started with.
 */
import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import type { UserInfo } from '../../user.js';
import { UnionAuthorizer, type Attributes, type Authorizer, type Decision, type RuleSet } from '../authorizer.js';
import type { ModeAuthorizers } from '../modes.js';
import { aggregateFieldErrors } from '../../../status/status-error.js';
import { parseAuthorizationConfiguration } from './authorization-config.js';
import { validateAuthorizationConfiguration } from './validation.js';

const pollIntervalMs = 1_000;

export interface ReloadLog { info(message: string): void; error(message: string): void }

/** Parses, validates and builds a file's chain; throws naming the file and the fields at fault. */
async function loadChain(path: string, text: string, modes: ModeAuthorizers): Promise<{ chain: UnionAuthorizer; types: string[] }> {
  try {
    const config = parseAuthorizationConfiguration(text);
    const validated = await validateAuthorizationConfiguration(config);
    if (validated.errors.length > 0) throw new Error(aggregateFieldErrors(validated.errors));
    return { chain: new UnionAuthorizer(modes.build(config, validated.matchConditions)), types: config.authorizers.map((a) => a.type) };
  } catch (err) {
    throw new Error(`--authorization-config ${JSON.stringify(path)}: ${(err as Error).message}`);
  }
}

export class ReloadingAuthorizer implements Authorizer {
  readonly name = 'authorization-config';

  private constructor(private current: UnionAuthorizer, private tracked: string, private readonly path: string,
    private readonly modes: ModeAuthorizers, private readonly log: ReloadLog,
    /** the authorizer types of the configuration loaded at start */
    readonly types: string[]) {}

  /** Loads `path` (refusing a bad file) and keeps following it. */
  static async start(path: string, modes: ModeAuthorizers, log: ReloadLog): Promise<ReloadingAuthorizer> {
    const text = readFileSync(path, 'utf8');
    const { chain, types } = await loadChain(path, text, modes);
    const authorizer = new ReloadingAuthorizer(chain, text, path, modes, log, types);
    watchFile(path, { interval: pollIntervalMs, persistent: false }, () => void authorizer.reload());
    return authorizer;
  }

  authorize(attributes: Attributes): Decision | Promise<Decision> {
    return this.current.authorize(attributes);
  }

  rulesFor(user: UserInfo, namespace: string): RuleSet {
    return this.current.rulesFor(user, namespace);
  }

  get readsSelectors(): boolean { return this.current.readsSelectors; }

  private async reload(): Promise<void> {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (err) {
      this.log.error(`reloading authorization config: ${(err as Error).message}`);
      return;
    }
    if (text === this.tracked) return;
    this.tracked = text;
    try {
      this.current = (await loadChain(this.path, text, this.modes)).chain;
      this.log.info(`reloaded authorization config from ${this.path}`);
    } catch (err) {
      this.log.error(`reloading authorization config failed, keeping the previous one: ${(err as Error).message}`);
    }
  }

  stop(): void {
    unwatchFile(this.path);
  }
}
