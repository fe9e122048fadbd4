import { parseJsonAsGo } from '../validation/go-json-syntax.js';
import { fieldErrors, type FieldError } from '../../status/status-error.js';
import { allVerbs, builtinKind, fieldLabelNotSupported, type KindDeclaration } from '../kind.js';
import { typeAndMeta, type KObject } from '../meta.js';
import { setOwn } from '../own-member.js';
import { s } from '../schema/builtin-structural.js';
import { ageColumn, nameColumn } from '../printing.js';
import { validateObjectMeta, validateObjectMetaUpdate } from '../validation/names.js';

export interface SecretObject extends KObject {
  type?: string;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  immutable?: boolean;
}

const configKey = /^[-._a-zA-Z0-9]+$/;
const maxSecretSize = 1024 * 1024;

/** Keys each typed Secret must carry, as Kubernetes validates its kubernetes.io/* types. */
const requiredKeys: Readonly<Record<string, readonly string[]>> = {
  'orch.io/dockercfg': ['.dockercfg'],
  'orch.io/dockerconfigjson': ['.dockerconfigjson'],
  'orch.io/ssh-auth': ['ssh-privatekey'],
  'orch.io/tls': ['tls.crt', 'tls.key'],
};

/**
 * Service-account token Secret types, the spec's and Kubernetes' spelling (manifests written for
 * Kubernetes ask for long-lived tokens so), each with the annotations naming its account and the
 * account's UID. The tokens controller fills both.
 */
const serviceAccountTokenTypes: Readonly<Record<string, { name: string; uid: string }>> = {
  'orch.io/service-account-token': { name: 'orch.io/service-account.name', uid: 'orch.io/service-account.uid' },
  'kubernetes.io/service-account-token': { name: 'kubernetes.io/service-account.name', uid: 'kubernetes.io/service-account.uid' },
};

/** The annotations of a service-account token Secret; undefined for another type. */
export function tokenAnnotationsOf(type: string | undefined): { name: string; uid: string } | undefined {
  return type !== undefined && Object.hasOwn(serviceAccountTokenTypes, type) ? serviceAccountTokenTypes[type] : undefined;
}

/**
 * The spec's name of a type kubectl may write in Kubernetes' spelling (`kubectl create secret tls`
 * sends `kubernetes.io/tls`): both are validated alike. Service-account token Secrets keep their
 * spelling: each names its account in an annotation of the same spelling (checked below).
 */
function specTypeOf(type: string): string {
  const suffix = type.startsWith('kubernetes.io/') ? type.slice('kubernetes.io/'.length) : undefined;
  return suffix !== undefined && suffix !== 'service-account-token' ? `orch.io/${suffix}` : type;
}

