/**
 * Validation ratcheting through HTTP (CRDValidationRatcheting, beta and on in 1.32): a CRD whose
 * schema is tightened after objects were stored keeps accepting updates that leave the now
 * invalid values as they are, refuses changes to them, and never ratchets transition rules;
 * with the gate off, every invalid value is refused.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { update } from '../support/api.js';
import { waitEstablished } from '../support/crds.js';
import { startInProcess, type InProcessServer } from '../support/in-process.js';
import { request, type TestServer } from '../support/server.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const group = 'ratchet.example.com';
const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gauges.${group}`;
const gauges = `/apis/${group}/v1/gauges`;

function gaugeCrd(strict: boolean): any {
  const spec: any = {
    type: 'object',
    properties: {
      name: { type: 'string' }, note: { type: 'string' }, mode: { type: 'string' },
      count: { type: 'integer' },
      ports: {
        type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'],
        items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer' } } },
      },
    },
  };
  if (strict) {
    spec.properties.name.maxLength = 5;
    spec.properties.ports.items.properties.port.maximum = 1000;
    spec.properties.count['x-kubernetes-validations'] = [{ rule: 'self <= 10', message: 'at most 10' }];
    spec.properties.mode['x-kubernetes-validations'] = [{ rule: "self != 'legacy' || oldSelf != 'legacy'", message: 'leave legacy mode' }];
  }
  return {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `gauges.${group}` },
    spec: {
      group, scope: 'Cluster', names: { plural: 'gauges', kind: 'Gauge' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec } } } }],
    },
  };
}

/** Creates the loose CRD and a gauge valid under it, then tightens the CRD so that the gauge is not. */
async function storeThenTighten(server: TestServer): Promise<void> {
  const created = await request(server, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { method: 'POST', body: gaugeCrd(false) });
  assert.equal(created.status, 201, created.body);
  await waitEstablished(server, `gauges.${group}`);
  const gauge = await request(server, gauges, { method: 'POST', body: {
    apiVersion: `${group}/v1`, kind: 'Gauge', metadata: { name: 'g' },
    spec: { name: 'much-too-long', note: 'a', mode: 'legacy', count: 50, ports: [{ name: 'http', port: 8080 }, { name: 'dns', port: 53 }] },
  } });
  assert.equal(gauge.status, 201, gauge.body);
  await update(server, crdPath, (crd) => { crd.spec = gaugeCrd(true).spec; });
  // the tightened schema is served once the registry has the new declaration
  for (let i = 0; i < 200; i++) {
    const probe = await request(server, gauges, { method: 'POST', body: { apiVersion: `${group}/v1`, kind: 'Gauge', metadata: { name: 'probe' }, spec: { count: 11 } }, headers: {} });
    if (probe.status === 422) return;
    if (probe.status === 201) await request(server, `${gauges}/probe`, { method: 'DELETE' });
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail('the tightened schema was never served');
}

async function patch(server: TestServer, spec: unknown) {
  return request(server, `${gauges}/g`, { method: 'PATCH', body: { spec }, headers: { 'content-type': 'application/merge-patch+json' } });
}

const notChecked = '<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';
const causesOf = (res: { json: any }) => res.json.details.causes.map((c: any) => `${c.field}: ${c.message}`);

describe('validation ratcheting of custom resources', () => {
  let h: InProcessServer;
  before(async () => {
    h = await startInProcess();
    await storeThenTighten(h.server);
  });
  after(async () => { await h?.dispose(); });

  it('accepts updates that leave invalid values unchanged (schema keywords and rules without oldSelf)', async () => {
    // mode stays legacy, whose transition rule never ratchets: leave it first
    const left = await patch(h.server, { mode: 'modern' });
    assert.equal(left.status, 200, left.body);
    const res = await patch(h.server, { note: 'b' });
    assert.equal(res.status, 200, res.body);
    assert.equal(res.json.spec.name, 'much-too-long');
    // a map-list item keeps its ratcheting by key when another item changes and the order moves
    const ports = await patch(h.server, { ports: [{ name: 'dns', port: 5353 }, { name: 'http', port: 8080 }] });
    assert.equal(ports.status, 422, 'dns changed to an invalid port');
    assert.deepEqual(causesOf(ports), ['spec.ports[0].port: Invalid value: 5353: spec.ports[0].port in body should be less than or equal to 1000']);
    const reordered = await patch(h.server, { ports: [{ name: 'dns', port: 54 }, { name: 'http', port: 8080 }] });
    assert.equal(reordered.status, 200, reordered.body);
  });

  it('refuses changes of invalid values to other invalid values', async () => {
    const name = await patch(h.server, { name: 'still-too-long' });
    assert.equal(name.status, 422, name.body);
    // a too long value blocks the CEL rules, as Kubernetes' hasBlockingErr does
    assert.deepEqual(causesOf(name), ['spec.name: Too long: may not be more than 5 bytes', notChecked]);
    const count = await patch(h.server, { count: 51 });
    assert.equal(count.status, 422, count.body);
    assert.deepEqual(causesOf(count), ['spec.count: Invalid value: "integer": at most 10']);
  });

  it('never ratchets transition rules', async () => {
    const created = await request(h.server, gauges, { method: 'POST', body: { apiVersion: `${group}/v1`, kind: 'Gauge', metadata: { name: 'old-mode' }, spec: { mode: 'legacy' } } });
    assert.equal(created.status, 201, created.body);
    const res = await request(h.server, `${gauges}/old-mode`, { method: 'PATCH', body: { spec: { note: 'x' } }, headers: { 'content-type': 'application/merge-patch+json' } });
    assert.equal(res.status, 422, res.body);
    assert.deepEqual(causesOf(res), ['spec.mode: Invalid value: "string": leave legacy mode']);
  });
});

describe('validation ratcheting switched off', () => {
  let h: InProcessServer;
  before(async () => {
    h = await startInProcess(['--feature-gates=CRDValidationRatcheting=false']);
    await storeThenTighten(h.server);
  });
  after(async () => { await h?.dispose(); });

  it('refuses every invalid value on update', async () => {
    const res = await patch(h.server, { note: 'b', mode: 'modern' });
    assert.equal(res.status, 422, res.body);
    assert.deepEqual(causesOf(res).sort(), [
      notChecked,
      'spec.name: Too long: may not be more than 5 bytes',
      'spec.ports[0].port: Invalid value: 8080: spec.ports[0].port in body should be less than or equal to 1000',
    ]);
  });
});
