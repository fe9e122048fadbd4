/** The kinds this server serves from the start, each declared once under src/api/<group>/. */
import { namespaceKind } from '../core/namespace.js';
import { secretKind } from '../core/secret.js';
import { serviceAccountKind } from '../core/service-account.js';
import { eventKind } from '../events/event.js';
import type { KindDeclaration } from '../kind.js';

export const builtinKinds: readonly KindDeclaration[] = [namespaceKind, serviceAccountKind, secretKind, eventKind];
