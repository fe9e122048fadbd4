/**
 * Query parameters of resource requests, parsed and validated the way kube-apiserver's
 * parameter codec and ValidateListOptions / ValidateCreateOptions do, with their status codes.
 */
import { FieldSelector } from '../api/selection/field-selector.js';
import { LabelSelector } from '../api/selection/label-selector.js';
import type { FieldValidation } from '../codec/body-decoder.js';
import type { DeleteOptions, ListQuery } from '../resource-store/object-store.js';
import { errors, fieldErrors, type FieldError } from '../status/status-error.js';

const metaGroup = 'meta.orch.io';

function invalidOptions(kind: string, errs: FieldError[]) {
  return errors.invalid({ group: metaGroup, kind }, '', errs);
}

/**
 * A boolean query parameter as Kubernetes' parameter codec reads it (runtime.Convert_Slice_string_To_bool):
 * "0" and "false" in any case are false, anything else (an empty value too) is true; absent is undefined.
 * It never fails: `watch=True` (the Python client) and `watch=yes` are both true.
 */
export function parseBoolParam(q: URLSearchParams, name: string): boolean | undefined {
  const v = q.get(name);
  if (v === null) return undefined;
  return !(v === '0' || v.toLowerCase() === 'false');
}

const int64Min = -(2n ** 63n);
const int64Max = 2n ** 63n - 1n;

/**
 * An integer query parameter as the parameter codec reads it (strconv.ParseInt(v, 10, 64)): an
 * empty or malformed value is 400 with Go's error text, as kube-apiserver answers.
 */
