/**
 * The audit vocabulary (`audit.orch.io/v1`, Kubernetes' audit.k8s.io/v1 under our name): levels,
 * stages and the Event a backend writes. Request and response objects travel as JSON text, so
 * an object the server already holds serialized (a stored object's cached JSON) is never encoded
 * again for the audit record.
 */

export const eventApiVersion = 'audit.orch.io/v1';
/** Kubernetes' name for the same group, accepted for policies and offered for webhook payloads */
export const kubernetesApiVersion = 'audit.k8s.io/v1';

export const levels = ['None', 'Metadata', 'Request', 'RequestResponse'] as const;
export type Level = (typeof levels)[number];

export const stages = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'] as const;
export type Stage = (typeof stages)[number];

const levelRank: Readonly<Record<Level, number>> = { None: 0, Metadata: 1, Request: 2, RequestResponse: 3 };

export function levelAtLeast(level: Level, floor: Level): boolean {
  return levelRank[level] >= levelRank[floor];
}

/** authentication.k8s.io/v1 UserInfo as the event records it */
export interface AuditUser {
  username?: string;
  uid?: string;
  groups?: readonly string[];
  extra?: Readonly<Record<string, readonly string[]>>;
}

export interface ObjectReference {
  resource?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiGroup?: string;
  apiVersion?: string;
  resourceVersion?: string;
  subresource?: string;
}

/** the bounded fields of the response's Status (Kubernetes copies these, never the whole object) */
export interface ResponseStatus {
  status?: string;
  message?: string;
  reason?: string;
  details?: unknown;
  code: number;
}

/**
 * The JSON of the parts of an event that stay the same through a request's stages (level, ID,
 * URI, verb, user, source IPs, user agent): encoded once, on first use, for every stage's event.
 */
export interface RequestEncoding { head?: string; identity?: string; origin?: string }

export interface AuditEvent {
  readonly level: Level;
  readonly auditID: string;
  readonly stage: Stage;
  readonly requestURI: string;
  readonly verb: string;
  readonly user: AuditUser;
  readonly impersonatedUser?: AuditUser;
  readonly sourceIPs?: readonly string[];
  readonly userAgent?: string;
  readonly objectRef?: ObjectReference;
  readonly responseStatus?: ResponseStatus;
  /** JSON text */
  readonly requestObject?: string;
  /** JSON text */
  readonly responseObject?: string;
  /** microseconds since the epoch */
  readonly requestReceivedTimestamp: number;
  /** microseconds since the epoch */
  readonly stageTimestamp: number;
  readonly annotations?: Readonly<Record<string, string>>;
  /** the event's JSON once encoded: a cache shared by every backend, never part of the event */
  encoded?: string;
  /** shared by the events of one request (a cache, never part of the event) */
  readonly request?: RequestEncoding;
}
