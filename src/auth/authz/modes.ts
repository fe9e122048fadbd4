/** The authorization modes `--authorization-mode` names, each built into an Authorizer. */
import type { ReadModel } from '../../store/read-model.js';
import { noRules, type Authorizer } from './authorizer.js';
import { AbacAuthorizer } from './abac/abac-authorizer.js';
import { loadPolicyFile } from './abac/policy-file.js';
import { NodeAuthorizer } from './node/node-authorizer.js';
import { RbacPolicyIndex } from './rbac/policy-index.js';
import { RbacAuthorizer } from './rbac/rbac-authorizer.js';

const alwaysAllow: Authorizer = {
  name: 'AlwaysAllow',
  authorize: () => ({ decision: 'Allow', reason: '' }),
  rulesFor: () => ({
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
    incomplete: false,
  }),
};
const alwaysDeny: Authorizer = { name: 'AlwaysDeny', authorize: () => ({ decision: 'Deny', reason: 'Everything is forbidden.' }), rulesFor: noRules };

/** What the modes read their policy from. */
export interface AuthorizationSources {
  readModel: ReadModel;
  /** --authorization-policy-file, for ABAC */
  policyFile?: string;
}

/** The authorizers of `modes`, in order, and the RBAC index when a mode needs it. */
export interface BuiltAuthorizers {
  authorizers: Authorizer[];
  rbacIndex: RbacPolicyIndex | undefined;
}

export function authorizersFor(modes: readonly string[], sources: AuthorizationSources): BuiltAuthorizers {
  let rbacIndex: RbacPolicyIndex | undefined;
  const authorizers = modes.map((mode): Authorizer => {
    switch (mode) {
      case 'AlwaysAllow': return alwaysAllow;
      case 'AlwaysDeny': return alwaysDeny;
      case 'Node': return new NodeAuthorizer();
      case 'ABAC': return new AbacAuthorizer(loadPolicyFile(sources.policyFile as string));
      case 'RBAC': return new RbacAuthorizer((rbacIndex ??= new RbacPolicyIndex(sources.readModel)));
      default: throw new Error(`authorization mode ${JSON.stringify(mode)} is not supported`);
    }
  });
  return { authorizers, rbacIndex };
}
