/** The 403 Kubernetes answers when no authorizer allows a request (forbiddenMessage in k8s.io/apiserver). */
import { errors, type StatusError } from '../../status/status-error.js';
import type { Attributes } from './authorizer.js';

export function forbiddenMessage(a: Attributes): string {
  if (!a.isResourceRequest) return `User ${JSON.stringify(a.user.name)} cannot ${a.verb} path ${JSON.stringify(a.path)}`;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const scope = a.namespace ? `in the namespace ${JSON.stringify(a.namespace)}` : 'at the cluster scope';
  return `User ${JSON.stringify(a.user.name)} cannot ${a.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(a.apiGroup)} ${scope}`;
}

export function forbidden(a: Attributes, reason: string): StatusError {
  const message = reason ? `${forbiddenMessage(a)}: ${reason}` : forbiddenMessage(a);
  return errors.forbidden({ group: a.apiGroup, resource: a.isResourceRequest ? a.resource : '' }, a.name, message);
}
