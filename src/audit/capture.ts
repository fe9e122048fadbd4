/**
 * The capture points the audit record needs from the layers that see bodies: the handler tells it
 * what the client sent once the body is decoded, the response writer what it answers with.
 * Each call is cheap when the request's level does not record bodies: the record decides what
 * to keep (and serializes only that).
 */
import type { KObject } from '../api/meta.js';
import type { StoredObject } from '../store/read-model.js';

/** Lets a stage that is no filter (an admission plugin) annotate the request's audit event. */
export interface AuditAnnotator {
  /** the first value set for a key stays */
  annotate(key: string, value: string): void;
}

export interface AuditCapture extends AuditAnnotator {
  /** a decoded request body (an object, DeleteOptions), as the client sent it */
  requestObject(object: unknown): void;
  /** a PATCH body (the patch itself, not the patched object) */
  requestPatch(patch: unknown): void;
  /** the object a response carries */
  responseObject(code: number, object: StoredObject | Readonly<KObject> | object): void;
  /** the list a response carries, its items as stored */
  responseList(code: number, listKind: string, apiVersion: string, listMeta: Readonly<Record<string, unknown>>, items: readonly StoredObject[]): void;
  /** the Status a response carries (errors, and delete's Success) */
  responseStatus(code: number, status: object): void;
}
