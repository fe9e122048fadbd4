/**
 * The Node mode (plugin/pkg/auth/authorizer/node), for the kinds this server serves. It decides
 * only for kubelets: users `system:node:<name>` in the group `system:nodes`; NoOpinion for others.
 * - leases: get, create, update, patch, delete of the node's own Lease in orch-node-lease;
 * - secrets, configmaps, serviceaccounts/token: Kubernetes grants these only along the
 *   pod → node graph; this server has no pods, so no relationship exists (NoOpinion);
 * - everything else: Kubernetes' static node rules (NodeRules) cut to what is served here —
 *   writing events, creating token and access reviews.
 */
import type { PolicyRule } from '../../../api/rbac/policy.js';
import type { UserInfo } from '../../user.js';
import { noOpinion, noRules, type Attributes, type Authorizer, type Decision, type RuleSet } from '../authorizer.js';
import { canonicalGroup, compileRule, ruleAllows } from '../rbac/rule.js';

const nodeUserPrefix = 'system:node:';
export const nodesGroup = 'system:nodes';
export const nodeLeaseNamespace = 'orch-node-lease';

const nodeRules: readonly PolicyRule[] = [
  { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
  { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews', 'localsubjectaccessreviews'], verbs: ['create'] },
  { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'update', 'patch'] },
];
const compiledNodeRules = nodeRules.map(compileRule);

/** NodeIdentifier: the node a user is, if it is one */
export function nodeNameOf(user: UserInfo): string | undefined {
  if (!user.name.startsWith(nodeUserPrefix) || !user.groups.includes(nodesGroup)) return undefined;
  return user.name.slice(nodeUserPrefix.length) || undefined;
}

const noOpinionBecause = (reason: string): Decision => ({ decision: 'NoOpinion', reason });
const allow: Decision = { decision: 'Allow', reason: '' };

function authorizeLease(node: string, a: Attributes): Decision {
  if (!['get', 'create', 'update', 'patch', 'delete'].includes(a.verb)) return noOpinionBecause('can only get, create, update, patch, or delete a node lease');
  if (a.namespace !== nodeLeaseNamespace) return noOpinionBecause(`can only access leases in the ${JSON.stringify(nodeLeaseNamespace)} system namespace`);
  // on create the name is in the body, which the authorizer does not see (NodeRestriction checks it)
  if (a.verb !== 'create' && a.name !== node) return noOpinionBecause('can only access node lease with the same name as the requesting node');
  return allow;
}

/** authorizeReadNamespacedObject / authorizeCreateToken, with no pods to relate the object to the node */
function authorizeGraphObject(node: string, a: Attributes): Decision {
  const isToken = a.resource === 'serviceaccounts';
  if (isToken) {
    if (a.verb !== 'create' || a.subresource !== 'token') return noOpinionBecause('can only create tokens for individual service accounts');
  } else {
    if (!['get', 'list', 'watch'].includes(a.verb)) return noOpinionBecause('can only read resources of this type');
    if (a.subresource) return noOpinionBecause('cannot read subresource');
    if (!a.namespace) return noOpinionBecause('can only read namespaced object of this type');
  }
  return noOpinionBecause(`no relationship found between node '${node}' and this object`);
}

export class NodeAuthorizer implements Authorizer {
  readonly name = 'Node';

  authorize(a: Attributes): Decision {
    const node = nodeNameOf(a.user);
    if (node === undefined) return noOpinion;
    if (a.isResourceRequest) {
      const group = canonicalGroup(a.apiGroup);
      if (group === 'coordination.orch.io' && a.resource === 'leases') return authorizeLease(node, a);
      if (group === '' && ['secrets', 'configmaps', 'serviceaccounts'].includes(a.resource)) return authorizeGraphObject(node, a);
    }
    return compiledNodeRules.some((rule) => ruleAllows(a, rule)) ? allow : noOpinion;
  }

  /** Kubernetes' node authorizer lists nothing (it is not a rule resolver) */
  rulesFor(user: UserInfo): RuleSet {
    return nodeNameOf(user) === undefined ? noRules() : { ...noRules(), incomplete: true };
  }
}
