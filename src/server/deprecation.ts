/**
 * Requests to a deprecated version (a CRD version marked deprecated, or a deprecated built-in):
 * the response carries the Warning, the audit event the `orch.io/deprecated` annotation, and the
 * `apiserver_requested_deprecated_apis` gauge is told through a hook (the metrics registry plugs in).
 */
import type { KindDeclaration } from '../api/kind.js';
import type { RequestInfo } from '../http/request-info.js';
import type { RequestContext } from './request-context.js';

export const deprecatedAnnotation = 'orch.io/deprecated';

/** What the metric needs of a deprecated request (its labels). */
export interface DeprecatedRequest { group: string; version: string; resource: string; subresource: string; removedRelease: string }

export type DeprecatedRequestHook = (request: DeprecatedRequest) => void;

export function noteDeprecation(kind: KindDeclaration, info: RequestInfo, ctx: RequestContext, warnings: string[], hook?: DeprecatedRequestHook): void {
  if (kind.deprecationWarning === undefined) return;
  warnings.push(kind.deprecationWarning);
  ctx.audit?.annotate(deprecatedAnnotation, 'true');
  hook?.({ group: kind.group, version: kind.version, resource: kind.resource, subresource: info.subresource ?? '', removedRelease: '' });
}
