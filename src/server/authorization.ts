/**
 * Authorization as the configuration asks for it: the chain of `--authorization-config` (followed
 * as the file changes) or of the legacy `--authorization-mode` and `--authorization-webhook-*`
 * flags, behind kube-apiserver's privileged-group authorizer.
 */
import type { Logger } from 'pino';
import { privilegedGroupAuthorizer, UnionAuthorizer, type Authorizer } from '../auth/authz/authorizer.js';
import { configurationFromFlags } from '../auth/authz/config/authorization-config.js';
import { ReloadingAuthorizer } from '../auth/authz/config/reloading-authorizer.js';
import { ModeAuthorizers, type AuthorizationSources } from '../auth/authz/modes.js';
import type { RbacPolicyIndex } from '../auth/authz/rbac/policy-index.js';
import type { ServerConfig } from '../config/server-config.js';

export interface Authorization {
  authorizer: UnionAuthorizer;
  /** the RBAC policy index, when RBAC is in the chain (escalation checks and aggregation read it) */
  rbacIndex: RbacPolicyIndex | undefined;
  /** the authorizer types in force at start */
  types: string[];
  stop(): void;
}

export async function authorization(config: ServerConfig, sources: Omit<AuthorizationSources, 'policyFile'>, log: Logger): Promise<Authorization> {
  const modes = new ModeAuthorizers({ ...sources, policyFile: config.authorizationPolicyFile });
  let chain: Authorizer;
  let types: string[];
  let stopChain = () => {};
  if (config.authorizationConfigFile) {
    const reloading = await ReloadingAuthorizer.start(config.authorizationConfigFile, modes, { info: (m) => log.info(m), error: (m) => log.error(m) });
    types = reloading.types;
    chain = reloading;
    stopChain = () => reloading.stop();
  } else {
    const configuration = configurationFromFlags(config);
    types = configuration.authorizers.map((a) => a.type);
    // Kubernetes validates only the file: flags have their own checks (config/flags.ts)
    chain = new UnionAuthorizer(modes.build(configuration));
  }
  return {
    authorizer: new UnionAuthorizer([privilegedGroupAuthorizer, chain]),
    rbacIndex: modes.rbacIndex,
    types,
    stop: () => { stopChain(); modes.stop(); },
  };
}