export function parseIntParam(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null) return undefined;
  if (!/^[+-]?[0-9]+$/.test(v)) throw errors.badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
  const n = BigInt(v);
  if (n < int64Min || n > int64Max) throw errors.badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: value out of range`);
  return Number(n);
}

function selectors(q: URLSearchParams): { labelSelector?: LabelSelector; fieldSelector?: FieldSelector } {
  const out: { labelSelector?: LabelSelector; fieldSelector?: FieldSelector } = {};
  try {
    const l = q.get('labelSelector');
    if (l) out.labelSelector = LabelSelector.parse(l);
    const f = q.get('fieldSelector');
    if (f) out.fieldSelector = FieldSelector.parse(f);
  } catch (err) {
    throw errors.badRequest((err as Error).message);
  }
  return out;
}

/**
 * The ListOptions fields whose decoding can fail, read in the order kube-apiserver's parameter
 * codec converts them (timeoutSeconds, limit, then the selectors): the first failure is the 400.
 * A list decodes timeoutSeconds too (its deadline is the request timeout); a watch decodes limit.
 */
function decodeListOptions(q: URLSearchParams): { timeoutSeconds?: number; limit?: number; labelSelector?: LabelSelector; fieldSelector?: FieldSelector } {
  const timeoutSeconds = parseIntParam(q, 'timeoutSeconds');
  const limit = parseIntParam(q, 'limit');
  return { timeoutSeconds, limit, ...selectors(q) };
}

export interface WatchQuery extends ListQuery {
  allowWatchBookmarks: boolean;
  sendInitialEvents?: boolean;
  timeoutSeconds?: number;
}

/** ListOptions for a list (or deletecollection): selectors, paging, resourceVersion semantics. */
export function parseListQuery(q: URLSearchParams, namespace: string | undefined): ListQuery {
  const decoded = decodeListOptions(q);
  const out: ListQuery = { namespace, labelSelector: decoded.labelSelector, fieldSelector: decoded.fieldSelector };
  if (decoded.limit !== undefined && decoded.limit > 0) out.limit = decoded.limit;
  const cont = q.get('continue');
  if (cont) out.continue = cont;
  const rv = q.get('resourceVersion');
  if (rv !== null && rv !== '') out.resourceVersion = rv;
  const match = q.get('resourceVersionMatch');
  if (match) out.resourceVersionMatch = match;
  const errs: FieldError[] = [];
  if (match) {
    if (!out.resourceVersion) errs.push(fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
    if (out.continue) errs.push(fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    if (match !== 'Exact' && match !== 'NotOlderThan') errs.push(fieldErrors.notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
    if (match === 'Exact' && out.resourceVersion === '0') errs.push(fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
  }
  if (q.has('sendInitialEvents')) errs.push(fieldErrors.forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  if (errs.length) throw invalidOptions('ListOptions', errs);
  return out;
}

export function parseWatchQuery(q: URLSearchParams, namespace: string | undefined, watchListEnabled: boolean): WatchQuery {
  const decoded = decodeListOptions(q);
  const out: WatchQuery = {
    namespace, labelSelector: decoded.labelSelector, fieldSelector: decoded.fieldSelector,
    allowWatchBookmarks: parseBoolParam(q, 'allowWatchBookmarks') ?? false,
  };
  const rv = q.get('resourceVersion');
  if (rv !== null && rv !== '') out.resourceVersion = rv;
  const match = q.get('resourceVersionMatch');
  if (match) out.resourceVersionMatch = match;
  out.sendInitialEvents = parseBoolParam(q, 'sendInitialEvents');
  // 0 (or less) means the server's randomized default, as in kube-apiserver's ListResource
  if (decoded.timeoutSeconds !== undefined && decoded.timeoutSeconds > 0) out.timeoutSeconds = decoded.timeoutSeconds;
  const errs: FieldError[] = [];
  if (out.sendInitialEvents !== undefined) {
    if (match !== 'NotOlderThan') errs.push(fieldErrors.forbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
    if (!watchListEnabled) errs.push(fieldErrors.forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled'));
  }
  if (match) {
    if (out.sendInitialEvents === undefined) errs.push(fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
    if (match !== 'NotOlderThan') errs.push(fieldErrors.notSupported('resourceVersionMatch', match, ['NotOlderThan']));
    if (q.get('continue')) errs.push(fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
  }
  if (errs.length) throw invalidOptions('ListOptions', errs);
  return out;
}

export interface WriteQuery { dryRun: boolean; fieldManager?: string; fieldValidation: FieldValidation }

/** CreateOptions / UpdateOptions / PatchOptions / DeleteOptions query parameters. */
export function parseWriteQuery(q: URLSearchParams, optionsKind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions'): WriteQuery {
  const errs: FieldError[] = [];
  const dryRun = q.getAll('dryRun');
  for (const v of dryRun) if (v !== 'All') errs.push(fieldErrors.notSupported('dryRun', dryRun, ['All']));
  const fieldManager = q.get('fieldManager') ?? undefined;
  if (fieldManager !== undefined) {
    if (Buffer.byteLength(fieldManager) > 128) errs.push(fieldErrors.tooLong('fieldManager', 128));
    // control characters: what Go's unicode.IsPrint rejects in the ASCII range
    if (/[\u0000-\u001f\u007f]/.test(fieldManager)) errs.push(fieldErrors.invalid('fieldManager', fieldManager, 'must only contain printable characters'));
  }
  const validation = q.get('fieldValidation') ?? 'Warn';
  if (validation !== 'Strict' && validation !== 'Warn' && validation !== 'Ignore') {
    errs.push(fieldErrors.notSupported('fieldValidation', validation, ['', 'Ignore', 'Strict', 'Warn']));
  }
  if (errs.length) throw invalidOptions(optionsKind, errs);
  return { dryRun: dryRun.length > 0, fieldManager, fieldValidation: validation as FieldValidation };
}

const propagationPolicies = ['Foreground', 'Background', 'Orphan'];
/** what ValidateDeleteOptions lists as supported: the three policies, or none */
const supportedPropagationPolicies = [...propagationPolicies, 'nil'];

/** DeleteOptions from the query and an optional body; the body wins where both speak. */
export function deleteOptionsFrom(q: URLSearchParams, body: Record<string, unknown> | undefined): { dryRun: boolean; options: DeleteOptions } {
  const write = parseWriteQuery(q, 'DeleteOptions');
  const options: DeleteOptions = {};
  const grace = parseIntParam(q, 'gracePeriodSeconds');
  if (grace !== undefined) options.gracePeriodSeconds = grace;
  const policy = q.get('propagationPolicy');
  if (policy) options.propagationPolicy = policy;
  // deprecated: propagationPolicy=Orphan (true) or Background (false) in its older spelling
  const orphanDependents = parseBoolParam(q, 'orphanDependents');
  if (orphanDependents !== undefined) options.orphanDependents = orphanDependents;
  let dryRun = write.dryRun;
  if (body) {
    if (body.kind !== undefined && body.kind !== 'DeleteOptions') {
      throw errors.badRequest(`${String(body.kind)} in version ${JSON.stringify(String(body.apiVersion ?? 'v1'))} cannot be handled as a DeleteOptions`);
    }
    if (typeof body.gracePeriodSeconds === 'number') options.gracePeriodSeconds = body.gracePeriodSeconds;
    if (typeof body.propagationPolicy === 'string') options.propagationPolicy = body.propagationPolicy;
    if (typeof body.orphanDependents === 'boolean') options.orphanDependents = body.orphanDependents;
    const pre = body.preconditions as { uid?: unknown; resourceVersion?: unknown } | undefined;
    if (pre && typeof pre === 'object') {
      options.preconditions = {};
      if (typeof pre.uid === 'string') options.preconditions.uid = pre.uid;
      if (typeof pre.resourceVersion === 'string') options.preconditions.resourceVersion = pre.resourceVersion;
    }
    if (Array.isArray(body.dryRun) && body.dryRun.length > 0) {
      if (body.dryRun.some((v) => v !== 'All')) throw invalidOptions('DeleteOptions', [fieldErrors.notSupported('dryRun', body.dryRun, ['All'])]);
      dryRun = true;
    }
  }
  const errs: FieldError[] = [];
  if (options.orphanDependents !== undefined && options.propagationPolicy !== undefined) {
    errs.push(fieldErrors.invalid('propagationPolicy', options.propagationPolicy, 'orphanDependents and deletionPropagation cannot be both set'));
  }
  if (options.propagationPolicy !== undefined && !propagationPolicies.includes(options.propagationPolicy)) {
    errs.push(fieldErrors.notSupported('propagationPolicy', options.propagationPolicy, supportedPropagationPolicies));
  }
  if (options.gracePeriodSeconds !== undefined && options.gracePeriodSeconds < 0) {
    errs.push(fieldErrors.invalid('gracePeriodSeconds', options.gracePeriodSeconds, 'must be greater than or equal to 0'));
  }
  if (errs.length) throw invalidOptions('DeleteOptions', errs);
  return { dryRun, options };
}
