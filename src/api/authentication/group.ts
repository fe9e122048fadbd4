/**
 * The authentication API group: `authentication.orch.io`, and Kubernetes' name for it, which
 * unchanged clients hard-code (`kubectl auth whoami`, `kubectl create token`).
 */

import { defaultUnknownFieldLabelMessage, type KindDeclaration } from '../kind.js';

export const authenticationGroup = 'authentication.orch.io';
export const kubernetesAuthenticationGroup = 'authentication.k8s.io';

/** The same declaration under Kubernetes' group name (a body a client may send under it: a TokenRequest). */
export function underKubernetesName(kind: KindDeclaration): KindDeclaration {
  return { ...kind, group: kubernetesAuthenticationGroup };
}

/** What every kind of this group shares: its objects are answered, never stored, so nothing is validated or selected. */
export const unstoredKindBehaviour = {
  nameRule: 'dns1123Subdomain',
  returnDeletedObject: false,
  allowCreateOnUpdate: false,
  fieldLabels: {},
  unknownFieldLabelMessage: defaultUnknownFieldLabelMessage,
  validate: () => [],
  validateUpdate: () => [],
} satisfies Partial<KindDeclaration>;
