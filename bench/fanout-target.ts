/**
 * What bench/scenarios/watch-fanout watches and creates: ServiceAccounts (the default), or with
 * `--cr 1` Widgets, the custom resource of bench/widget-crd.ts (20-field schema, 3 CEL rules).
 * Either way each create carries the `bench.orch.io/sent` annotation the load clients read their
 * latency samples from, and the baseline writes a pre-encoded event of the same shape.
 */
import { agentFor, call, type TestServer } from './support.js';
import { established, widgetCrd } from './widget-crd.js';
import { widgetGroup, widgetObject } from './harness.js';

export interface FanoutTarget {
  /** what the report calls the objects */
  objects: string;
  /** creates what must exist before the watches open: the namespace, the CRD (waited for until Established) */
  prepare(server: TestServer): Promise<void>;
  watchPath: string;
  createPath: string;
  createBody(i: number, sent: number): string;
  /** the event our server sends for create i, for the baseline: a template encoded once, two values replaced */
  baselineFrame(i: number, sent: number): string;
}

const namespace = 'fanout';
const sentKey = 'bench.orch.io/sent';
const created = '2026-11-22T00:00:00Z';
const uid = '0e6f6c1e-3d0c-4f5a-9a53-2d8b3c1f7a10';

function managedFields(apiVersion: string, extra: Record<string, unknown> = {}): unknown[] {
  return [{
    manager: 'node', operation: 'Update', apiVersion, time: created, fieldsType: 'FieldsV1',
    fieldsV1: { 'f:metadata': { 'f:annotations': { '.': {}, [`f:${sentKey}`]: {} }, 'f:labels': { '.': {}, 'f:app': {} } }, ...extra },
  }];
}

/** `"NAME"` and `"SENT"` in the encoded template become the object's name and send time. */
function frameFrom(template: string): (name: string, sent: number) => string {
  return (name, sent) => `${template.replace('"SENT"', `"${sent}"`).replace('"NAME"', `"${name}"`)}\n`;
}

async function createNamespace(server: TestServer, agent: ReturnType<typeof agentFor>): Promise<void> {
  const r = await call(server, agent, 'POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: namespace } }));
  if (r.status !== 201) throw new Error(`namespace: ${r.status} ${r.text}`);
}

export const serviceAccounts: FanoutTarget = (() => {
  const frame = frameFrom(JSON.stringify({
    type: 'ADDED', object: {
      kind: 'ServiceAccount', apiVersion: 'v1',
      metadata: { name: 'NAME', namespace, uid, resourceVersion: '100', creationTimestamp: created, labels: { app: 'fanout' }, annotations: { [sentKey]: 'SENT' }, managedFields: managedFields('v1') },
    },
  }));
  return {
    objects: 'ServiceAccounts',
    async prepare(server) {
      const agent = agentFor(server, 1);
      try { await createNamespace(server, agent); } finally { agent.destroy(); }
    },
    watchPath: `/api/v1/namespaces/${namespace}/serviceaccounts?watch=1&resourceVersion=0`,
    createPath: `/api/v1/namespaces/${namespace}/serviceaccounts`,
    createBody: (i, sent) => JSON.stringify({ metadata: { name: `sa-${i}`, annotations: { [sentKey]: String(sent) }, labels: { app: 'fanout' } } }),
    baselineFrame: (i, sent) => frame(`sa-${i}`, sent),
  };
})();

export const widgets: FanoutTarget = (() => {
  const widget = (i: number, sent: string) => {
    const o = widgetObject(`widget-${i}`, i, { app: 'fanout' });
    return { ...o, metadata: { ...o.metadata, annotations: { [sentKey]: sent } } };
  };
  const sample = widget(0, 'SENT');
  const specFields = Object.fromEntries([['.', {}], ...Object.keys(sample.spec).map((k) => [`f:${k}`, {}])]);
  const frame = frameFrom(JSON.stringify({
    type: 'ADDED', object: {
      ...sample,
      metadata: { ...sample.metadata, name: 'NAME', namespace, uid, resourceVersion: '100', generation: 1, creationTimestamp: created, managedFields: managedFields(sample.apiVersion, { 'f:spec': specFields }) },
    },
  }));
  const crdName = `widgets.${widgetGroup}`;
  return {
    objects: 'Widgets (custom resource: 20-field schema, 3 CEL rules)',
    async prepare(server) {
      const agent = agentFor(server, 1);
      try {
        await createNamespace(server, agent);
        const r = await call(server, agent, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', widgetCrd(widgetGroup, 'widgets', 'Widget'));
        if (r.status !== 201) throw new Error(`CRD: ${r.status} ${r.text}`);
        await established(server, agent, crdName);
      } finally { agent.destroy(); }
    },
    watchPath: `/apis/${widgetGroup}/v1/namespaces/${namespace}/widgets?watch=1&resourceVersion=0`,
    createPath: `/apis/${widgetGroup}/v1/namespaces/${namespace}/widgets`,
    createBody: (i, sent) => JSON.stringify(widget(i, String(sent))),
    baselineFrame: (i, sent) => frame(`widget-${i}`, sent),
  };
})();
