/**
 * Validation of CustomResourceDefinitions (apiextensions-apiserver's pkg/apis/apiextensions/
 * validation) with Kubernetes' messages: the name is `<plural>.<group>`, names are DNS labels,
 * scope is known, exactly one storage version, every version has a structural schema in v1,
 * printer columns and conversion are well formed, group and scope never change.
 */
import { parseStructural, type SchemaProblem, type Structural } from '../api/schema/structural.js';
import { validateStructural } from '../api/schema/structural-invariants.js';
import { validateObjectMeta, validateObjectMetaUpdate, isDns1123Subdomain } from '../api/validation/names.js';
import { fieldErrors, type FieldError } from '../status/status-error.js';
import type { CrdObject, CrdVersion } from './crd-types.js';
import { validateSchemaRules } from './schema-rules.js';
import { validateRules } from './cel/rules.js';
import { validateWebhookService, validateWebhookUrl } from './webhook-client-config.js';
import { isDns1035Label } from './dns-1035-label.js';

const printerColumnTypes = ['integer', 'number', 'string', 'boolean', 'date'];

/** The version's schema as structural, or the errors that keep it from being one. */
export function versionSchema(v: CrdVersion, path: string): { schema?: Structural; errs: FieldError[] } {
  const raw = v.schema?.openAPIV3Schema;
  if (raw === undefined || raw === null) return { errs: [fieldErrors.required(`${path}.schema.openAPIV3Schema`, 'schemas are required')] };
  const problems: SchemaProblem[] = [];
  const schemaPath = `${path}.schema.openAPIV3Schema`;
  const schema = parseStructural(raw, schemaPath, problems);
  const errs = problems.map((p) => fieldErrors.invalid(p.path, p.value, p.detail));
  if (errs.length) return { errs };
  errs.push(...validateStructural(schema, schemaPath), ...validateSchemaRules(schema, schemaPath), ...validateRules(schema, schemaPath));
  return { schema, errs };
}

function validateNames(crd: CrdObject): FieldError[] {
  const errs: FieldError[] = [];
  const names = crd.spec?.names ?? ({} as CrdObject['spec']['names']);
  const path = 'spec.names';
  const label = (field: 'plural' | 'singular' | 'listKind', value: string | undefined, lower: boolean) => {
    if (!value) return;
    for (const msg of isDns1035Label(lower ? value.toLowerCase() : value)) {
      errs.push(fieldErrors.invalid(`${path}.${field}`, value, lower ? `may have mixed case, but should otherwise match: ${msg}` : msg));
    }
  };
  if (!names.plural) errs.push(fieldErrors.required(`${path}.plural`, '')); else label('plural', names.plural, false);
  label('singular', names.singular, false);
  if (!names.kind) errs.push(fieldErrors.required(`${path}.kind`, ''));
  else for (const msg of isDns1035Label(names.kind.toLowerCase())) errs.push(fieldErrors.invalid(`${path}.kind`, names.kind, `may have mixed case, but should otherwise match: ${msg}`));
  if (!names.listKind) errs.push(fieldErrors.required(`${path}.listKind`, ''));
  else {
    label('listKind', names.listKind, true);
    if (names.listKind === names.kind) errs.push(fieldErrors.invalid(`${path}.listKind`, names.listKind, 'kind and listKind may not be the same'));
  }
  (names.shortNames ?? []).forEach((n, i) => {
    for (const msg of isDns1035Label(n)) errs.push(fieldErrors.invalid(`${path}.shortNames[${i}]`, n, msg));
  });
  (names.categories ?? []).forEach((n, i) => {
    for (const msg of isDns1035Label(n)) errs.push(fieldErrors.invalid(`${path}.categories[${i}]`, n, msg));
  });
  return errs;
}

function validateVersions(crd: CrdObject): FieldError[] {
  const errs: FieldError[] = [];
  const versions = crd.spec?.versions ?? [];
  if (versions.length === 0) errs.push(fieldErrors.invalid('spec.versions', versions, 'must have exactly one version marked as storage version'));
  const seen = new Set<string>();
  let storage = 0;
  let served = 0;
  versions.forEach((v, i) => {
    const path = `spec.versions[${i}]`;
    if (!v.name) errs.push(fieldErrors.required(`${path}.name`, ''));
    else for (const msg of isDns1035Label(v.name)) errs.push(fieldErrors.invalid(`${path}.name`, v.name, msg));
    if (v.name && seen.has(v.name)) errs.push(fieldErrors.invalid('spec.versions', versions, 'must contain unique version names'));
    seen.add(v.name);
    if (v.storage) storage++;
    if (v.served) served++;
    errs.push(...versionSchema(v, path).errs);
    (v.additionalPrinterColumns ?? []).forEach((c, j) => {
      const cp = `${path}.additionalPrinterColumns[${j}]`;
      if (!c.name) errs.push(fieldErrors.required(`${cp}.name`, ''));
      if (!printerColumnTypes.includes(c.type)) errs.push(fieldErrors.notSupported(`${cp}.type`, c.type, printerColumnTypes));
      if (!c.jsonPath) errs.push(fieldErrors.required(`${cp}.JSONPath`, ''));
      if ((c.priority ?? 0) < 0) errs.push(fieldErrors.invalid(`${cp}.priority`, c.priority, 'must be greater than or equal to 0'));
    });
    if (v.deprecationWarning !== undefined && !v.deprecated) {
      errs.push(fieldErrors.invalid(`${path}.deprecationWarning`, v.deprecationWarning, 'can only be set for deprecated versions'));
    }
    if ((v.deprecationWarning?.length ?? 0) > 256) errs.push(fieldErrors.tooLong(`${path}.deprecationWarning`, 256));
  });
  if (versions.length > 0 && storage !== 1) errs.push(fieldErrors.invalid('spec.versions', versions, 'must have exactly one version marked as storage version'));
  if (versions.length > 0 && served === 0) errs.push(fieldErrors.invalid('spec.versions', versions, 'must have at least one version marked as served'));
  return errs;
}

