/**
 * flowcontrol.apiserver.orch.io/v1 PriorityLevelConfiguration (served as
 * flowcontrol.apiserver.k8s.io/v1 too): a priority level's share of the server's concurrency, and
 * what happens to requests beyond it (queue or reject). Cluster-scoped, with a status subresource.
 */
import { allVerbs, builtinKind, defaultUnknownFieldLabelMessage, type KindDeclaration } from '../kind.js';
import { typeAndMeta, type KObject } from '../meta.js';
import { ageColumn, nameColumn } from '../printing.js';
import { s } from '../schema/builtin-structural.js';
import { validateObjectMeta } from '../validation/names.js';
import { conditionSchema, flowcontrolGroup, struct, type PriorityLevelConfigurationObject, type QueuingConfiguration } from './types.js';
import { serverOwnedStatus } from './server-status.js';
import { validateConditions, validatePriorityLevelSpec } from './validation.js';

/** v1 SetDefaults_LimitedPriorityLevelConfiguration: only when unspecified; an explicit 0 stays 0 */
export const defaultNominalConcurrencyShares = 30;
/** v1 SetDefaults_QueuingConfiguration */
const queuingDefaults = { queues: 64, handSize: 8, queueLengthLimit: 50 };

const nominalSharesDescription = '`nominalConcurrencyShares` (NCS) contributes to the computation of the NominalConcurrencyLimit (NominalCL) of this level. The server\'s concurrency limit (ServerCL) is divided among the Limited priority levels in proportion to their NCS values: NominalCL(i) = ceil( ServerCL * NCS(i) / sum_ncs ). If not specified, this field defaults to a value of 30. Setting this field to zero supports the construction of a "jail" for this priority level that is used to hold some request(s)';
const lendableDescription = '`lendablePercent` prescribes the fraction of the level\'s NominalCL that can be borrowed by other priority levels. The value of this field must be between 0 and 100, inclusive, and it defaults to 0.';

const queuing = struct('QueuingConfiguration', {
  queues: s.int32('`queues` is the number of queues for this priority level. The queues exist independently at each apiserver. The value must be positive. This field has a default value of 64.'),
  handSize: s.int32('`handSize` is a small positive number that configures the shuffle sharding of requests into queues. This field has a default value of 8.'),
  queueLengthLimit: s.int32('`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given queue of this priority level at a time; excess requests are rejected. This value must be positive. If not specified, it will be defaulted to 50.'),
}, { queues: 1, handSize: 2, queueLengthLimit: 3 }, 'QueuingConfiguration holds the configuration parameters for queuing');

const limited = struct('LimitedPriorityLevelConfiguration', {
  nominalConcurrencyShares: s.int32Pointer(nominalSharesDescription),
  limitResponse: struct('LimitResponse', {
    type: s.string('`type` is "Queue" or "Reject". Required.'),
    queuing,
  }, { type: 1, queuing: 2 }, 'LimitResponse defines how to handle requests that can not be executed right now.', ['type'], ['queuing']),
  lendablePercent: s.int32Pointer(lendableDescription),
  borrowingLimitPercent: s.int32Pointer('`borrowingLimitPercent`, if present, configures a limit on how many seats this priority level can borrow from other priority levels. When this field is left `nil`, the limit is effectively infinite.'),
}, { nominalConcurrencyShares: 1, limitResponse: 2, lendablePercent: 3, borrowingLimitPercent: 4 },
'LimitedPriorityLevelConfiguration specifies how to handle requests that are subject to limits.');

const exempt = struct('ExemptPriorityLevelConfiguration', {
  nominalConcurrencyShares: s.int32Pointer('`nominalConcurrencyShares` (NCS) contributes to the computation of the NominalConcurrencyLimit (NominalCL) of this level. This field has a default value of zero.'),
  lendablePercent: s.int32Pointer(lendableDescription),
}, { nominalConcurrencyShares: 1, lendablePercent: 2 }, 'ExemptPriorityLevelConfiguration describes the configurable aspects of the handling of exempt requests.');

const priorityLevelSpec = struct('PriorityLevelConfigurationSpec', {
  type: s.string('`type` indicates whether this priority level is subject to limitation on request execution. A value of `"Exempt"` means that requests of this priority level are not subject to a limit. A value of `"Limited"` means that (a) requests of this priority level _are_ subject to limits and (b) some of the server\'s limited capacity is made available exclusively to this priority level. Required.'),
  limited,
  exempt,
}, { type: 1, limited: 2, exempt: 3 }, 'PriorityLevelConfigurationSpec specifies the configuration of a priority level.', ['type'], ['limited', 'exempt']);

