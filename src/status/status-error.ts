/**
 * The one error type of the server. Every failure a client sees is a `Status` object built from
 * one of these; constructors mirror k8s.io/apimachinery/pkg/api/errors so that reasons, codes and
 * messages read exactly as kube-apiserver's do.
 */

export type StatusReason =
  | '' // StatusReasonUnknown: errors that are not API errors
  | 'BadRequest' | 'Unauthorized' | 'Forbidden' | 'NotFound' | 'AlreadyExists' | 'Conflict'
  | 'Gone' | 'Expired' | 'Invalid' | 'MethodNotAllowed' | 'NotAcceptable' | 'UnsupportedMediaType'
  | 'RequestEntityTooLarge' | 'TooManyRequests' | 'InternalError' | 'Timeout' | 'ServiceUnavailable';

export interface StatusCause { reason?: string; message?: string; field?: string }

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** What an error needs to know about the resource it concerns (a `schema.GroupResource`). */
export interface GroupResource { group: string; resource: string }

export interface StatusObject {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: { continue?: string };
  status: 'Failure';
  message: string;
  reason?: StatusReason;
  details?: StatusDetails;
  code: number;
}

export class StatusError extends Error {
  constructor(
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
    /** extra response headers, e.g. Retry-After */
    readonly headers?: Readonly<Record<string, string>>,
    /** the Status's list metadata (a fresh continue token with an expired one) */
    readonly listMeta?: { continue?: string },
  ) {
    super(message);
    this.name = 'StatusError';
  }

  toStatus(): StatusObject {
    // field order as kube-apiserver writes it: details before code
    return {
      kind: 'Status', apiVersion: 'v1', metadata: this.listMeta ?? {}, status: 'Failure', message: this.message,
      ...(this.reason ? { reason: this.reason } : {}), ...(this.details ? { details: this.details } : {}), code: this.code,
    };
  }
}

/** `serviceaccounts` or `events.events.orch.io`, the way Kubernetes names a GroupResource in messages. */
export function qualifiedResource(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

function details(gr: GroupResource, name: string | undefined): StatusDetails {
  const d: StatusDetails = {};
  if (name !== undefined && name !== '') d.name = name;
  if (gr.group) d.group = gr.group;
  d.kind = gr.resource;
  return d;
}

export const errors = {
  notFound(gr: GroupResource, name: string): StatusError {
    return new StatusError(404, 'NotFound', `${qualifiedResource(gr)} "${name}" not found`, details(gr, name));
  },
  alreadyExists(gr: GroupResource, name: string): StatusError {
    return new StatusError(409, 'AlreadyExists', `${qualifiedResource(gr)} "${name}" already exists`, details(gr, name));
  },
  conflict(gr: GroupResource, name: string, why: string): StatusError {
    return new StatusError(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(gr)} "${name}": ${why}`, details(gr, name));
  },
  /** The optimistic-concurrency failure of an update carrying a stale resourceVersion. */
  staleUpdate(gr: GroupResource, name: string): StatusError {
    return errors.conflict(gr, name, 'the object has been modified; please apply your changes to the latest version and try again');
  },
  invalid(kind: { group: string; kind: string }, name: string, fieldErrors: readonly FieldError[]): StatusError {
    const bodies = fieldErrors.map(formatFieldError);
    const aggregate = bodies.length === 1 ? bodies[0] : `[${bodies.join(', ')}]`;
    const d: StatusDetails = {};
    if (name) d.name = name;
    if (kind.group) d.group = kind.group;
    d.kind = kind.kind;
    d.causes = fieldErrors.map((e) => ({ reason: e.type, message: fieldErrorBody(e), field: e.field }));
    const groupKind = kind.group ? `${kind.kind}.${kind.group}` : kind.kind;
    return new StatusError(422, 'Invalid', `${groupKind} "${name}" is invalid: ${aggregate}`, d);
  },
  badRequest(message: string): StatusError {
    return new StatusError(400, 'BadRequest', message);
  },
  unauthorized(message = 'Unauthorized'): StatusError {
    return new StatusError(401, 'Unauthorized', message);
  },
  forbidden(gr: GroupResource, name: string, why: string, causes?: StatusCause[]): StatusError {
    if (!gr.resource) return new StatusError(403, 'Forbidden', `forbidden: ${why}`, {});
    const subject = name ? `${qualifiedResource(gr)} "${name}"` : qualifiedResource(gr);
    const d = details(gr, name);
    if (causes) d.causes = causes;
    return new StatusError(403, 'Forbidden', `${subject} is forbidden: ${why}`, d);
  },
  /** A path that names no resource this server serves. */
  pathNotFound(): StatusError {
    return new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});
  },
  methodNotAllowed(): StatusError {
    return new StatusError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {});
  },
  notAcceptable(supported: readonly string[]): StatusError {
    return new StatusError(406, 'NotAcceptable', `only the following media types are accepted: ${supported.join(', ')}`);
  },
  unsupportedMediaType(supported: readonly string[]): StatusError {
    return new StatusError(415, 'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: ${supported.join(', ')}`);
  },
  entityTooLarge(limit: number): StatusError {
    return new StatusError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`);
  },
  gone(message: string): StatusError {
    return new StatusError(410, 'Gone', message);
  },
  expired(message: string, listMeta?: { continue?: string }): StatusError {
    return new StatusError(410, 'Expired', message, undefined, undefined, listMeta);
  },
  /** An error that is not an API error: kube-apiserver answers 500 with its text and no reason. */
  unknown(message: string): StatusError {
    return new StatusError(500, '', message);
  },
  timeout(message: string, retryAfterSeconds?: number, causes?: StatusCause[]): StatusError {
    const d: StatusDetails | undefined = retryAfterSeconds !== undefined || causes
      ? { ...(causes ? { causes } : {}), ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}) }
      : undefined;
    const headers = retryAfterSeconds !== undefined ? { 'retry-after': String(retryAfterSeconds) } : undefined;
    return new StatusError(504, 'Timeout', message, d, headers);
  },
  requestEntityTooLarge(limit: number): StatusError {
    return new StatusError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`);
  },
  tooManyRequests(message: string, retryAfterSeconds: number): StatusError {
    return new StatusError(429, 'TooManyRequests', message, { retryAfterSeconds }, { 'retry-after': String(retryAfterSeconds) });
  },
  serviceUnavailable(message: string, retryAfterSeconds?: number): StatusError {
    const headers = retryAfterSeconds !== undefined ? { 'retry-after': String(retryAfterSeconds) } : undefined;
    return new StatusError(503, 'ServiceUnavailable', message,
      retryAfterSeconds !== undefined ? { retryAfterSeconds } : undefined, headers);
  },
  internal(err: unknown): StatusError {
    const message = err instanceof Error ? err.message : String(err);
    return new StatusError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
  },
};

