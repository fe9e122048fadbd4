/**
 * The request pipeline, in order. Every request passes it, over HTTP/1.1, HTTP/2 and WebSocket
 * upgrades alike, resource and non-resource paths alike (Kubernetes' DefaultBuildHandlerChain):
 *
 *   request log → recover → audit init (Audit-Id) → request info → [metrics] → [goaway] → body limit
 *     → [failed-authentication audit] → authentication → [audit] → impersonation
 *     → flow control (seat held until the response is on the socket)
 *     → authorization → timeout → handler (→ admission → storage, inside the resource handler)
 *
 * The two audit filters are present only when auditing is configured (a policy and a backend).
 * Audit sits right after authentication, as in Kubernetes, so its policy sees the authenticated
 * user (the impersonated one is recorded as impersonatedUser) and everything after it (denied
 * impersonation, 429s, 403s, timeouts, handler errors) is recorded with the Status the client
 * got. A request that fails authentication never reaches it: the failed-authentication audit
 * filter, wrapped around authentication, records those 401s (one ResponseStarted event with an
 * empty user), which is what Kubernetes' WithFailedAuthenticationAudit does around its
 * authentication's failure handler. Requests refused before authentication (413 by the body
 * limit) are not audited, as in Kubernetes.
 */
import type { Logger } from 'pino';
import type { Auditor } from '../audit/auditor.js';
import type { UnionAuthenticator } from '../auth/authn/authenticator.js';
import type { Authorizer } from '../auth/authz/authorizer.js';
import type { FlowController } from '../flowcontrol/flow-control.js';
import type { RequestInfo } from '../http/request-info.js';
import type { ApiServerMetrics } from '../metrics/apiserver-metrics.js';
import { chain, type Handler, type NamedFilter } from './filter.js';
import { auditFilter } from './filters/audit.js';
import { auditInitFilter } from './filters/audit-init.js';
import { authenticationFilter } from './filters/authentication.js';
import { authorizationFilter } from './filters/authorization.js';
import { bodyLimitFilter } from './filters/body-limit.js';
import { failedAuthenticationAuditFilter } from './filters/failed-authentication-audit.js';
import { flowControlFilter } from './filters/flow-control.js';
import { goawayFilter } from './filters/goaway.js';
import { impersonationFilter } from './filters/impersonation.js';
import { metricsFilter } from './filters/metrics.js';
import { recoverFilter } from './filters/recover.js';
import { requestInfoFilter } from './filters/request-info.js';
import { requestLogFilter } from './filters/request-log.js';
import { timeoutFilter } from './filters/timeout.js';

export interface ChainParts {
  log: Logger;
  maxRequestBodyBytes: number;
  authenticator: UnionAuthenticator;
  authorizer: Authorizer;
  flowControl: FlowController;
  requestTimeoutMs: number;
  /** undefined: auditing is off, and no audit filter is in the chain */
  auditor?: Auditor;
  /** request metrics (apiserver_request_total, ...); `served` tells the resources the server serves */
  metrics?: { metrics: ApiServerMetrics; served(info: RequestInfo): boolean };
  /** --goaway-chance: the probability an HTTP/2 request ends its connection with GOAWAY (0: never) */
  goawayChance?: number;
}

export function handlerChainFilters(p: ChainParts): NamedFilter[] {
  return [
    { name: 'request-log', filter: requestLogFilter(p.log) },
    { name: 'recover', filter: recoverFilter(p.log) },
    { name: 'audit-init', filter: auditInitFilter },
    { name: 'request-info', filter: requestInfoFilter },
    ...(p.metrics ? [{ name: 'metrics', filter: metricsFilter(p.metrics.metrics, p.metrics.served) }] : []),
    ...(p.goawayChance ? [{ name: 'goaway', filter: goawayFilter(p.goawayChance) }] : []),
    { name: 'body-limit', filter: bodyLimitFilter(p.maxRequestBodyBytes) },
    ...(p.auditor ? [{ name: 'failed-authentication-audit', filter: failedAuthenticationAuditFilter(p.auditor) }] : []),
    { name: 'authentication', filter: authenticationFilter(p.authenticator) },
    ...(p.auditor ? [{ name: 'audit', filter: auditFilter(p.auditor) }] : []),
    { name: 'impersonation', filter: impersonationFilter(p.authorizer) },
    { name: 'flow-control', filter: flowControlFilter(p.flowControl) },
    { name: 'authorization', filter: authorizationFilter(p.authorizer) },
    { name: 'timeout', filter: timeoutFilter(p.requestTimeoutMs) },
  ];
}

export function buildHandlerChain(parts: ChainParts, handler: Handler): Handler {
  return chain(handlerChainFilters(parts), handler);
}
