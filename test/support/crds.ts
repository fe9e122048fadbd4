/** CustomResourceDefinitions the CRD suites share, written as controller-gen writes them (apiextensions.k8s.io/v1, x-kubernetes-*). */
import { sleep } from './api.js';
import { request, type TestServer } from './server.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** A CronTab-like definition: two versions (v1 storage, v1beta1 deprecated), status, printer columns, selectable fields. */
export function widgetCrd(group = 'stable.example.com'): any {
  const schema = {
    type: 'object',
    description: 'Widget is a test custom resource.',
    properties: {
      spec: {
        type: 'object',
        description: 'WidgetSpec is what a widget should be.',
        required: ['color'],
        properties: {
          color: { type: 'string', enum: ['red', 'green', 'blue'], description: 'Color of the widget.' },
          replicas: { type: 'integer', format: 'int32', minimum: 0, maximum: 100, default: 1, description: 'How many.' },
          size: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
          tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
          ports: {
            type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'],
            items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer' } } },
          },
          extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        },
      },
      status: { type: 'object', properties: { ready: { type: 'boolean' }, replicas: { type: 'integer' }, selector: { type: 'string' } } },
    },
  };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', shortNames: ['wd'], categories: ['all', 'toys'] },
      versions: [
        {
          name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema },
          subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } },
          additionalPrinterColumns: [
            { name: 'Color', type: 'string', jsonPath: '.spec.color' },
            { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas', priority: 1 },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          selectableFields: [{ jsonPath: '.spec.color' }],
        },
        { name: 'v1beta1', served: true, storage: false, deprecated: true, schema: { openAPIV3Schema: schema } },
      ],
    },
  };
}

/** Waits until the CRD reports Established (the controller writes it after registering). */
/** A cluster-scoped CRD of one version whose schema is `spec` with these properties. */
export function clusterCrd(group: string, plural: string, kind: string, specProperties: Record<string, unknown>): any {
  return {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `${plural}.${group}` },
    spec: {
      group, scope: 'Cluster', names: { plural, kind },
      versions: [{
        name: 'v1', served: true, storage: true,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: specProperties } } } },
      }],
    },
  };
}

export async function waitEstablished(server: TestServer, name: string): Promise<any> {
  for (let i = 0; i < 200; i++) {
    const res = await request(server, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
    if (res.json?.status?.conditions?.some((c: any) => c.type === 'Established' && c.status === 'True')) return res.json;
    await sleep(25);
  }
  throw new Error(`${name} did not become Established`);
}

/** Waits until a path answers `status`. */
export async function waitStatus(server: TestServer, path: string, status: number): Promise<void> {
  // a bound, not a measure: a namespace is emptied 5 s after its deletion at the earliest
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if ((await request(server, path)).status === status) return;
    await sleep(25);
  }
  throw new Error(`${path} never answered ${status}`);
}