/** A field-level validation failure, as k8s.io/apimachinery/pkg/util/validation/field.Error. */
export type FieldErrorType =
  | 'FieldValueNotFound' | 'FieldValueRequired' | 'FieldValueDuplicate' | 'FieldValueInvalid'
  | 'FieldValueNotSupported' | 'FieldValueForbidden' | 'FieldValueTooLong' | 'FieldValueTooMany'
  | 'FieldValueTypeInvalid' | 'InternalError';

export interface FieldError {
  type: FieldErrorType;
  field: string;
  badValue?: unknown;
  detail?: string;
  /** for NotSupported: the allowed values */
  supported?: readonly string[];
}

const typeTitles: Record<FieldErrorType, string> = {
  FieldValueNotFound: 'Not found',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueTypeInvalid: 'Invalid value',
  InternalError: 'Internal error',
};

/** Renders a value the way Go's `%#v` does for the types that reach validation (a bigint: a uint64, in hex). */
function goValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'bigint') return `0x${v.toString(16)}`;
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return `[]string{${v.map((x) => JSON.stringify(x)).join(', ')}}`;
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** The part of the message after `field: `, which is also a cause's `message`. */
export function fieldErrorBody(e: FieldError): string {
  let body = typeTitles[e.type];
  switch (e.type) {
    case 'FieldValueRequired': case 'FieldValueForbidden': case 'FieldValueTooLong':
    case 'FieldValueTooMany': case 'InternalError':
      break;
    case 'FieldValueNotSupported':
      body += `: ${goValue(e.badValue)}`;
      if (e.supported) body += `: supported values: ${e.supported.map((s) => JSON.stringify(s)).join(', ')}`;
      return body;
    default:
      body += `: ${goValue(e.badValue)}`;
  }
  if (e.detail) body += `: ${e.detail}`;
  return body;
}

export function formatFieldError(e: FieldError): string {
  return `${e.field}: ${fieldErrorBody(e)}`;
}

/** Several field errors as one, as Kubernetes' ErrorList.ToAggregate() words them. */
export function aggregateFieldErrors(errs: readonly FieldError[]): string {
  const bodies = errs.map(formatFieldError);
  return bodies.length === 1 ? bodies[0] : `[${bodies.join(', ')}]`;
}

export const fieldErrors = {
  required(field: string, detail = ''): FieldError { return { type: 'FieldValueRequired', field, detail }; },
  invalid(field: string, badValue: unknown, detail: string): FieldError { return { type: 'FieldValueInvalid', field, badValue, detail }; },
  forbidden(field: string, detail: string): FieldError { return { type: 'FieldValueForbidden', field, detail }; },
  tooLong(field: string, maxBytes: number): FieldError {
    return { type: 'FieldValueTooLong', field, detail: `may not be more than ${maxBytes} bytes` };
  },
  notSupported(field: string, badValue: unknown, supported: readonly string[]): FieldError {
    return { type: 'FieldValueNotSupported', field, badValue, supported };
  },
  duplicate(field: string, badValue: unknown): FieldError { return { type: 'FieldValueDuplicate', field, badValue }; },
};
