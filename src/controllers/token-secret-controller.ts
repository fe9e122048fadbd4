/**
 * Legacy service-account token Secrets (kube-controller-manager's tokens controller): a Secret of
 * type `orch.io/service-account-token` naming a ServiceAccount in `orch.io/service-account.name`
 * gets a signed legacy token, the namespace and the cluster CA in its data, and the account's UID
 * in `orch.io/service-account.uid`. Kubernetes' spelling (`kubernetes.io/service-account-token`
 * with `kubernetes.io/service-account.name`, as manifests written for Kubernetes ask for a
 * long-lived token) is filled alike, with its own annotations. A token Secret whose ServiceAccount is gone or was replaced
 * (another UID) is deleted, and so are an account's token Secrets when the account is deleted.
 */
import type { KObject } from '../api/meta.js';
import { tokenAnnotationsOf, type SecretObject } from '../api/core/secret.js';
import type { ObjectStore } from '../resource-store/object-store.js';
import type { ReadModel } from '../store/read-model.js';
import { StatusError } from '../status/status-error.js';
import { controllerManager } from './namespace-controller.js';


export interface LegacyTokenSigner {
  legacyToken(serviceAccount: Readonly<KObject>, secretName: string): Promise<string>;
}

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

export class TokenSecretController {
  private readonly unsubscribe: () => void;
  private readonly inFlight = new Set<string>();

  constructor(
    private readonly readModel: ReadModel,
    private readonly secrets: ObjectStore,
    private readonly signer: LegacyTokenSigner,
    private readonly caPem: string,
    private readonly onError: (err: unknown) => void,
  ) {
    this.unsubscribe = readModel.onChange((changes) => {
      for (const c of changes) {
        if (c.resource === 'secrets' && c.type !== 'DELETED') this.sync(c.object.object as SecretObject);
        else if (c.resource === 'serviceaccounts') this.syncAccount(c.object.object.metadata.namespace as string, c.object.object.metadata.name as string);
      }
    });
    readModel.table('secrets').forEach((s) => this.sync(s.object as SecretObject));
  }

  stop(): void { this.unsubscribe(); }

  private context() {
    return { now: Date.now(), dryRun: false, manager: controllerManager };
  }

  /** An account changed or went away: its token Secrets follow. */
  private syncAccount(namespace: string, name: string): void {
    this.readModel.table('secrets').forEach((s, path) => {
      const annotations = tokenAnnotationsOf((s.object as SecretObject).type);
      if (annotations && path.startsWith(`${namespace}/`) && s.object.metadata.annotations?.[annotations.name] === name) this.sync(s.object as SecretObject);
    });
  }

  private sync(secret: Readonly<SecretObject>): void {
    const annotations = tokenAnnotationsOf(secret.type);
    if (!annotations || secret.metadata.deletionTimestamp) return;
    const namespace = secret.metadata.namespace as string;
    const name = secret.metadata.name as string;
    const key = `${namespace}/${name}`;
    if (this.inFlight.has(key)) return;
    const saName = secret.metadata.annotations?.[annotations.name] ?? '';
    const wantedUid = secret.metadata.annotations?.[annotations.uid];
    const sa = this.readModel.get('serviceaccounts', `${namespace}/${saName}`)?.object;
    this.inFlight.add(key);
    const done = () => this.inFlight.delete(key);
    if (!sa || sa.metadata.deletionTimestamp || (wantedUid && wantedUid !== sa.metadata.uid)) {
      this.secrets.delete(namespace, name, { preconditions: secret.metadata.uid ? { uid: secret.metadata.uid } : undefined }, this.context())
        .catch((err: unknown) => { if (!(err instanceof StatusError && (err.code === 404 || err.code === 409))) this.onError(err); })
        .finally(done);
      return;
    }
    const data = secret.data ?? {};
    if (data.token && data.namespace && data['ca.crt'] && wantedUid) { done(); return; }
    this.signer.legacyToken(sa, name)
      .then((token) => this.secrets.modify(namespace, name, this.context(), (current) => {
        const s = current as SecretObject;
        if (s.metadata.uid !== secret.metadata.uid) return undefined;
        s.metadata.annotations = { ...s.metadata.annotations, [annotations.uid]: sa.metadata.uid as string };
        s.data = { ...s.data, token: s.data?.token ?? b64(token), namespace: b64(namespace), 'ca.crt': b64(this.caPem) };
        return s;
      }))
      .catch((err: unknown) => { if (!(err instanceof StatusError && err.code === 404)) this.onError(err); })
      .finally(done);
  }
}
