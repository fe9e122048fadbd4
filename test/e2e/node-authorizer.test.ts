/** The Node mode beside RBAC (`--authorization-mode Node,RBAC`): what kubelets may do here. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { userFor } from '../support/certs.js';
import { request, startServer, type Credentials, type TestServer } from '../support/server.js';

const leases = '/apis/coordination.k8s.io/v1/namespaces/orch-node-lease/leases';
const lease = (name: string) => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name }, spec: { holderIdentity: name } });

describe('authorization with --authorization-mode Node,RBAC', () => {
  let server: TestServer;
  let node: Credentials;
  before(async () => {
    server = await startServer({ args: ['--authorization-mode', 'Node,RBAC'] });
    node = userFor(server, 'system:node:n1', ['system:nodes']);
  });
  after(async () => { await server?.dispose(); });

  it('lets a node keep its own Lease in orch-node-lease, and no other', async () => {
    assert.equal((await request(server, leases, { method: 'POST', credentials: node, body: lease('n1') })).status, 201);
    assert.equal((await request(server, `${leases}/n1`, { credentials: node })).status, 200);
    const renewed = await request(server, `${leases}/n1`, {
      method: 'PATCH', credentials: node, headers: { 'content-type': 'application/merge-patch+json' }, body: { spec: { leaseDurationSeconds: 40 } },
    });
    assert.equal(renewed.status, 200, renewed.body);
    assert.equal((await request(server, leases, { method: 'POST', body: lease('n2') })).status, 201);
    const other = await request(server, `${leases}/n2`, { credentials: node });
    assert.equal(other.status, 403);
    assert.equal(other.json.message, 'leases.coordination.k8s.io "n2" is forbidden: User "system:node:n1" cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "orch-node-lease": can only access node lease with the same name as the requesting node');
    const elsewhere = await request(server, '/apis/coordination.k8s.io/v1/namespaces/default/leases/n1', { credentials: node });
    assert.equal(elsewhere.json.message, 'leases.coordination.k8s.io "n1" is forbidden: User "system:node:n1" cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "default": can only access leases in the "orch-node-lease" system namespace');
    const listed = await request(server, leases, { credentials: node });
    assert.match(listed.json.message, /: can only get, create, update, patch, or delete a node lease$/);
  });

  it('finds no relationship between a node and secrets or config maps, as there are no pods', async () => {
    const secret = await request(server, '/api/v1/namespaces/default/secrets/s', { credentials: node });
    assert.equal(secret.status, 403);
    assert.equal(secret.json.message, 'secrets "s" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "default": no relationship found between node \'n1\' and this object');
  });

  it('lets nodes write events, through the static node rules', async () => {
    const event = await request(server, '/api/v1/namespaces/default/events', {
      method: 'POST', credentials: node,
      body: { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e1' }, involvedObject: { kind: 'Node', name: 'n1' }, reason: 'Started', message: 'kubelet started' },
    });
    assert.equal(event.status, 201, event.body);
  });

  it('decides nothing for a user that only looks like a node', async () => {
    const impostor = userFor(server, 'system:node:n1');
    const res = await request(server, `${leases}/n1`, { credentials: impostor });
    assert.equal(res.json.message, 'leases.coordination.k8s.io "n1" is forbidden: User "system:node:n1" cannot get resource "leases" in API group "coordination.k8s.io" in the namespace "orch-node-lease"');
  });
});
