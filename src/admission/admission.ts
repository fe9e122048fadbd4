/**
 * The admission chain every write passes before storage: mutating plugins first (they may change
 * the object), then validating plugins (they may only refuse), in order, as Kubernetes'
 * admission chain runs them. A plugin refuses by throwing a StatusError.
 */
import type { KindDeclaration } from '../api/kind.js';
import type { KObject } from '../api/meta.js';
import type { AuditAnnotator } from '../audit/capture.js';
import type { UserInfo } from '../auth/user.js';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE';

export interface AdmissionAttributes {
  operation: Operation;
  kind: KindDeclaration;
  namespace: string | undefined;
  name: string;
  subresource: string | undefined;
  /** the object to be written (CREATE, UPDATE); a mutating plugin may change it in place */
  object: KObject | undefined;
  /** the stored object (UPDATE, DELETE) */
  oldObject: Readonly<KObject> | undefined;
  /** the requesting user; undefined for the server's own controllers */
  user: UserInfo | undefined;
  dryRun: boolean;
  /** annotates the request's audit event (undefined when the request is not audited) */
  audit?: AuditAnnotator;
}

export interface AdmissionPlugin {
  readonly name: string;
  /** may change attributes.object */
  admit?(attributes: AdmissionAttributes): void | Promise<void>;
  /** may only refuse */
  validate?(attributes: AdmissionAttributes): void | Promise<void>;
}

export class AdmissionChain {
  private readonly mutating: AdmissionPlugin[];
  private readonly validating: AdmissionPlugin[];

  constructor(plugins: readonly AdmissionPlugin[]) {
    this.mutating = plugins.filter((p) => p.admit);
    this.validating = plugins.filter((p) => p.validate);
  }

  get names(): string[] { return [...new Set([...this.mutating, ...this.validating].map((p) => p.name))]; }

  async admit(attributes: AdmissionAttributes): Promise<void> {
    for (const plugin of this.mutating) await plugin.admit?.(attributes);
  }

  async validate(attributes: AdmissionAttributes): Promise<void> {
    for (const plugin of this.validating) await plugin.validate?.(attributes);
  }
}
