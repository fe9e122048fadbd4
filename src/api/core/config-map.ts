/** core/v1 ConfigMap: configuration data for pods, as text (`data`) or bytes (`binaryData`). */
import { fieldErrors, type FieldError } from '../../status/status-error.js';
import { allVerbs, builtinKind, defaultUnknownFieldLabelMessage, type KindDeclaration } from '../kind.js';
import { typeAndMeta, type KObject } from '../meta.js';
import { s } from '../schema/builtin-structural.js';
import { ageColumn, nameColumn } from '../printing.js';
import { isConfigMapKey, validateObjectMeta, validateObjectMetaUpdate } from '../validation/names.js';

export interface ConfigMapObject extends KObject {
  immutable?: boolean;
  data?: Record<string, string>;
  /** base64 text of each value, as JSON carries bytes */
  binaryData?: Record<string, string>;
}

/** core.MaxSecretSize, which bounds a ConfigMap's values too */
const maxConfigMapSize = 1024 * 1024;

/** ValidateConfigMap, in Kubernetes' order and wording. */
function validateConfigMap(obj: KObject): FieldError[] {
  const cm = obj as ConfigMapObject;
  const errs = validateObjectMeta(cm.metadata, true, 'dns1123Subdomain');
  let totalSize = 0;
  for (const [key, value] of Object.entries(cm.data ?? {})) {
    for (const msg of isConfigMapKey(key)) errs.push(fieldErrors.invalid(`data[${key}]`, key, msg));
    if (cm.binaryData?.[key] !== undefined) errs.push(fieldErrors.invalid(`data[${key}]`, key, 'duplicate of key present in binaryData'));
    totalSize += Buffer.byteLength(value, 'utf8');
  }
  for (const [key, value] of Object.entries(cm.binaryData ?? {})) {
    for (const msg of isConfigMapKey(key)) errs.push(fieldErrors.invalid(`binaryData[${key}]`, key, msg));
    totalSize += Buffer.byteLength(value, 'base64');
  }
  // the empty path: the error concerns the whole object
  if (totalSize > maxConfigMapSize) errs.push(fieldErrors.tooLong('', maxConfigMapSize));
  return errs;
}

/** reflect.DeepEqual of two string maps: a nil map differs from an empty one, key order does not matter. */
function sameMap(a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>> | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}

/** ValidateConfigMapUpdate: once `immutable` is true, it and the data stay as they are. */
function validateConfigMapUpdate(obj: KObject, old: KObject): FieldError[] {
  const cm = obj as ConfigMapObject;
  const prev = old as ConfigMapObject;
  const errs = validateObjectMetaUpdate(cm.metadata, prev.metadata);
  if (prev.immutable === true) {
    const immutable = 'field is immutable when `immutable` is set';
    if (cm.immutable !== true) errs.push(fieldErrors.forbidden('immutable', immutable));
    // data defaults to an empty map (SetDefaults_ConfigMap), binaryData does not
    if (!sameMap(cm.data ?? {}, prev.data ?? {})) errs.push(fieldErrors.forbidden('data', immutable));
    if (!sameMap(cm.binaryData, prev.binaryData)) errs.push(fieldErrors.forbidden('binaryData', immutable));
  }
  return [...errs, ...validateConfigMap(obj)];
}

export const configMapKind: KindDeclaration = builtinKind({
  group: '', version: 'v1', kind: 'ConfigMap', listKind: 'ConfigMapList',
  resource: 'configmaps', singular: 'configmap', shortNames: ['cm'], namespaced: true,
  verbs: allVerbs,
  structural: s.struct('ConfigMap', typeAndMeta({
    immutable: s.boolean('Immutable, if set to true, ensures that data stored in the ConfigMap cannot be updated (only object metadata can be modified). If not set to true, the field can be modified at any time. Defaulted to nil.'),
    data: s.map(s.string(), 'Data contains the configuration data. Each key must consist of alphanumeric characters, \'-\', \'_\' or \'.\'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.'),
    binaryData: s.map(s.bytes(), 'BinaryData contains the binary data. Each key must consist of alphanumeric characters, \'-\', \'_\' or \'.\'. BinaryData can contain byte sequences that are not in the UTF-8 range. The keys stored in BinaryData must not overlap with the ones in the Data field, this is enforced during validation process. Using this field will require 1.10+ apiserver and kubelet.'),
  }), 'ConfigMap holds configuration data for pods to consume.', { proto: { metadata: 1, data: 2, binaryData: 3, immutable: 4 } }),
  nameRule: 'dns1123Subdomain',
  // kubectl's printConfigMap: DATA counts the keys of both maps
  table: [
    nameColumn,
    {
      name: 'Data', type: 'string', description: 'Data contains the configuration data. Each key must consist of alphanumeric characters, \'-\', \'_\' or \'.\'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.',
      cell: (o) => Object.keys((o as ConfigMapObject).data ?? {}).length + Object.keys((o as ConfigMapObject).binaryData ?? {}).length,
    },
    ageColumn,
  ],
  returnDeletedObject: false,
  allowCreateOnUpdate: false,
  fieldLabels: {},
  unknownFieldLabelMessage: defaultUnknownFieldLabelMessage,
  validate: validateConfigMap,
  validateUpdate: validateConfigMapUpdate,
});
