/**
 * ValidateAuthorizationConfiguration (k8s.io/apiserver/pkg/apis/apiserver/validation), with
 * Kubernetes' field paths and messages, and the match conditions compiled on the way: the CEL
 * library is loaded only when a webhook has conditions.
 */
import { statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { isDns1123Subdomain } from '../../../api/validation/names.js';
import { formatDuration } from '../../../config/duration.js';
import { fieldErrors, type FieldError } from '../../../status/status-error.js';
import { MatchConditions } from '../webhook/match-conditions.js';
import { authorizerTypes, type AuthorizationConfiguration, type WebhookConfiguration } from './authorization-config.js';

/** at most this many match conditions per webhook */
export const maxMatchConditions = 64;

/** Only webhooks may appear more than once. */
const repeatableTypes = new Set(['Webhook']);

export interface ValidatedConfiguration {
  errors: FieldError[];
  /** the compiled match conditions of each webhook, by authorizer name */
  matchConditions: Map<string, MatchConditions>;
}

function written(text: string | undefined, ms: number): string {
  return text ?? formatDuration(ms);
}

function validateTtl(errs: FieldError[], path: string, ms: number, text: string | undefined): void {
  if (ms < 0) errs.push(fieldErrors.invalid(path, written(text, ms), 'must be > 0s'));
}

async function validateWebhook(path: string, w: WebhookConfiguration, errs: FieldError[]): Promise<MatchConditions | undefined> {
  if (w.timeoutMs === 0) errs.push(fieldErrors.required(`${path}.timeout`));
  else if (w.timeoutMs > 30_000 || w.timeoutMs < 0) errs.push(fieldErrors.invalid(`${path}.timeout`, written(w.written.timeout, w.timeoutMs), 'must be > 0s and <= 30s'));
  validateTtl(errs, `${path}.authorizedTTL`, w.authorizedTtlMs, w.written.authorizedTTL);
  validateTtl(errs, `${path}.unauthorizedTTL`, w.unauthorizedTtlMs, w.written.unauthorizedTTL);

  if (w.subjectAccessReviewVersion === '') errs.push(fieldErrors.required(`${path}.subjectAccessReviewVersion`));
  else if (!['v1', 'v1beta1'].includes(w.subjectAccessReviewVersion)) {
    errs.push(fieldErrors.notSupported(`${path}.subjectAccessReviewVersion`, w.subjectAccessReviewVersion, ['v1', 'v1beta1']));
  }
  if (w.matchConditionSubjectAccessReviewVersion === '') {
    if (w.matchConditions.length > 0) errs.push(fieldErrors.required(`${path}.matchConditionSubjectAccessReviewVersion`, 'required if match conditions are specified'));
  } else if (w.matchConditionSubjectAccessReviewVersion !== 'v1') {
    errs.push(fieldErrors.notSupported(`${path}.matchConditionSubjectAccessReviewVersion`, w.matchConditionSubjectAccessReviewVersion, ['v1']));
  }
  if (w.failurePolicy === '') errs.push(fieldErrors.required(`${path}.failurePolicy`));
  else if (!['NoOpinion', 'Deny'].includes(w.failurePolicy)) errs.push(fieldErrors.notSupported(`${path}.failurePolicy`, w.failurePolicy, ['NoOpinion', 'Deny']));

  const info = w.connectionInfo;
  const file = info.kubeConfigFile;
  switch (info.type) {
    case '':
      errs.push(fieldErrors.required(`${path}.connectionInfo.type`));
      break;
    case 'InClusterConfig':
      if (file !== undefined) errs.push(fieldErrors.invalid(`${path}.connectionInfo.kubeConfigFile`, file, 'can only be set when type=KubeConfigFile'));
      break;
    case 'KubeConfigFile':
      if (!file) errs.push(fieldErrors.required(`${path}.connectionInfo.kubeConfigFile`));
      else if (!isAbsolute(file)) errs.push(fieldErrors.invalid(`${path}.connectionInfo.kubeConfigFile`, file, 'must be an absolute path'));
      else {
        try {
          if (!statSync(file).isFile()) errs.push(fieldErrors.invalid(`${path}.connectionInfo.kubeConfigFile`, file, 'must be a regular file'));
        } catch (err) {
          errs.push(fieldErrors.invalid(`${path}.connectionInfo.kubeConfigFile`, file, `error loading file: ${(err as Error).message}`));
        }
      }
      break;
    default:
      errs.push(fieldErrors.notSupported(`${path}.connectionInfo.type`, info.type, ['InClusterConfig', 'KubeConfigFile']));
  }

  if (w.matchConditions.length > maxMatchConditions) {
    errs.push({ type: 'FieldValueTooMany', field: `${path}.matchConditions`, badValue: w.matchConditions.length, detail: `must have at most ${maxMatchConditions} items` });
    return undefined;
  }
  if (w.matchConditions.length === 0) return undefined;
  const compiled = await MatchConditions.compile(w.matchConditions.map((c) => c.expression), `${path}.matchConditions`);
  errs.push(...compiled.errors);
  return compiled.conditions;
}

export async function validateAuthorizationConfiguration(c: AuthorizationConfiguration): Promise<ValidatedConfiguration> {
  const errs: FieldError[] = [];
  const matchConditions = new Map<string, MatchConditions>();
  if (c.authorizers.length === 0) errs.push(fieldErrors.required('authorizers', 'at least one authorization mode must be defined'));
  const seenTypes = new Set<string>();
  const seenNames = new Set<string>();
  for (const [i, a] of c.authorizers.entries()) {
    const path = `authorizers[${i}]`;
    if (a.type === '') { errs.push(fieldErrors.required(`${path}.type`)); continue; }
    if (!(authorizerTypes as readonly string[]).includes(a.type)) { errs.push(fieldErrors.notSupported(`${path}.type`, a.type, authorizerTypes)); continue; }
    if (seenTypes.has(a.type) && !repeatableTypes.has(a.type)) { errs.push(fieldErrors.duplicate(`${path}.type`, a.type)); continue; }
    seenTypes.add(a.type);

    if (a.name === '') errs.push(fieldErrors.required(`${path}.name`));
    else if (seenNames.has(a.name)) errs.push(fieldErrors.duplicate(`${path}.name`, a.name));
    else {
      const problems = isDns1123Subdomain(a.name);
      if (problems.length > 0) errs.push(fieldErrors.invalid(`${path}.name`, a.name, `authorizer name is invalid: ${problems.join(', ')}`));
    }
    seenNames.add(a.name);

    if (a.type === 'Webhook') {
      if (!a.webhook) { errs.push(fieldErrors.required(`${path}.webhook`, 'required when type=Webhook')); continue; }
      const conditions = await validateWebhook(`${path}.webhook`, a.webhook, errs);
      if (conditions) matchConditions.set(a.name, conditions);
    } else if (a.webhook) {
      errs.push(fieldErrors.invalid(`${path}.webhook`, 'non-null', 'may only be specified when type=Webhook'));
    }
  }
  return { errors: errs, matchConditions };
}
