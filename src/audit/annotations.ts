/**
 * Audit annotations stages add for Kubernetes' reasons, under our names: a request to a
 * deprecated API version is marked `orch.io/deprecated: "true"`, with `orch.io/removed-release`
 * when the release that removes it is known (Kubernetes' k8s.io/deprecated and
 * k8s.io/removed-release). The handler of a deprecated version calls this with the request's
 * audit record.
 */
import type { AuditAnnotator } from './capture.js';

export const deprecatedAnnotation = 'orch.io/deprecated';
export const removedReleaseAnnotation = 'orch.io/removed-release';

export function annotateDeprecated(audit: AuditAnnotator | undefined, removedRelease?: string): void {
  if (!audit) return;
  audit.annotate(deprecatedAnnotation, 'true');
  if (removedRelease) audit.annotate(removedReleaseAnnotation, removedRelease);
}
