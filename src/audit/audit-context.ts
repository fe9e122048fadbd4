/**
 * The audit record of one request as it is being served (k8s.io/apiserver's AuditContext): its
 * ID (the `Audit-Id` header), the annotations pipeline stages attach (the authorizer's decision
 * and reason, deprecation, admission plugins), and, once the policy has chosen a level above
 * None, the event each stage is cut from. Bodies are kept only at the levels that record them,
 * serialized once, when captured.
 */
import type { KObject } from '../api/meta.js';
import type { UserInfo } from '../auth/user.js';
import { StoredObject } from '../store/read-model.js';
import type { AuditCapture } from './capture.js';
import { auditUser, newEventDraft, type EventDraft, type RequestFacts } from './event-builder.js';
import type { RequestAuditConfig } from './policy-evaluator.js';
import { levelAtLeast, type AuditEvent, type Level, type ResponseStatus, type Stage } from './types.js';

function withoutManagedFields(object: unknown): unknown {
  const meta = (object as { metadata?: Record<string, unknown> } | null)?.metadata;
  if (!meta || typeof meta !== 'object' || !('managedFields' in meta)) return object;
  const { managedFields: _dropped, ...rest } = meta;
  return { ...(object as object), metadata: rest };
}

export class AuditContext implements AuditCapture {
  private annotationMap: Map<string, string> | undefined;
  private config: RequestAuditConfig | undefined;
  private draft: EventDraft | undefined;

  constructor(readonly auditID: string) {}

  /** false once the policy chose None: nothing more is recorded (annotations before that are kept, as Kubernetes keeps them) */
  get enabled(): boolean { return this.config === undefined || this.config.level !== 'None'; }

  /** the level chosen by the policy; undefined before it is evaluated */
  get level(): Level | undefined { return this.config?.level; }

  get omitStages(): ReadonlySet<Stage> | undefined { return this.config?.omitStages; }

  /** Adds an annotation; the first value set for a key stays, as Kubernetes' AddAuditAnnotation keeps it. */
  annotate(key: string, value: string): void {
    if (!this.enabled) return;
    this.annotationMap ??= new Map();
    if (!this.annotationMap.has(key)) this.annotationMap.set(key, value);
  }

  get annotations(): ReadonlyMap<string, string> { return this.annotationMap ?? new Map(); }

  /** The policy's answer for this request, and (above None) the request's part of the event. */
  begin(config: RequestAuditConfig, facts: RequestFacts): void {
    this.config = config;
    if (config.level === 'None') { this.annotationMap = undefined; return; }
    this.draft = newEventDraft(config.level, facts);
  }

  /** recording: the policy chose a level above None */
  get recording(): boolean { return this.draft !== undefined; }

  impersonating(user: UserInfo): void {
    if (this.draft) this.draft.impersonatedUser = auditUser(user);
  }

  requestObject(object: unknown): void {
    const d = this.draft;
    if (!d) return;
    // the body names what a create's path cannot: the object's name, and for updates its uid and version
    const meta = (object as { metadata?: Record<string, unknown> } | null)?.metadata;
    if (d.objectRef && meta && typeof meta === 'object') {
      const ref = d.objectRef;
      if (!ref.namespace && typeof meta.namespace === 'string' && meta.namespace) ref.namespace = meta.namespace;
      if (!ref.name && typeof meta.name === 'string' && meta.name) ref.name = meta.name;
      if (!ref.uid && typeof meta.uid === 'string' && meta.uid) ref.uid = meta.uid;
      if (!ref.resourceVersion && typeof meta.resourceVersion === 'string' && meta.resourceVersion) ref.resourceVersion = meta.resourceVersion;
    }
    if (levelAtLeast(d.level, 'Request')) d.requestObject = this.json(object);
  }

  requestPatch(patch: unknown): void {
    const d = this.draft;
    if (d && levelAtLeast(d.level, 'Request')) d.requestObject = JSON.stringify(patch);
  }

