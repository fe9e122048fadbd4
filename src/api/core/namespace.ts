import { fieldErrors } from '../../status/status-error.js';
import { namespaceFinalizersAfterDelete } from '../deletion-policy.js';
import { builtinKind, fieldLabelNotSupported, type KindDeclaration } from '../kind.js';
import { typeAndMeta, type KObject } from '../meta.js';
import { s } from '../schema/builtin-structural.js';
import { ageColumn, nameColumn } from '../printing.js';
import { validateObjectMeta, validateObjectMetaUpdate } from '../validation/names.js';

/** The spec finalizer that makes the namespace controller empty a namespace before it goes. */
export const namespaceFinalizer = 'orch';
/** Set on every namespace so label selectors can name namespaces (Kubernetes' kubernetes.io/metadata.name). */
export const namespaceNameLabel = 'orch.io/metadata.name';

export interface NamespaceObject extends KObject {
  spec?: { finalizers?: string[] };
  status?: { phase?: 'Active' | 'Terminating'; conditions?: unknown[] };
}

const namespaceConditionSchema = s.struct('NamespaceCondition', {
  type: s.string('Type of namespace controller condition.'),
  status: s.string('Status of the condition, one of True, False, Unknown.'),
  lastTransitionTime: s.time('Last time the condition transitioned from one status to another.'),
  reason: s.string('Unique, one-word, CamelCase reason for the condition\'s last transition.'),
  message: s.string('Human-readable message indicating details about last transition.'),
}, undefined, { proto: { type: 1, status: 2, lastTransitionTime: 4, reason: 5, message: 6 }, required: ['type', 'status'] });

function setNameLabel(obj: KObject): void {
  obj.metadata.labels = { ...(obj.metadata.labels ?? {}), [namespaceNameLabel]: obj.metadata.name ?? '' };
}

export const namespaceKind: KindDeclaration = builtinKind({
  group: '', version: 'v1', kind: 'Namespace', listKind: 'NamespaceList',
  resource: 'namespaces', singular: 'namespace', shortNames: ['ns'], namespaced: false,
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  structural: s.struct('Namespace', typeAndMeta({
    spec: s.struct('NamespaceSpec', {
      finalizers: s.atomicList(s.string(), 'Finalizers is an opaque list of values that must be empty to permanently remove object from storage.'),
    }, 'Spec defines the behavior of the Namespace.', { proto: { finalizers: 1 } }),
    status: s.struct('NamespaceStatus', {
      phase: s.string('Phase is the current lifecycle phase of the namespace: Active or Terminating.'),
      conditions: s.mapList(namespaceConditionSchema, ['type'], 'Represents the latest available observations of a namespace\'s current state.', { strategy: 'merge', mergeKey: 'type' }),
    }, 'Status describes the current status of a Namespace.', { proto: { phase: 1, conditions: 2 } }),
  }), 'Namespace provides a scope for Names. Use of multiple namespaces is optional.', { proto: { metadata: 1, spec: 2, status: 3 } }),
  nameRule: 'dns1123Label',
  table: [
    nameColumn,
    { name: 'Status', type: 'string', description: 'The status of the namespace', cell: (o) => (o as NamespaceObject).status?.phase ?? '' },
    ageColumn,
  ],
  returnDeletedObject: true,
  allowCreateOnUpdate: false,
  fieldLabels: { 'status.phase': (o) => (o as NamespaceObject).status?.phase ?? '' },
  unknownFieldLabelMessage: fieldLabelNotSupported,
  subresources: {
    status: (submitted, stored) => ({ ...stored, status: (submitted as NamespaceObject).status }),
    finalize: (submitted, stored) => ({
      ...stored,
      spec: { ...((stored as NamespaceObject).spec ?? {}), finalizers: (submitted as NamespaceObject).spec?.finalizers ?? [] },
    }),
  },
  deletion: {
    markTerminating(obj) {
      const ns = obj as NamespaceObject;
      ns.status = { ...(ns.status ?? {}), phase: 'Terminating' };
    },
    blocksRemoval: (obj) => ((obj as NamespaceObject).spec?.finalizers ?? []).length > 0,
    finalizersOnFirstDelete: namespaceFinalizersAfterDelete,
  },
  setDefaults: setNameLabel,
  prepareForCreate(obj) {
    const ns = obj as NamespaceObject;
    // status is owned by the server; a new namespace is Active and finalized by the namespace controller
    ns.status = { phase: 'Active' };
    const finalizers = ns.spec?.finalizers ?? [];
    ns.spec = { ...(ns.spec ?? {}), finalizers: finalizers.includes(namespaceFinalizer) ? finalizers : [...finalizers, namespaceFinalizer] };
  },
  prepareForUpdate(obj, old) {
    const ns = obj as NamespaceObject;
    const prev = old as NamespaceObject;
    // the main resource cannot change status or spec.finalizers (the finalize and status subresources do)
    ns.status = prev.status;
    ns.spec = { ...(ns.spec ?? {}), finalizers: prev.spec?.finalizers };
    if (!ns.spec.finalizers) delete ns.spec.finalizers;
  },
  validate(obj) {
    const errs = validateObjectMeta(obj.metadata, false, 'dns1123Label');
    const ns = obj as NamespaceObject;
    (ns.spec?.finalizers ?? []).forEach((f, i) => {
      if (f !== namespaceFinalizer && !f.includes('/')) {
        errs.push(fieldErrors.invalid(`spec.finalizers[${i}]`, f, 'name is neither a standard finalizer name nor is it fully qualified'));
      }
    });
    return errs;
  },
  validateUpdate: (obj, old) => [...namespaceKind.validate(obj), ...validateObjectMetaUpdate(obj.metadata, old.metadata)],
});
