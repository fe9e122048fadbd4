/**
 * The runtime cost of CRD validation rules through HTTP: rules whose static estimate is within
 * Kubernetes' limits (the CRD is accepted) are refused at runtime on large objects, past the
 * per-call limit (1,000,000) or the per-object budget (10,000,000), with Kubernetes' causes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { clusterCrd, waitEstablished } from '../support/crds.js';
import { request, startServer, type TestServer } from '../support/server.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const group = 'cost.example.com';
// a pattern of 401 characters: matching costs ceil((1 + length) * 0.1) * ceil(401 * 0.25) per string
const pattern = `^[a-z]+$|^${'abcdefghij'.repeat(39)}$`;

function ledgerCrd(): any {
  return clusterCrd(group, 'ledgers', 'Ledger', {
    numbers: { type: 'array', maxItems: 300_000, items: { type: 'integer' }, 'x-kubernetes-validations': [{ rule: 'self.all(x, x >= 0)' }] },
    names: { type: 'array', maxItems: 20_000, items: { type: 'string', maxLength: 100, 'x-kubernetes-validations': [{ rule: `self.matches('${pattern}')` }] } },
  });
}

async function createLedger(server: TestServer, name: string, spec: unknown) {
  return request(server, `/apis/${group}/v1/ledgers`, { method: 'POST', body: { apiVersion: `${group}/v1`, kind: 'Ledger', metadata: { name }, spec } });
}

describe('runtime cost of CRD validation rules', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    // within the static limits: the definition is accepted
    const res = await request(server, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { method: 'POST', body: ledgerCrd() });
    assert.equal(res.status, 201, res.body);
    await waitEstablished(server, `ledgers.${group}`);
  });
  after(async () => { await server?.dispose(); });

  it('accepts objects whose rules run within the limits', async () => {
    const res = await createLedger(server, 'small', { numbers: new Array(1000).fill(1), names: new Array(100).fill('a'.repeat(100)) });
    assert.equal(res.status, 201, res.body.slice(0, 500));
  });

  it('refuses a rule whose evaluation exceeds the per-call limit', async () => {
    // each element costs 5 (the loop condition 2, the step 3): 250,000 of them cost 1,250,000
    const res = await createLedger(server, 'many-numbers', { numbers: new Array(250_000).fill(0) });
    assert.equal(res.status, 422, res.body.slice(0, 500));
    assert.equal(res.json.reason, 'Invalid');
    assert.deepEqual(res.json.details.causes, [{
      reason: 'FieldValueInvalid', field: 'spec.numbers',
      message: 'Invalid value: "array": \'operation cancelled: actual cost limit exceeded\': no further validation rules will be run due to call cost exceeds limit for rule: self.all(x, x >= 0)',
    }]);
  });

  it('refuses an object whose rules together exceed the budget, at the rule that runs out of it', async () => {
    // each name costs 1 + 11 * 101 = 1,112: the budget of 10,000,000 runs out at the 8,993rd
    const res = await createLedger(server, 'many-names', { names: new Array(10_000).fill('a'.repeat(100)) });
    assert.equal(res.status, 422, res.body.slice(0, 500));
    assert.deepEqual(res.json.details.causes, [{
      reason: 'FieldValueInvalid', field: 'spec.names[8992]',
      message: 'Invalid value: "string": validation failed due to running out of cost budget, no further validation rules will be run',
    }]);
  });
});