  responseObject(code: number, object: StoredObject | Readonly<KObject> | object): void {
    const d = this.draft;
    if (!d) return;
    d.responseStatus = { code };
    if (d.level !== 'RequestResponse') return;
    if (object instanceof StoredObject) d.responseObject = this.config?.omitManagedFields ? this.json(object.object) : object.json;
    else d.responseObject = this.json(object);
  }

  responseList(code: number, listKind: string, apiVersion: string, listMeta: Readonly<Record<string, unknown>>, items: readonly StoredObject[]): void {
    const d = this.draft;
    if (!d) return;
    d.responseStatus = { code };
    if (d.level !== 'RequestResponse') return;
    const head = `{"kind":${JSON.stringify(listKind)},"apiVersion":${JSON.stringify(apiVersion)},"metadata":${JSON.stringify(listMeta)},"items":[`;
    const omit = this.config?.omitManagedFields;
    const parts = items.map((i) => {
      if (!omit) return i.itemJson;
      const { kind: _k, apiVersion: _v, ...item } = withoutManagedFields(i.object) as KObject;
      return JSON.stringify(item);
    });
    d.responseObject = `${head}${parts.join(',')}]}`;
  }

  responseStatus(code: number, status: object): void {
    const d = this.draft;
    if (!d) return;
    const s = status as { status?: string; message?: string; reason?: string; details?: { causes?: unknown } };
    const recorded: ResponseStatus = { code };
    if (s.status) recorded.status = s.status;
    if (s.message) recorded.message = s.message;
    if (s.reason) recorded.reason = s.reason;
    if (s.details) recorded.details = s.details;
    if (!levelAtLeast(d.level, 'Request') && this.concernsSecret()) {
      // a Status can quote the object (an invalid patch quotes the patched object): below Request
      // level nothing of a Secret's content is recorded, so only the Status's outline is kept
      delete recorded.message;
      if (s.details) {
        const { causes: _causes, ...outline } = s.details;
        if (Object.keys(outline).length > 0) recorded.details = outline;
        else delete recorded.details;
      }
    }
    d.responseStatus = recorded;
    if (d.level === 'RequestResponse') d.responseObject = JSON.stringify(status);
  }

  /** The response's code, when headers are written without a body the capture points saw. */
  responseCode(code: number): void {
    const d = this.draft;
    if (d && d.responseStatus?.code !== code) d.responseStatus = { ...d.responseStatus, code };
  }

  /** A status the server decided without writing it through the capture points (a panic). */
  setResponseStatus(status: ResponseStatus): void {
    if (this.draft) this.draft.responseStatus = status;
  }

  get responseStatusRecorded(): boolean { return this.draft?.responseStatus !== undefined; }

  /** The event of one stage: a copy of the record as it is now. RequestReceived is stamped with the request's arrival. */
  event(stage: Stage, now: number): AuditEvent {
    const d = this.draft as EventDraft;
    const stageTimestamp = stage === 'RequestReceived' ? d.requestReceivedTimestamp : now;
    const annotations = this.annotationMap && this.annotationMap.size > 0 ? Object.fromEntries(this.annotationMap) : undefined;
    return {
      level: d.level, auditID: this.auditID, stage, requestURI: d.requestURI, verb: d.verb, user: d.user,
      impersonatedUser: d.impersonatedUser, sourceIPs: d.sourceIPs, userAgent: d.userAgent,
      objectRef: d.objectRef && { ...d.objectRef }, responseStatus: d.responseStatus,
      requestObject: d.requestObject, responseObject: d.responseObject,
      requestReceivedTimestamp: d.requestReceivedTimestamp, stageTimestamp, annotations, encoded: undefined, request: d.encoding,
    };
  }

  private concernsSecret(): boolean {
    const ref = this.draft?.objectRef;
    return ref !== undefined && ref.resource === 'secrets' && !ref.apiGroup;
  }

  private json(object: unknown): string {
    return JSON.stringify(this.config?.omitManagedFields ? withoutManagedFields(object) : object);
  }
}