function validateConversion(crd: CrdObject): FieldError[] {
  const conversion = crd.spec?.conversion;
  if (!conversion) return [];
  const errs: FieldError[] = [];
  if (conversion.strategy !== 'None' && conversion.strategy !== 'Webhook') {
    errs.push(fieldErrors.notSupported('spec.conversion.strategy', conversion.strategy, ['None', 'Webhook']));
  }
  if (conversion.strategy === 'Webhook') {
    const webhook = conversion.webhook;
    const config = webhook?.clientConfig;
    if (!config) errs.push(fieldErrors.required('spec.conversion.webhook.clientConfig', 'required when strategy is set to Webhook'));
    else if (!config.url === !config.service) errs.push(fieldErrors.required('spec.conversion.webhook.clientConfig', 'exactly one of url or service is required'));
    else if (config.url) errs.push(...validateWebhookUrl('spec.conversion.webhook.clientConfig.url', config.url));
    else if (config.service) errs.push(...validateWebhookService('spec.conversion.webhook.clientConfig.service', config.service));
    if (!webhook?.conversionReviewVersions?.includes('v1')) {
      errs.push(fieldErrors.invalid('spec.conversion.webhook.conversionReviewVersions', webhook?.conversionReviewVersions ?? [], 'must include at least one of v1'));
    }
  } else if (conversion.webhook) {
    errs.push(fieldErrors.forbidden('spec.conversion.webhook', 'should not be set when strategy is not set to Webhook'));
  }
  return errs;
}

export function validateCrd(crd: CrdObject): FieldError[] {
  const errs = validateObjectMeta(crd.metadata, false, 'dns1123Subdomain');
  const spec = crd.spec;
  if (!spec) return [...errs, fieldErrors.required('spec', '')];
  const expectedName = `${spec.names?.plural ?? ''}.${spec.group ?? ''}`;
  if (crd.metadata.name !== expectedName) errs.push(fieldErrors.invalid('metadata.name', crd.metadata.name ?? '', 'must be spec.names.plural+"."+spec.group'));
  if (!spec.group) errs.push(fieldErrors.required('spec.group', ''));
  else {
    for (const msg of isDns1123Subdomain(spec.group)) errs.push(fieldErrors.invalid('spec.group', spec.group, msg));
    if (spec.group.split('.').length < 2) errs.push(fieldErrors.invalid('spec.group', spec.group, 'should be a domain with at least one dot'));
  }
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster') {
    if (!spec.scope) errs.push(fieldErrors.required('spec.scope', ''));
    else errs.push(fieldErrors.notSupported('spec.scope', spec.scope, ['Cluster', 'Namespaced']));
  }
  if (spec.preserveUnknownFields) {
    errs.push(fieldErrors.invalid('spec.preserveUnknownFields', true, 'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead'));
  }
  errs.push(...validateNames(crd), ...validateVersions(crd), ...validateConversion(crd));
  return errs;
}

export function validateCrdUpdate(crd: CrdObject, old: CrdObject): FieldError[] {
  const errs = [...validateCrd(crd), ...validateObjectMetaUpdate(crd.metadata, old.metadata)];
  if (crd.spec?.group !== old.spec?.group) errs.push(fieldErrors.invalid('spec.group', crd.spec?.group ?? '', 'field is immutable'));
  if (crd.spec?.scope !== old.spec?.scope) errs.push(fieldErrors.invalid('spec.scope', crd.spec?.scope ?? '', 'field is immutable'));
  for (const stored of old.status?.storedVersions ?? []) {
    if (!(crd.status?.storedVersions ?? []).includes(stored) && !crd.spec.versions.some((v) => v.name === stored)) {
      errs.push(fieldErrors.invalid('status.storedVersions', crd.status?.storedVersions ?? [], `must have the storage version ${stored}`));
    }
  }
  return errs;
}