const priorityLevelStatus = struct('PriorityLevelConfigurationStatus', {
  conditions: s.mapList(conditionSchema('PriorityLevelConfigurationCondition', 'priority level'), ['type'], '`conditions` is the current state of "request-priority".', { strategy: 'merge', mergeKey: 'type' }),
}, { conditions: 1 }, 'PriorityLevelConfigurationStatus represents the current state of a "request-priority".');

/** The v1 defaults, applied as a decoded object is. */
export function setPriorityLevelDefaults(pl: PriorityLevelConfigurationObject): void {
  const spec = pl.spec;
  if (spec?.limited) {
    spec.limited.nominalConcurrencyShares ??= defaultNominalConcurrencyShares;
    spec.limited.lendablePercent ??= 0;
    const queuing: QueuingConfiguration | undefined = spec.limited.limitResponse?.queuing;
    if (queuing) {
      if (!queuing.queues) queuing.queues = queuingDefaults.queues;
      if (!queuing.handSize) queuing.handSize = queuingDefaults.handSize;
      if (!queuing.queueLengthLimit) queuing.queueLengthLimit = queuingDefaults.queueLengthLimit;
    }
  }
  if (spec?.exempt) {
    spec.exempt.nominalConcurrencyShares ??= 0;
    spec.exempt.lendablePercent ??= 0;
  }
}

function validate(obj: KObject): ReturnType<KindDeclaration['validate']> {
  const pl = obj as PriorityLevelConfigurationObject;
  return [
    ...validateObjectMeta(pl.metadata, false, 'dns1123Subdomain'),
    ...validatePriorityLevelSpec(pl.metadata.name ?? '', pl.spec ?? {}),
    ...validateConditions(pl.status?.conditions),
  ];
}

/** kubectl's printPriorityLevelConfiguration: `<none>` where the level has no such setting */
const limitedCell = (pick: (pl: PriorityLevelConfigurationObject) => number | undefined) =>
  (o: Readonly<KObject>) => pick(o as PriorityLevelConfigurationObject) ?? '<none>';
const queuingOf = (pl: PriorityLevelConfigurationObject) => pl.spec?.limited?.limitResponse?.queuing;

export const priorityLevelConfigurationKind: KindDeclaration = builtinKind({
  group: flowcontrolGroup, version: 'v1', kind: 'PriorityLevelConfiguration', listKind: 'PriorityLevelConfigurationList',
  resource: 'prioritylevelconfigurations', singular: 'prioritylevelconfiguration', shortNames: [], namespaced: false,
  verbs: allVerbs,
  structural: s.struct('PriorityLevelConfiguration', typeAndMeta({ spec: priorityLevelSpec, status: priorityLevelStatus }),
    'PriorityLevelConfiguration represents the configuration of a priority level.', { proto: { metadata: 1, spec: 2, status: 3 } }),
  nameRule: 'dns1123Subdomain',
  table: [
    nameColumn,
    { name: 'Type', type: 'string', description: priorityLevelSpec.properties?.type.description ?? '', cell: (o) => (o as PriorityLevelConfigurationObject).spec?.type ?? '' },
    { name: 'NominalConcurrencyShares', type: 'string', description: nominalSharesDescription, cell: limitedCell((pl) => pl.spec?.limited?.nominalConcurrencyShares) },
    { name: 'Queues', type: 'string', description: queuing.properties?.queues.description ?? '', cell: limitedCell((pl) => queuingOf(pl)?.queues) },
    { name: 'HandSize', type: 'string', description: queuing.properties?.handSize.description ?? '', cell: limitedCell((pl) => queuingOf(pl)?.handSize) },
    { name: 'QueueLengthLimit', type: 'string', description: queuing.properties?.queueLengthLimit.description ?? '', cell: limitedCell((pl) => queuingOf(pl)?.queueLengthLimit) },
    ageColumn,
  ],
  returnDeletedObject: false,
  tracksGeneration: true,
  allowCreateOnUpdate: false,
  fieldLabels: {},
  unknownFieldLabelMessage: defaultUnknownFieldLabelMessage,
  setDefaults: (obj) => setPriorityLevelDefaults(obj as PriorityLevelConfigurationObject),
  ...serverOwnedStatus(),
  validate,
  validateUpdate: (obj) => validate(obj),
});
