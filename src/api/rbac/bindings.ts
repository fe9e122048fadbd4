/** rbac/v1 RoleBinding (namespaced) and ClusterRoleBinding: who holds a Role or ClusterRole. */
import { fieldErrors } from '../../status/status-error.js';
import { allVerbs, builtinKind, defaultUnknownFieldLabelMessage, type KindDeclaration } from '../kind.js';
import { typeAndMeta, type KObject } from '../meta.js';
import { ageColumn, nameColumn } from '../printing.js';
import { s } from '../schema/builtin-structural.js';
import { validateObjectMeta, validateObjectMetaUpdate } from '../validation/names.js';
import { defaultBinding, rbacGroup, roleRefStructural, subjectStructural, validateBindingBody, type RoleRef, type Subject } from './policy.js';

export interface BindingObject extends KObject { roleRef: RoleRef; subjects?: Subject[] }

function subjectNames(o: Readonly<KObject>, kind: string): string {
  const subjects = ((o as BindingObject).subjects ?? []).filter((x) => x.kind === kind);
  return subjects.map((x) => (kind === 'ServiceAccount' ? `${x.namespace ?? ''}/${x.name}` : x.name)).join(', ');
}

/** kubectl's printRoleBinding / printClusterRoleBinding columns */
const bindingColumns = [
  nameColumn,
  { name: 'Role', type: 'string' as const, description: 'Role', cell: (o: Readonly<KObject>) => `${(o as BindingObject).roleRef?.kind}/${(o as BindingObject).roleRef?.name}` },
  ageColumn,
  { name: 'Users', type: 'string' as const, priority: 1, description: 'Users in the roleBinding', cell: (o: Readonly<KObject>) => subjectNames(o, 'User') },
  { name: 'Groups', type: 'string' as const, priority: 1, description: 'Groups in the roleBinding', cell: (o: Readonly<KObject>) => subjectNames(o, 'Group') },
  { name: 'ServiceAccounts', type: 'string' as const, priority: 1, description: 'ServiceAccounts in the roleBinding', cell: (o: Readonly<KObject>) => subjectNames(o, 'ServiceAccount') },
];

function bindingKind(kind: 'RoleBinding' | 'ClusterRoleBinding', namespaced: boolean, description: string): KindDeclaration {
  const validateBody = (obj: KObject) => validateBindingBody((obj as BindingObject).roleRef, (obj as BindingObject).subjects, namespaced);
  return builtinKind({
    group: rbacGroup, version: 'v1', kind, listKind: `${kind}List`, resource: `${kind.toLowerCase()}s`, singular: kind.toLowerCase(),
    shortNames: [], namespaced, verbs: allVerbs, nameRule: 'pathSegment',
    structural: s.struct(kind, typeAndMeta({
      subjects: s.atomicList(subjectStructural, 'Subjects holds references to the objects the role applies to.'),
      roleRef: roleRefStructural,
    }), description, { proto: { metadata: 1, subjects: 2, roleRef: 3 }, required: ['roleRef'] }),
    table: bindingColumns,
    returnDeletedObject: false, allowCreateOnUpdate: true,
    fieldLabels: {}, unknownFieldLabelMessage: defaultUnknownFieldLabelMessage,
    setDefaults: (obj) => defaultBinding((obj as BindingObject).roleRef, (obj as BindingObject).subjects),
    validate: (obj) => [...validateObjectMeta(obj.metadata, namespaced, 'pathSegment'), ...validateBody(obj)],
    validateUpdate: (obj, old) => {
      const errs = [...validateObjectMeta(obj.metadata, namespaced, 'pathSegment'), ...validateObjectMetaUpdate(obj.metadata, old.metadata)];
      const ref = (obj as BindingObject).roleRef;
      const oldRef = (old as BindingObject).roleRef;
      if (ref?.apiGroup !== oldRef?.apiGroup || ref?.kind !== oldRef?.kind || ref?.name !== oldRef?.name) {
        errs.push(fieldErrors.invalid('roleRef', ref, 'cannot change roleRef'));
      }
      return [...errs, ...validateBody(obj)];
    },
  });
}

export const roleBindingKind = bindingKind('RoleBinding', true,
  'RoleBinding references a role, but does not contain it.  It can reference a Role in the same namespace or a ClusterRole in the global namespace. It adds who information via Subjects and namespace information by which namespace it exists in.  RoleBindings in a given namespace only have effect in that namespace.');
export const clusterRoleBindingKind = bindingKind('ClusterRoleBinding', false,
  'ClusterRoleBinding references a ClusterRole, but not contain it.  It can reference a ClusterRole in the global namespace, and adds who information via Subject.');
