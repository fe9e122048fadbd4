/**
 * Auditing as the request pipeline sees it: the policy that picks a request's level, and the
 * sink (every configured backend, each behind its mode) that takes each stage's event. It
 * exists only when a policy file and at least one backend are configured; without it the
 * pipeline has no audit filters at all.
 */
import type { UserInfo } from '../auth/user.js';
import type { AuditContext } from './audit-context.js';
import { AuditMetrics } from './metrics.js';
import { microNow } from './micro-time.js';
import type { PolicyAttributes, PolicyEvaluator, RequestAuditConfig } from './policy-evaluator.js';
import type { AuditSink } from './sink.js';
import type { Stage } from './types.js';

export class Auditor {
  constructor(private readonly policy: PolicyEvaluator, private readonly sink: AuditSink, readonly metrics: AuditMetrics = new AuditMetrics()) {}

  evaluate(attributes: PolicyAttributes, user: UserInfo | undefined): RequestAuditConfig {
    const config = this.policy.evaluate(attributes, user);
    this.metrics.level(config.level);
    return config;
  }

  /**
   * Hands the stage's event to the backends, unless the request is not recorded or its rule omits
   * the stage. False when a blocking-strict backend could not store it.
   */
  processStage(audit: AuditContext, stage: Stage): boolean | Promise<boolean> {
    if (!audit.recording || audit.omitStages?.has(stage)) return true;
    this.metrics.eventTotal++;
    return this.sink.processEvents([audit.event(stage, microNow())]);
  }

  /** Writes what is buffered and closes the backends (at server shutdown, after the last request). */
  shutdown(): Promise<void> { return this.sink.shutdown(); }
}
