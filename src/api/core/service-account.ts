import { allVerbs, builtinKind, defaultUnknownFieldLabelMessage, type KindDeclaration } from '../kind.js';
import { localObjectReferenceStructural, objectReferenceStructural, typeAndMeta } from '../meta.js';
import { s } from '../schema/builtin-structural.js';
import { ageColumn, nameColumn } from '../printing.js';
import { validateObjectMeta, validateObjectMetaUpdate } from '../validation/names.js';
import { serviceAccountToken } from '../authentication/token-request.js';

export const serviceAccountKind: KindDeclaration = builtinKind({
  group: '', version: 'v1', kind: 'ServiceAccount', listKind: 'ServiceAccountList',
  resource: 'serviceaccounts', singular: 'serviceaccount', shortNames: ['sa'], namespaced: true,
  verbs: allVerbs,
  structural: s.struct('ServiceAccount', typeAndMeta({
    secrets: s.mapList(objectReferenceStructural, ['name'],
      'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a "orch.io/enforce-mountable-secrets" annotation set to "true".',
      { strategy: 'merge', mergeKey: 'name' }),
    imagePullSecrets: s.atomicList(localObjectReferenceStructural,
      'ImagePullSecrets is a list of references to secrets in the same namespace to use for pulling any images in pods that reference this ServiceAccount.'),
    automountServiceAccountToken: s.boolean('AutomountServiceAccountToken indicates whether pods running as this service account should have an API token automatically mounted.'),
  }), 'ServiceAccount binds together: a name, understood by users, and perhaps by peripheral systems, for an identity; a principal that can be authenticated and authorized; a set of secrets.', { proto: { metadata: 1, secrets: 2, imagePullSecrets: 3, automountServiceAccountToken: 4 } }),
  nameRule: 'dns1123Subdomain',
  table: [
    nameColumn,
    { name: 'Secrets', type: 'string', description: 'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.', cell: (o) => ((o.secrets as unknown[] | undefined) ?? []).length },
    ageColumn,
  ],
  subresourceCreate: { token: serviceAccountToken },
  returnDeletedObject: true,
  allowCreateOnUpdate: false,
  fieldLabels: {},
  unknownFieldLabelMessage: defaultUnknownFieldLabelMessage,
  validate: (obj) => validateObjectMeta(obj.metadata, true, 'dns1123Subdomain'),
  validateUpdate: (obj, old) => [...validateObjectMeta(obj.metadata, true, 'dns1123Subdomain'), ...validateObjectMetaUpdate(obj.metadata, old.metadata)],
});
