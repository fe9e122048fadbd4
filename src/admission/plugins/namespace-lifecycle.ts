/**
 * NamespaceLifecycle: new objects only in namespaces that exist and are not terminating, and the
 * system namespaces can never be deleted. Reads namespaces from the read model, never storage.
 */
import type { ReadModel } from '../../store/read-model.js';
import { errors } from '../../status/status-error.js';
import type { AdmissionAttributes, AdmissionPlugin } from '../admission.js';

export class NamespaceLifecycle implements AdmissionPlugin {
  readonly name = 'NamespaceLifecycle';

  constructor(private readonly readModel: ReadModel, private readonly immortal: ReadonlySet<string>) {}

  validate(a: AdmissionAttributes): void {
    const gr = { group: a.kind.group, resource: a.kind.resource };
    if (a.operation === 'DELETE' && a.kind.group === '' && a.kind.resource === 'namespaces' && !a.subresource && this.immortal.has(a.name)) {
      throw errors.forbidden(gr, a.name, 'this namespace may not be deleted');
    }
    if (a.operation !== 'CREATE' || !a.kind.namespaced || a.namespace === undefined) return;
    const ns = this.readModel.get('namespaces', a.namespace);
    if (!ns) throw errors.notFound({ group: '', resource: 'namespaces' }, a.namespace);
    const terminating = ns.object.metadata.deletionTimestamp || (ns.object.status as { phase?: string } | undefined)?.phase === 'Terminating';
    if (terminating) {
      throw errors.forbidden(gr, a.name,
        `unable to create new content in namespace ${a.namespace} because it is being terminated`,
        [{ reason: 'NamespaceTerminating', message: `namespace ${a.namespace} is being terminated`, field: 'metadata.namespace' }]);
    }
  }
}
