/**
 * coordination.orch.io/v1 Lease (served as coordination.k8s.io/v1 too): the lock of leader
 * election and node heartbeats. Holders renew it with compare-and-swap updates, so an update must
 * name the resourceVersion it replaces.
 */
import { fieldErrors, type FieldError } from '../../status/status-error.js';
import { allVerbs, builtinKind, defaultUnknownFieldLabelMessage, type KindDeclaration } from '../kind.js';
import { typeAndMeta, type KObject } from '../meta.js';
import { s } from '../schema/builtin-structural.js';
import { ageColumn, nameColumn } from '../printing.js';
import { isQualifiedName, validateObjectMeta, validateObjectMetaUpdate } from '../validation/names.js';

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
  strategy?: string;
  preferredHolder?: string;
}

export interface LeaseObject extends KObject {
  spec?: LeaseSpec;
}

const holderIdentityDescription = 'holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.';

const leaseSpec = s.struct('LeaseSpec', {
  holderIdentity: s.stringPointer(holderIdentityDescription),
  leaseDurationSeconds: s.int32Pointer('leaseDurationSeconds is a duration that candidates for a lease need to wait to force acquire it. This is measured against the time of last observed renewTime.'),
  acquireTime: s.microTime('acquireTime is a time when the current lease was acquired.'),
  renewTime: s.microTime('renewTime is a time when the current holder of a lease has last updated the lease.'),
  leaseTransitions: s.int32Pointer('leaseTransitions is the number of transitions of a lease between holders.'),
  strategy: s.stringPointer('Strategy indicates the strategy for picking the leader for coordinated leader election. If the field is not specified, there is no active coordination for this lease. (Alpha) Using this field requires the CoordinatedLeaderElection feature gate to be enabled.'),
  preferredHolder: s.stringPointer('PreferredHolder signals to a lease holder that the lease has a more optimal holder and should be given up. This field can only be set if Strategy is also set.'),
}, 'LeaseSpec is a specification of a Lease.', {
  proto: { holderIdentity: 1, leaseDurationSeconds: 2, acquireTime: 3, renewTime: 4, leaseTransitions: 5, strategy: 6, preferredHolder: 7 },
  pointers: ['acquireTime', 'renewTime'],
});

/** The strategies Kubernetes defines; others must be qualified names (`example.com/mine`). */
const leaseStrategies = ['OldestEmulationVersion'];

/** ValidateCoordinatedLeaseStrategy, with Kubernetes' field path (it names `strategy` twice). */
function validateStrategy(strategy: string): FieldError[] {
  const path = 'spec.strategy.strategy';
  if (!strategy.includes('/')) {
    return leaseStrategies.includes(strategy) ? [] : [fieldErrors.notSupported(path, strategy, leaseStrategies)];
  }
  return isQualifiedName(strategy).map((msg) => fieldErrors.invalid(path, strategy, msg));
}

/** ValidateLeaseSpec. */
function validateLeaseSpec(spec: LeaseSpec): FieldError[] {
  const errs: FieldError[] = [];
  if (spec.leaseDurationSeconds !== undefined && spec.leaseDurationSeconds <= 0) {
    errs.push(fieldErrors.invalid('spec.leaseDurationSeconds', spec.leaseDurationSeconds, 'must be greater than 0'));
  }
  if (spec.leaseTransitions !== undefined && spec.leaseTransitions < 0) {
    errs.push(fieldErrors.invalid('spec.leaseTransitions', spec.leaseTransitions, 'must be greater than or equal to 0'));
  }
  if (spec.strategy !== undefined) errs.push(...validateStrategy(spec.strategy));
  if (spec.preferredHolder && !spec.strategy) {
    errs.push(fieldErrors.forbidden('spec.preferredHolder', 'may only be specified if `strategy` is defined'));
  }
  return errs;
}

/**
 * strategy and preferredHolder belong to coordinated leader election, an alpha feature
 * (CoordinatedLeaderElection, off by default in 1.32): they are dropped unless already stored.
 */
function dropGatedFields(lease: LeaseObject, old?: LeaseObject): void {
  if (!lease.spec) return;
  if (old?.spec?.strategy === undefined) delete lease.spec.strategy;
  if (old?.spec?.preferredHolder === undefined) delete lease.spec.preferredHolder;
}

export const leaseKind: KindDeclaration = builtinKind({
  group: 'coordination.orch.io', version: 'v1', kind: 'Lease', listKind: 'LeaseList',
  resource: 'leases', singular: 'lease', shortNames: [], namespaced: true,
  verbs: allVerbs,
  structural: s.struct('Lease', typeAndMeta({ spec: leaseSpec }), 'Lease defines a lease concept.', { proto: { metadata: 1, spec: 2 } }),
  nameRule: 'dns1123Subdomain',
  table: [
    nameColumn,
    { name: 'Holder', type: 'string', description: holderIdentityDescription, cell: (o) => (o as LeaseObject).spec?.holderIdentity ?? '' },
    ageColumn,
  ],
  returnDeletedObject: false,
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: false,
  fieldLabels: {},
  unknownFieldLabelMessage: defaultUnknownFieldLabelMessage,
  prepareForCreate: (obj) => dropGatedFields(obj as LeaseObject),
  prepareForUpdate: (obj, old) => dropGatedFields(obj as LeaseObject, old as LeaseObject),
  validate: (obj) => [...validateObjectMeta(obj.metadata, true, 'dns1123Subdomain'), ...validateLeaseSpec((obj as LeaseObject).spec ?? {})],
  validateUpdate: (obj, old) => [
    ...validateObjectMeta(obj.metadata, true, 'dns1123Subdomain'), ...validateObjectMetaUpdate(obj.metadata, old.metadata),
    ...validateLeaseSpec((obj as LeaseObject).spec ?? {}),
  ],
});
