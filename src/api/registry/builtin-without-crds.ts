/**
 * The built-in kinds but the CustomResourceDefinition: what the watch encoder pool's threads load.
 * The CRD kind's validation brings the CEL library (about 6 MiB of every thread that imports it);
 * the pool encodes CRD watches from the kind's schema sent with the task, as it does custom
 * resources, and only their Table views fall to the front thread.
 */
import { selfSubjectReviewKind } from '../authentication/self-subject-review.js';
import { tokenReviewKind } from '../authentication/token-review.js';
import { accessReviewKinds } from '../authorization/reviews.js';
import { leaseKind } from '../coordination/lease.js';
import { configMapKind } from '../core/config-map.js';
import { coreEventKind } from '../core/event.js';
import { namespaceKind } from '../core/namespace.js';
import { secretKind } from '../core/secret.js';
import { serviceAccountKind } from '../core/service-account.js';
import { eventKind } from '../events/event.js';
import { flowSchemaKind } from '../flowcontrol/flow-schema.js';
import { priorityLevelConfigurationKind } from '../flowcontrol/priority-level-configuration.js';
import type { KindDeclaration } from '../kind.js';
import { clusterRoleBindingKind, roleBindingKind } from '../rbac/bindings.js';
import { clusterRoleKind, roleKind } from '../rbac/roles.js';

/**
 * Core kinds first, so that types the groups share (EventSource) are named by the core package in
 * OpenAPI. The core Event is a view of the events.orch.io Events in storage.
 */
export const builtinKindsWithoutCrds: readonly KindDeclaration[] = [
  namespaceKind, serviceAccountKind, secretKind, configMapKind, coreEventKind, eventKind, leaseKind,
  tokenReviewKind, selfSubjectReviewKind, flowSchemaKind, priorityLevelConfigurationKind,
  roleKind, clusterRoleKind, roleBindingKind, clusterRoleBindingKind, ...accessReviewKinds,
];
