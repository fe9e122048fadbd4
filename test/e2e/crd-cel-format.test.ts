/**
 * Kubernetes' CEL format library through HTTP: a CRD whose rules validate with
 * `format.dns1123Subdomain()` and `format.named(...)` and report validate's messages through a
 * messageExpression, as CRDs written for 1.32 do.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { clusterCrd, waitEstablished } from '../support/crds.js';
import { startInProcess, type InProcessServer } from '../support/in-process.js';
import { request } from '../support/server.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const group = 'format.example.com';
const routes = `/apis/${group}/v1/routes`;

function routeCrd(): any {
  return clusterCrd(group, 'routes', 'Route', {
    host: {
      type: 'string', maxLength: 253,
      'x-kubernetes-validations': [{
        rule: '!format.dns1123Subdomain().validate(self).hasValue()',
        messageExpression: "'invalid host: ' + format.dns1123Subdomain().validate(self).value().join(', ')",
      }],
    },
    id: { type: 'string', maxLength: 64, 'x-kubernetes-validations': [{ rule: "!format.named('uuid').value().validate(self).hasValue()", message: 'id must be a UUID' }] },
  });
}

describe('CEL format library in CRD rules', () => {
  let h: InProcessServer;
  before(async () => {
    h = await startInProcess();
    const res = await request(h.server, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { method: 'POST', body: routeCrd() });
    assert.equal(res.status, 201, res.body);
    await waitEstablished(h.server, `routes.${group}`);
  });
  after(async () => { await h?.dispose(); });

  it('accepts values the formats accept', async () => {
    const res = await request(h.server, routes, { method: 'POST', body: { apiVersion: `${group}/v1`, kind: 'Route', metadata: { name: 'ok' }, spec: { host: 'www.example.com', id: '123e4567-e89b-12d3-a456-426614174000' } } });
    assert.equal(res.status, 201, res.body);
  });

  it('refuses values the formats refuse, with validate\'s messages', async () => {
    const res = await request(h.server, routes, { method: 'POST', body: { apiVersion: `${group}/v1`, kind: 'Route', metadata: { name: 'bad' }, spec: { host: 'WWW_example', id: 'nope' } } });
    assert.equal(res.status, 422, res.body);
    assert.deepEqual(res.json.details.causes.map((c: any) => `${c.field}: ${c.message}`), [
      "spec.host: Invalid value: \"string\": invalid host: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      'spec.id: Invalid value: "string": id must be a UUID',
    ]);
  });
});
