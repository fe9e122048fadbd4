/**
 * autoscaling/v1 Scale: the representation of a `scale` subresource (a custom resource's, when its
 * CRD declares one). Never served as a resource of its own; declared so that bodies decode and
 * discovery names it as the subresource's kind.
 */
import { builtinKind, defaultUnknownFieldLabelMessage, type KindDeclaration } from '../kind.js';
import { typeAndMeta } from '../meta.js';
import { s } from '../schema/builtin-structural.js';

const scale = s.struct('Scale', typeAndMeta({
  spec: s.struct('ScaleSpec', { replicas: s.int32('replicas is the desired number of instances for the scaled object.') },
    'spec defines the behavior of the scale.'),
  status: s.struct('ScaleStatus', {
    replicas: s.int32('replicas is the actual number of observed instances of the scaled object.'),
    selector: s.string('selector is the label query over pods that should match the replicas count.'),
  }, 'status is the current status of the scale.', { required: ['replicas'] }),
}), 'Scale represents a scaling request for a resource.', { proto: { metadata: 1, spec: 2, status: 3 } });

export const scaleKind: KindDeclaration = builtinKind({
  group: 'autoscaling', version: 'v1', kind: 'Scale', listKind: 'ScaleList', resource: 'scale', singular: 'scale',
  shortNames: [], namespaced: true, verbs: [], structural: scale, nameRule: 'dns1123Subdomain',
  returnDeletedObject: false, allowCreateOnUpdate: false, fieldLabels: {}, unknownFieldLabelMessage: defaultUnknownFieldLabelMessage,
  validate: () => [],
  validateUpdate: () => [],
});
