/**
 * The authorizers an AuthorizationConfiguration names, built in its order. The policy-backed
 * modes (the RBAC index, the ABAC policy, Node) are built once and kept across reloads of the
 * configuration file: a reload changes the chain, not the state behind it.
 */
import type { ReadModel } from '../../store/read-model.js';
import { inClusterConnection, loadWebhookKubeconfig } from '../webhook/kubeconfig.js';
import { noRules, type Authorizer } from './authorizer.js';
import { AbacAuthorizer } from './abac/abac-authorizer.js';
import { loadPolicyFile } from './abac/policy-file.js';
import type { AuthorizationConfiguration, AuthorizerConfiguration, WebhookConfiguration } from './config/authorization-config.js';
import { NodeAuthorizer } from './node/node-authorizer.js';
import { RbacPolicyIndex } from './rbac/policy-index.js';
import { RbacAuthorizer } from './rbac/rbac-authorizer.js';
import type { MatchConditions } from './webhook/match-conditions.js';
import { WebhookAuthorizer } from './webhook/webhook-authorizer.js';

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
  /** waits between webhook retries; tests shorten it */
  sleep?: (ms: number) => Promise<void>;
}

export class ModeAuthorizers {
  private rbac: RbacAuthorizer | undefined;
  private abac: AbacAuthorizer | undefined;
  private node: NodeAuthorizer | undefined;
  private index: RbacPolicyIndex | undefined;

  constructor(private readonly sources: AuthorizationSources) {}

  /** the RBAC policy index, once a configuration has named RBAC */
  get rbacIndex(): RbacPolicyIndex | undefined { return this.index; }

  /** The configuration's authorizers, in order; `matchConditions` are the compiled ones by webhook name. */
  build(configuration: AuthorizationConfiguration, matchConditions: ReadonlyMap<string, MatchConditions> = new Map()): Authorizer[] {
    return configuration.authorizers.map((a) => this.authorizerFor(a, matchConditions.get(a.name)));
  }

  private authorizerFor(a: AuthorizerConfiguration, conditions: MatchConditions | undefined): Authorizer {
    switch (a.type) {
      case 'AlwaysAllow': return alwaysAllow;
      case 'AlwaysDeny': return alwaysDeny;
      case 'Node': return (this.node ??= new NodeAuthorizer());
      case 'ABAC': return (this.abac ??= new AbacAuthorizer(loadPolicyFile(this.sources.policyFile as string)));
      case 'RBAC': return (this.rbac ??= new RbacAuthorizer((this.index = new RbacPolicyIndex(this.sources.readModel))));
      case 'Webhook': return this.webhook(a.name, a.webhook as WebhookConfiguration, conditions);
      default: throw new Error(`authorization mode ${JSON.stringify(a.type)} is not supported`);
    }
  }

  private webhook(name: string, w: WebhookConfiguration, matchConditions: MatchConditions | undefined): WebhookAuthorizer {
    const connection = w.connectionInfo.type === 'InClusterConfig'
      ? inClusterConnection()
      : loadWebhookKubeconfig(w.connectionInfo.kubeConfigFile as string);
    return new WebhookAuthorizer({
      name,
      connection,
      version: w.subjectAccessReviewVersion as 'v1' | 'v1beta1',
      timeoutMs: w.timeoutMs,
      authorizedTtlMs: w.cacheAuthorizedRequests ? w.authorizedTtlMs : 0,
      unauthorizedTtlMs: w.cacheUnauthorizedRequests ? w.unauthorizedTtlMs : 0,
      failurePolicy: w.failurePolicy as 'NoOpinion' | 'Deny',
      matchConditions,
      sleep: this.sources.sleep,
    });
  }

  stop(): void {
    this.index?.stop();
  }
}
