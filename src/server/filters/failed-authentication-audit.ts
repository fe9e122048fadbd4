/**
 * Auditing of a request that fails authentication (k8s.io/apiserver's
 * WithFailedAuthenticationAudit). It sits just before the authentication filter: such a request
 * never reaches the audit filter after it, so this one evaluates the policy for it (with no
 * user: rules naming users or groups do not match), answers the 401, and records one event at
 * stage ResponseStarted with an empty user and the 401's Status, as Kubernetes 1.32 does.
 */
import type { AuditContext } from '../../audit/audit-context.js';
import type { Auditor } from '../../audit/auditor.js';
import { StatusError } from '../../status/status-error.js';
import type { Filter } from '../filter.js';
import { requestFacts } from './audit.js';
import { answerError } from './recover.js';

export function failedAuthenticationAuditFilter(auditor: Auditor): Filter {
  return async (ctx, next) => {
    try {
      await next(ctx);
    } catch (err) {
      // a user means authentication succeeded: whatever failed later is the audit filter's to record
      if (ctx.user !== undefined || !(err instanceof StatusError) || err.code !== 401) throw err;
      const audit = ctx.audit as AuditContext;
      audit.begin(auditor.evaluate(ctx.info, undefined), requestFacts(ctx));
      if (!audit.recording) throw err;
      if (ctx.exchange) ctx.exchange.audit = audit;
      answerError(ctx, err);
      if (!ctx.exchange) audit.responseStatus(err.code, err.toStatus());
      await auditor.processStage(audit, 'ResponseStarted');
    }
  };
}
