/**
 * The JWT authenticators of the authentication configuration, swapped when the file changes, as
 * kube-apiserver reloads it: a change that does not parse or validate (or that changes the
 * `anonymous` block) is logged and ignored until the file changes again; a valid one replaces
 * the authenticators once every new issuer's discovery has succeeded (or is dropped after a
 * minute, and retried on the next check).
 */
import { watchFile, unwatchFile, readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { audienceAgnostic } from '../audiences.js';
import { JwtAuthenticator } from '../jwt/jwt-authenticator.js';
import { TokenUnion, type BearerToken, type TokenAuthenticator, type TokenResult } from '../token.js';
import { parseAuthenticationConfiguration, type AnonymousConfig } from './authentication-config.js';
import { aggregateFieldErrors, fieldErrors } from '../../../status/status-error.js';
import { checkAuthenticationConfiguration, type CompiledJwtAuthenticator } from './validation.js';

const pollIntervalMs = 1_000;
/** a reload that could not complete (issuers not ready) is tried again this often, as Kubernetes resyncs */
const resyncMs = 60_000;
const readyTimeoutMs = 60_000;

export interface JwtSetOptions {
  apiAudiences: readonly string[];
  algorithms: readonly string[];
  /** the service-account issuers, which a JWT issuer must not claim */
  disallowedIssuers: readonly string[];
  log: { info(message: string): void; error(message: string): void };
}

interface Generation { authenticators: JwtAuthenticator[]; union: TokenUnion }

export class JwtAuthenticatorSet implements TokenAuthenticator {
  readonly name = 'jwt';
  private current: Generation;
  private tracked: string | undefined;
  private pending: Generation | undefined;
  private watching: string | undefined;
  private resync: NodeJS.Timeout | undefined;

  constructor(compiled: readonly CompiledJwtAuthenticator[], private readonly options: JwtSetOptions) {
    this.current = this.build(compiled);
    for (const a of this.current.authenticators) a.start();
  }

  get size(): number { return this.current.authenticators.length; }

  authenticateToken(token: BearerToken, audiences: readonly string[]): TokenResult | Promise<TokenResult> {
    return this.current.union.authenticateToken(token, audiences);
  }

  private build(compiled: readonly CompiledJwtAuthenticator[]): Generation {
    const authenticators = compiled.map((c) => new JwtAuthenticator(c, { algorithms: this.options.algorithms, onError: (m) => this.options.log.error(m) }));
    return { authenticators, union: new TokenUnion(authenticators.map((a) => audienceAgnostic(this.options.apiAudiences, a))) };
  }

  /** Re-reads `path` when it changes; `text` is what was loaded at start, `anonymous` its block. */
  watch(path: string, text: string, anonymous: AnonymousConfig | undefined): void {
    this.tracked = text;
    this.watching = path;
    watchFile(path, { interval: pollIntervalMs, persistent: false }, () => void this.reload(path, anonymous));
    this.resync = setInterval(() => void this.reload(path, anonymous), resyncMs);
    this.resync.unref();
  }

  stop(): void {
    if (this.watching) unwatchFile(this.watching);
    clearInterval(this.resync);
    for (const a of [...this.current.authenticators, ...(this.pending?.authenticators ?? [])]) a.stop();
  }

  private async reload(path: string, anonymous: AnonymousConfig | undefined): Promise<void> {
    const log = this.options.log;
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      log.error(`failed to read authentication config file: ${(err as Error).message}`);
      return;
    }
    if (text === this.tracked || this.pending) return;
    // one reload at a time: the check above sees `pending` set before any await below
    this.pending = { authenticators: [], union: new TokenUnion([]) };
    let compiled: CompiledJwtAuthenticator[];
    try {
      const config = parseAuthenticationConfiguration(text);
      const checked = await checkAuthenticationConfiguration(config, this.options.disallowedIssuers);
      // the anonymous block is read once, at start
      if (!isDeepStrictEqual(config.anonymous, anonymous)) checked.errors.push(fieldErrors.forbidden('anonymous', 'changed from initial configuration file'));
      if (checked.errors.length > 0) throw new Error(`invalid authentication configuration: ${aggregateFieldErrors(checked.errors)}`);
      compiled = checked.compiled;
    } catch (err) {
      // a file that is wrong stays wrong until it changes: not retried
      this.tracked = text;
      this.pending = undefined;
      log.error(`failed to load authentication config: ${(err as Error).message}`);
      return;
    }
    const next = this.build(compiled);
    this.pending = next;
    let waiting = next.authenticators.length;
    const timer = setTimeout(() => {
      for (const a of next.authenticators) a.stop();
      this.pending = undefined;
      log.error('failed to update authentication config: timed out waiting for the JWT issuers to become ready');
    }, readyTimeoutMs);
    timer.unref();
    const ready = () => {
      if (--waiting > 0 || this.pending !== next) return;
      clearTimeout(timer);
      const previous = this.current;
      this.current = next;
      this.pending = undefined;
      this.tracked = text;
      for (const a of previous.authenticators) a.stop();
      log.info('reloaded authentication config');
      // the file may have changed again while the issuers were starting
      void this.reload(path, anonymous);
    };
    if (waiting === 0) ready();
    else for (const a of next.authenticators) a.start(ready);
  }
}
