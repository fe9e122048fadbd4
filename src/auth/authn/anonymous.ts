/**
 * Anonymous requests: `system:anonymous` in `system:unauthenticated`, asked last. With
 * conditions (an AuthenticationConfiguration's `anonymous.conditions`), only on those exact paths.
 */
import { anonymousUser } from '../user.js';
import type { AuthenticationRequest, AuthenticationResult, Authenticator } from './authenticator.js';

export class AnonymousAuthenticator implements Authenticator {
  readonly name = 'anonymous';
  private readonly paths: ReadonlySet<string> | undefined;

  /** `paths` empty or absent: every path */
  constructor(paths?: readonly string[]) {
    this.paths = paths && paths.length > 0 ? new Set(paths) : undefined;
  }

  authenticate({ path }: AuthenticationRequest): AuthenticationResult {
    if (this.paths && !this.paths.has(path)) return undefined;
    return { user: anonymousUser };
  }
}
