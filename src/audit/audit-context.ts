/**
 * The audit record of one request as it is being served: its ID (the `Audit-Id` header) and the
 * annotations pipeline stages attach (the authorizer's decision and reason, deprecation,
 * admission plugins). Audit backends read it when they write the request's events.
 */
export class AuditContext {
  private readonly annotationMap = new Map<string, string>();

  constructor(readonly auditID: string) {}

  /** Adds an annotation; the first value set for a key stays, as Kubernetes' AddAuditAnnotation keeps it. */
  annotate(key: string, value: string): void {
    if (!this.annotationMap.has(key)) this.annotationMap.set(key, value);
  }

  get annotations(): ReadonlyMap<string, string> { return this.annotationMap; }
}
