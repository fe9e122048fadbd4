/**
 * Opens the request's audit record before anything can fail (Kubernetes' WithAuditInit): the
 * audit ID (a client-sent `Audit-Id` is kept, as Kubernetes keeps it) is answered in the
 * `Audit-Id` header of every response, 401s included, and later stages annotate the record.
 */
import { randomUUID } from 'node:crypto';
import { AuditContext } from '../../audit/audit-context.js';
import type { Filter } from '../filter.js';

/** a client-sent ID is kept only when it is a plain header token (it is echoed back in a header) */
const acceptableAuditId = /^[\x21-\x7e]{1,128}$/;

export const auditInitFilter: Filter = (ctx, next) => {
  const sent = ctx.req.headers['audit-id'];
  const id = typeof sent === 'string' && acceptableAuditId.test(sent) ? sent : randomUUID();
  ctx.audit = new AuditContext(id);
  ctx.setResponseHeader('Audit-Id', id);
  return next(ctx);
};
