/**
 * The `scale` subresource of a custom resource (apiextensions' scale REST): read as an
 * autoscaling/v1 Scale built from the CRD's specReplicasPath, statusReplicasPath and
 * labelSelectorPath; a Scale written back sets spec replicas only. Validation as Kubernetes'
 * customResourceValidator.ValidateScaleSpec/Status.
 */
import { copyJson } from '../api/json-copy.js';
import type { KObject } from '../api/meta.js';
import { fieldErrors, type FieldError } from '../status/status-error.js';
import type { ScaleSubresource } from './crd-types.js';
import { parseJsonPath, setValueAt, valueAt } from './json-path.js';

const maxInt32 = 2 ** 31 - 1;

export interface CustomResourceScale {
  view(obj: Readonly<KObject>): KObject;
  project(submitted: KObject, stored: KObject): KObject;
  validate(obj: Readonly<KObject>): FieldError[];
}

function replicasErrors(obj: Readonly<KObject>, text: string): FieldError[] {
  const value = valueAt(obj, parseJsonPath(text));
  if (value === undefined) return [];
  if (!Number.isInteger(value)) {
    return [fieldErrors.invalid(text, 0, `${text} accessor error: ${JSON.stringify(value)} is of the type ${typeof value}, expected int64`)];
  }
  if ((value as number) < 0) return [fieldErrors.invalid(text, value, 'should be a non-negative integer')];
  if ((value as number) > maxInt32) return [fieldErrors.invalid(text, value, `should be less than or equal to ${maxInt32}`)];
  return [];
}

export function scaleSubresource(paths: ScaleSubresource): CustomResourceScale {
  const spec = parseJsonPath(paths.specReplicasPath);
  const status = parseJsonPath(paths.statusReplicasPath);
  const selector = paths.labelSelectorPath ? parseJsonPath(paths.labelSelectorPath) : undefined;
  return {
    view(obj) {
      const m = obj.metadata;
      const metadata: KObject['metadata'] = { name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion, creationTimestamp: m.creationTimestamp };
      if (!m.namespace) delete metadata.namespace;
      const statusOut: Record<string, unknown> = { replicas: valueAt(obj, status) ?? 0 };
      const sel = selector ? valueAt(obj, selector) : undefined;
      if (typeof sel === 'string' && sel) statusOut.selector = sel;
      // autoscaling/v1's ScaleSpec.replicas has omitempty, ScaleStatus.replicas not: zero is `spec: {}`, `status: {replicas: 0}`
      const replicas = valueAt(obj, spec) ?? 0;
      return { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata, spec: replicas === 0 ? {} : { replicas }, status: statusOut };
    },
    project(submitted, stored) {
      const next = copyJson(stored) as KObject;
      const replicas = (submitted as { spec?: { replicas?: number } }).spec?.replicas ?? 0;
      if (valueAt(stored, spec) !== replicas) {
        setValueAt(next as Record<string, unknown>, spec, replicas);
        // a spec change: the custom resource's strategy moves the generation
        next.metadata.generation = (stored.metadata.generation ?? 1) + 1;
      }
      // metadata the Scale carries (resourceVersion as a precondition) is the object's
      next.metadata.resourceVersion = submitted.metadata?.resourceVersion ?? stored.metadata.resourceVersion;
      return next;
    },
    validate(obj) {
      return [...replicasErrors(obj, paths.specReplicasPath), ...replicasErrors(obj, paths.statusReplicasPath)];
    },
  };
}
