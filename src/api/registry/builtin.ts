/** The kinds this server serves from the start, each declared once under src/api/<group>/. */
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
import { crdKind } from '../../apiextensions/crd-kind.js';

/**
 * Core kinds first, so that types the groups share (EventSource) are named by the core package in
 * OpenAPI. The core Event is a view of the events.orch.io Events in storage.
 */
export const builtinKinds: readonly KindDeclaration[] = [
  namespaceKind, serviceAccountKind, secretKind, configMapKind, coreEventKind, eventKind, leaseKind,
  tokenReviewKind, selfSubjectReviewKind, flowSchemaKind, priorityLevelConfigurationKind,
  roleKind, clusterRoleKind, roleBindingKind, clusterRoleBindingKind, ...accessReviewKinds, crdKind,
];
