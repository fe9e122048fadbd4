/**
 * May the user do this? The union of authorizers decides; anything but Allow is 403 with
 * Kubernetes' message, or 500 when a mode failed to decide (a webhook down) and none allowed.
 * The decision and reason are recorded on the audit record.
 */
import type { Attributes, Authorizer, Decision } from '../../auth/authz/authorizer.js';
import { forbidden } from '../../auth/authz/forbidden.js';
import { fieldSelectorRequirements, labelSelectorRequirements } from '../../auth/authz/selector-requirements.js';
import type { UserInfo } from '../../auth/user.js';
import { errors } from '../../status/status-error.js';
import type { Filter, Handler } from '../filter.js';
import type { RequestContext } from '../request-context.js';

/** Verbs whose selectors narrow what they touch (RequestInfoFactory reads them for these only). */
const selecting = new Set(['list', 'watch', 'deletecollection']);

/** The request as authorizers see it; its selectors are parsed only for an authorizer that reads them. */
export function requestAttributes(ctx: RequestContext, withSelectors: boolean): Attributes {
  const i = ctx.info;
  const attributes: Attributes = {
    user: ctx.user as UserInfo, verb: i.verb, isResourceRequest: i.isResourceRequest, path: i.path, namespace: i.namespace,
    apiGroup: i.apiGroup, apiVersion: i.apiVersion, resource: i.resource, subresource: i.subresource, name: i.name,
  };
  if (withSelectors && i.isResourceRequest && selecting.has(i.verb)) {
    // the first value of each, as Kubernetes reads them straight from the query
    const fields = ctx.query.get('fieldSelector');
    const labels = ctx.query.get('labelSelector');
    if (fields) attributes.fieldSelector = fieldSelectorRequirements(fields);
    if (labels) attributes.labelSelector = labelSelectorRequirements(labels);
  }
  return attributes;
}

function proceed(d: Decision, attributes: Attributes, ctx: RequestContext, next: Handler): Promise<void> {
  if (d.decision !== 'Allow' && d.error !== undefined) {
    ctx.audit?.annotate('authorization.orch.io/reason', 'internal error');
    return Promise.reject(errors.internal(new Error(d.error)));
  }
  const allowed = d.decision === 'Allow';
  ctx.audit?.annotate('authorization.orch.io/decision', allowed ? 'allow' : 'forbid');
  ctx.audit?.annotate('authorization.orch.io/reason', d.reason);
  if (!allowed) return Promise.reject(forbidden(attributes, d.reason));
  return next(ctx);
}

export function authorizationFilter(authorizer: Authorizer): Filter {
  return (ctx, next) => {
    const attributes = requestAttributes(ctx, authorizer.readsSelectors === true);
    const d = authorizer.authorize(attributes);
    // RBAC decides from its index at once: no promise between the filters
    return d instanceof Promise ? d.then((decided) => proceed(decided, attributes, ctx, next)) : proceed(d, attributes, ctx, next);
  };
}
