/** The authorization modes `--authorization-mode` names, each built into an Authorizer. */
import type { Authorizer } from './authorizer.js';

const alwaysAllow: Authorizer = { name: 'AlwaysAllow', authorize: () => ({ decision: 'Allow', reason: '' }) };
const alwaysDeny: Authorizer = { name: 'AlwaysDeny', authorize: () => ({ decision: 'Deny', reason: 'Everything is forbidden.' }) };

const builtin: Readonly<Record<string, Authorizer>> = { AlwaysAllow: alwaysAllow, AlwaysDeny: alwaysDeny };

export function authorizersFor(modes: readonly string[]): Authorizer[] {
  return modes.map((mode) => {
    const authorizer = builtin[mode];
    if (!authorizer) throw new Error(`authorization mode ${JSON.stringify(mode)} is not supported`);
    return authorizer;
  });
}