function validateSecret(obj: KObject): FieldError[] {
  const secret = obj as SecretObject;
  const errs = validateObjectMeta(obj.metadata, true, 'dns1123Subdomain');
  let total = 0;
  for (const [key, value] of Object.entries(secret.data ?? {})) {
    if (key.length > 253) errs.push(fieldErrors.invalid(`data[${key}]`, key, 'must be no more than 253 characters'));
    if (!configKey.test(key) || key === '.' || key === '..') {
      errs.push(fieldErrors.invalid(`data[${key}]`, key,
        key === '.' || key === '..' ? `must not be '${key}'` :
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"));
    }
    total += Buffer.byteLength(value, 'base64');
  }
  if (total > maxSecretSize) errs.push(fieldErrors.tooLong('data', maxSecretSize));
  const type = specTypeOf(secret.type ?? 'Opaque');
  for (const key of requiredKeys[type] ?? []) {
    if (secret.data?.[key] === undefined) errs.push(fieldErrors.required(`data[${key}]`));
  }
  // a token Secret names its account in the annotation of its own spelling
  const token = tokenAnnotationsOf(type);
  if (token && !obj.metadata.annotations?.[token.name]) errs.push(fieldErrors.required(`metadata.annotations[${token.name}]`));
  if (type === 'orch.io/basic-auth' && secret.data?.username === undefined && secret.data?.password === undefined) {
    errs.push(fieldErrors.required('data[username]'), fieldErrors.required('data[password]'));
  }
  // the docker config types hold JSON objects, checked as Kubernetes checks them
  const dockerKey = type === 'orch.io/dockercfg' ? '.dockercfg' : type === 'orch.io/dockerconfigjson' ? '.dockerconfigjson' : undefined;
  const config = dockerKey === undefined ? undefined : secret.data?.[dockerKey];
  if (config !== undefined) {
    const why = notJsonObject(Buffer.from(config, 'base64'));
    if (why) errs.push(fieldErrors.invalid(`data[${dockerKey}]`, '<secret contents redacted>', why));
  }
  return errs;
}

/** Why Go's json.Unmarshal into a map[string]interface{} refuses the bytes, if it does. */
function notJsonObject(bytes: Buffer): string | undefined {
  let value: unknown;
  try {
    value = parseJsonAsGo(bytes.toString('utf8'), bytes);
  } catch (err) {
    return (err as Error).message;
  }
  if (value === null || (typeof value === 'object' && !Array.isArray(value))) return undefined;
  const kind = Array.isArray(value) ? 'array' : typeof value === 'boolean' ? 'bool' : typeof value;
  return `json: cannot unmarshal ${kind} into Go value of type map[string]interface {}`;
}

export const secretKind: KindDeclaration = builtinKind({
  group: '', version: 'v1', kind: 'Secret', listKind: 'SecretList',
  resource: 'secrets', singular: 'secret', shortNames: [], namespaced: true,
  verbs: allVerbs,
  structural: s.struct('Secret', typeAndMeta({
    immutable: s.boolean('Immutable, if set to true, ensures that data stored in the Secret cannot be updated (only object metadata can be modified).'),
    data: s.map(s.bytes(), 'Data contains the secret data. Each key must consist of alphanumeric characters, \'-\', \'_\' or \'.\'. The serialized form of the secret data is a base64 encoded string.'),
    stringData: s.map(s.string(), 'stringData allows specifying non-binary secret data in string form. It is provided as a write-only input field for convenience.'),
    type: s.string('Used to facilitate programmatic handling of secret data.'),
  }), 'Secret holds secret data of a certain type. The total bytes of the values in the Data field must be less than 1 MiB.', { proto: { metadata: 1, data: 2, type: 3, stringData: 4, immutable: 5 } }),
  nameRule: 'dns1123Subdomain',
  table: [
    nameColumn,
    { name: 'Type', type: 'string', description: 'Used to facilitate programmatic handling of secret data.', cell: (o) => (o as SecretObject).type ?? '' },
    { name: 'Data', type: 'string', description: 'Data contains the secret data.', cell: (o) => Object.keys((o as SecretObject).data ?? {}).length },
    ageColumn,
  ],
  returnDeletedObject: false,
  allowCreateOnUpdate: false,
  fieldLabels: { type: (o) => (o as SecretObject).type ?? '' },
  unknownFieldLabelMessage: fieldLabelNotSupported,
  setDefaults: (obj) => normalizeSecret(obj as SecretObject),
  validate: validateSecret,
  validateUpdate(obj, old) {
    const secret = obj as SecretObject;
    const prev = old as SecretObject;
    const errs = [...validateSecret(obj), ...validateObjectMetaUpdate(obj.metadata, old.metadata)];
    if ((secret.type ?? 'Opaque') !== (prev.type ?? 'Opaque')) errs.push(fieldErrors.invalid('type', secret.type ?? '', 'field is immutable'));
    if (prev.immutable === true) {
      if (secret.immutable !== true) errs.push(fieldErrors.forbidden('immutable', 'field is immutable when `immutable` is set'));
      if (JSON.stringify(secret.data ?? {}) !== JSON.stringify(prev.data ?? {})) {
        errs.push(fieldErrors.forbidden('data', 'field is immutable when `immutable` is set'));
      }
    }
    return errs;
  },
});

/** stringData is write-only: it is folded into data (winning over it) and never stored. */
function normalizeSecret(secret: SecretObject): void {
  if (secret.stringData) {
    const data = { ...(secret.data ?? {}) };
    for (const [k, v] of Object.entries(secret.stringData)) setOwn(data, k, Buffer.from(v, 'utf8').toString('base64'));
    secret.data = data;
    delete secret.stringData;
  }
  if (!secret.type) secret.type = 'Opaque';
}
