/**
 * API priority and fairness seen from outside: the configuration kinds (served under both group
 * names, validated and defaulted as Kubernetes does, printed as kubectl prints them, removed beta
 * versions gone), the configuration objects the server keeps, the Dangling condition, and
 * dispatching with real concurrent clients: a tiny level rejects a burst with 429 while exempt and
 * other levels proceed, and two users queued on one level are served fairly.
 */
import assert from 'node:assert/strict';
import { Agent, get } from 'node:https';
import { after, before, describe, it } from 'node:test';
import { expectStatus, sleep, type Obj } from '../support/api.js';
import { userFor } from '../support/certs.js';
import { HeldSession } from '../support/flow-control.js';
import { raw } from '../support/raw.js';
import { request, startServer, type Credentials, type TestServer } from '../support/server.js';

const group = '/apis/flowcontrol.apiserver.orch.io/v1';
const k8sGroup = '/apis/flowcontrol.apiserver.k8s.io/v1';
const serverConcurrency = 600; // the defaults: 400 + 200

async function until(what: string, check: () => Promise<boolean>, tries = 100): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await sleep(100);
  }
  assert.fail(`timed out waiting for ${what}`);
}

function level(name: string, shares: number, limitResponse: Obj): Obj {
  return {
    apiVersion: 'flowcontrol.apiserver.orch.io/v1', kind: 'PriorityLevelConfiguration', metadata: { name },
    spec: { type: 'Limited', limited: { nominalConcurrencyShares: shares, borrowingLimitPercent: 0, lendablePercent: 0, limitResponse } },
  };
}

function schemaFor(name: string, levelName: string, precedence: number, subjects: Obj[]): Obj {
  return {
    apiVersion: 'flowcontrol.apiserver.orch.io/v1', kind: 'FlowSchema', metadata: { name },
    spec: {
      priorityLevelConfiguration: { name: levelName }, matchingPrecedence: precedence, distinguisherMethod: { type: 'ByUser' },
      rules: [{ subjects, resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }] }],
    },
  };
}

/** NominalCL = ceil(ServerCL * NCS / sum of every level's NCS), from the levels the server holds. */
async function nominalSeats(server: TestServer, name: string): Promise<number> {
  const levels = (await request(server, `${group}/prioritylevelconfigurations`)).json.items as Obj[];
  const shares = (pl: Obj) => (pl.spec.type === 'Exempt' ? pl.spec.exempt?.nominalConcurrencyShares ?? 0 : pl.spec.limited.nominalConcurrencyShares);
  const sum = levels.reduce((a, pl) => a + shares(pl), 0);
  return Math.ceil(serverConcurrency * shares(levels.find((pl) => pl.metadata.name === name)) / sum);
}

describe('priority and fairness at start', () => {
  let server: TestServer;
  before(async () => { server = await startServer(); });
  after(async () => { await server?.dispose(); });

  it('is ready only once its configuration objects exist, as kube-apiserver\'s config-producer hook', async () => {
    // the first request after /readyz answered 200: no waiting for the objects
    const first = await request(server, '/api/v1/namespaces/default');
    const exempt = await request(server, `${group}/flowschemas/exempt`);
    expectStatus(exempt, 200, 'the exempt FlowSchema');
    assert.equal(first.headers['x-kubernetes-pf-flowschema-uid'], exempt.json.metadata.uid, 'an admin is classified by the stored exempt schema');
    const readyz = await request(server, '/readyz?verbose');
    for (const hook of ['priority-and-fairness-config-consumer', 'priority-and-fairness-filter', 'priority-and-fairness-config-producer']) {
      assert.match(readyz.body, new RegExp(`\\[\\+\\]poststarthook/${hook} ok`));
    }
  });
});

describe('FlowSchema and PriorityLevelConfiguration', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await until('the configuration objects', async () => (await request(server, `${group}/flowschemas/global-default`)).status === 200);
  });
  after(async () => { await server?.dispose(); });

  it('are kept by the server: mandatory and suggested objects, with the autoupdate annotation', async () => {
    const schemas = (await request(server, `${group}/flowschemas`)).json.items.map((o: Obj) => o.metadata.name).sort();
    for (const name of ['catch-all', 'exempt', 'global-default', 'probes', 'service-accounts', 'system-leader-election', 'workload-leader-election']) {
      assert.ok(schemas.includes(name), `FlowSchema ${name}`);
    }
    const levels = (await request(server, `${group}/prioritylevelconfigurations`)).json.items;
    assert.deepEqual(levels.map((o: Obj) => o.metadata.name).sort(),
      ['catch-all', 'exempt', 'global-default', 'leader-election', 'node-high', 'system', 'workload-high', 'workload-low']);
    const catchAll = levels.find((o: Obj) => o.metadata.name === 'catch-all');
    assert.equal(catchAll.metadata.annotations['apf.orch.io/autoupdate-spec'], 'true');
    assert.deepEqual(catchAll.spec, { type: 'Limited', limited: { nominalConcurrencyShares: 5, limitResponse: { type: 'Reject' }, lendablePercent: 0 } });
  });

  it('are served under flowcontrol.apiserver.k8s.io too; v1beta1, v1beta2 and v1beta3 are gone', async () => {
    const viaK8s = await request(server, `${k8sGroup}/flowschemas/exempt`);
    expectStatus(viaK8s, 200, 'the Kubernetes group name');
    assert.equal(viaK8s.json.apiVersion, 'flowcontrol.apiserver.k8s.io/v1');
    for (const prefix of ['flowcontrol.apiserver.orch.io', 'flowcontrol.apiserver.k8s.io']) {
      for (const version of ['v1beta1', 'v1beta2', 'v1beta3']) {
        expectStatus(await request(server, `/apis/${prefix}/${version}/flowschemas`), 404, `${prefix}/${version}`);
      }
      const discovery = (await request(server, `/apis/${prefix}`)).json;
      assert.deepEqual(discovery.versions.map((v: Obj) => v.version), ['v1']);
    }
  });

  it('default nominalConcurrencyShares to 30 only when unspecified; an explicit 0 stays 0', async () => {
    const unspecified = await request(server, `${group}/prioritylevelconfigurations`, {
      method: 'POST', body: { metadata: { name: 'unspecified' }, spec: { type: 'Limited', limited: { limitResponse: { type: 'Queue', queuing: {} } } } },
    });
    expectStatus(unspecified, 201, 'create');
    assert.equal(unspecified.json.spec.limited.nominalConcurrencyShares, 30);
    assert.equal(unspecified.json.spec.limited.lendablePercent, 0);
    assert.deepEqual(unspecified.json.spec.limited.limitResponse.queuing, { queues: 64, handSize: 8, queueLengthLimit: 50 });
    const jail = await request(server, `${group}/prioritylevelconfigurations`, { method: 'POST', body: level('jail', 0, { type: 'Reject' }) });
    expectStatus(jail, 201, 'create');
    assert.equal(jail.json.spec.limited.nominalConcurrencyShares, 0);
    const schema = await request(server, `${group}/flowschemas`, { method: 'POST', body: { metadata: { name: 'no-precedence' }, spec: { priorityLevelConfiguration: { name: 'jail' } } } });
    expectStatus(schema, 201, 'create');
    assert.equal(schema.json.spec.matchingPrecedence, 1000);
  });

  it('validate as Kubernetes does', async () => {
    const bad = await request(server, `${group}/prioritylevelconfigurations`, {
      method: 'POST',
      body: { metadata: { name: 'bad' }, spec: { type: 'Limited', limited: { nominalConcurrencyShares: -1, lendablePercent: 101, limitResponse: { type: 'Queue', queuing: { queues: 4, handSize: 8, queueLengthLimit: -1 } } } } },
    });
    expectStatus(bad, 422, 'invalid');
    assert.equal(bad.json.message, 'PriorityLevelConfiguration.flowcontrol.apiserver.orch.io "bad" is invalid: [spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer, '
      + 'spec.limited.limitResponse.queuing.queueLengthLimit: Invalid value: -1: must be positive, spec.limited.limitResponse.queuing.handSize: Invalid value: 8: should not be greater than queues (4), '
      + 'spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive]');
    const exempt = await request(server, `${group}/prioritylevelconfigurations`, { method: 'POST', body: { metadata: { name: 'not-exempt' }, spec: { type: 'Exempt' } } });
    expectStatus(exempt, 422, 'Exempt type on another name');
    assert.match(exempt.json.message, /spec.type: Invalid value: "Exempt": type must be 'Exempt' if and only if name is 'exempt'/);
    const schema = await request(server, `${group}/flowschemas`, {
      method: 'POST',
      body: { metadata: { name: 'bad' }, spec: { priorityLevelConfiguration: { name: 'x' }, matchingPrecedence: 1, rules: [{ subjects: [], nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/a*'] }] }] } },
    });
    expectStatus(schema, 422, 'invalid schema');
    assert.equal(schema.json.message, 'FlowSchema.flowcontrol.apiserver.orch.io "bad" is invalid: [spec.matchingPrecedence: Invalid value: 1: only the schema named \'exempt\' may have matchingPrecedence 1, '
      + 'spec.rules[0].subjects: Required value: subjects must contain at least one value, spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: Invalid value: "/a*": wildcard can only do suffix matching]');
  });

  it('are served as Protobuf, as client-go asks for them', async () => {
    const res = await raw(server, `${k8sGroup}/flowschemas/exempt`, { accept: 'application/vnd.kubernetes.protobuf' });
    assert.equal(res.status, 200, res.body.toString());
    assert.equal(res.headers['content-type'], 'application/vnd.kubernetes.protobuf');
    const text = res.body.toString('latin1');
    for (const s of ['k8s\u0000', 'flowcontrol.apiserver.k8s.io/v1', 'FlowSchema', 'system:masters']) assert.ok(text.includes(s), s);
  });

  it('print as kubectl prints them', async () => {
    const table = await request(server, `${group}/prioritylevelconfigurations/catch-all`, { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
    assert.deepEqual(table.json.columnDefinitions.map((c: Obj) => c.name), ['Name', 'Type', 'NominalConcurrencyShares', 'Queues', 'HandSize', 'QueueLengthLimit', 'Age']);
    assert.deepEqual(table.json.rows[0].cells.slice(0, 6), ['catch-all', 'Limited', 5, '<none>', '<none>', '<none>']);
    const fs = await request(server, `${group}/flowschemas/exempt`, { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
    assert.deepEqual(fs.json.columnDefinitions.map((c: Obj) => c.name), ['Name', 'PriorityLevel', 'MatchingPrecedence', 'DistinguisherMethod', 'Age', 'MissingPL']);
    assert.deepEqual([...fs.json.rows[0].cells.slice(0, 4), fs.json.rows[0].cells[5]], ['exempt', 'exempt', 1, '*', 'False']);
  });

  it('mark a FlowSchema Dangling while its priority level is missing', async () => {
    expectStatus(await request(server, `${group}/flowschemas`, { method: 'POST', body: schemaFor('dangles', 'not-yet', 700, [{ kind: 'User', user: { name: 'nobody' } }]) }), 201, 'create');
    const dangling = async (status: string) => (await request(server, `${group}/flowschemas/dangles`)).json.status?.conditions?.find((c: Obj) => c.type === 'Dangling')?.status === status;
    await until('Dangling=True', () => dangling('True'));
    expectStatus(await request(server, `${group}/prioritylevelconfigurations`, { method: 'POST', body: level('not-yet', 1, { type: 'Reject' }) }), 201, 'create the level');
    await until('Dangling=False', () => dangling('False'));
    // written as Kubernetes' config consumer writes it, beside the producer's spec entry
    const fs = (await request(server, `${group}/flowschemas/catch-all`)).json;
    const entries = Object.fromEntries(fs.metadata.managedFields.map((e: Obj) => [`${e.manager}/${e.subresource ?? ''}`, e.fieldsV1]));
    assert.deepEqual(Object.keys(entries).sort(), ['api-priority-and-fairness-config-consumer-v1/status', 'api-priority-and-fairness-config-producer-v1/']);
    // distinguisherMethod is a Go pointer: absent until set, so the write that set it owns it too
    assert.deepEqual(entries['api-priority-and-fairness-config-producer-v1/']['f:spec']['f:distinguisherMethod'], { '.': {}, 'f:type': {} });
  });

  it('count spec changes in metadata.generation', async () => {
    const created = await request(server, `${group}/prioritylevelconfigurations`, { method: 'POST', body: level('generations', 2, { type: 'Reject' }) });
    expectStatus(created, 201, 'create');
    assert.equal(created.json.metadata.generation, 1);
    const relabeled = await request(server, `${group}/prioritylevelconfigurations/generations`, { method: 'PUT', body: { ...created.json, metadata: { ...created.json.metadata, labels: { a: 'b' } } } });
    assert.equal(relabeled.json.metadata.generation, 1, 'metadata is not spec');
    const status = await request(server, `${group}/prioritylevelconfigurations/generations/status`, { method: 'PUT', body: { ...relabeled.json, status: { conditions: [{ type: 'Seen', status: 'True' }] } } });
    expectStatus(status, 200, 'status');
    assert.equal(status.json.metadata.generation, 1, 'status is not spec');
    const changed = await request(server, `${group}/prioritylevelconfigurations/generations`, {
      method: 'PUT', body: { ...status.json, spec: { ...status.json.spec, limited: { ...status.json.spec.limited, nominalConcurrencyShares: 3 } } },
    });
    assert.equal(changed.json.metadata.generation, 2);
    assert.deepEqual(changed.json.status, status.json.status, 'the main resource keeps the status');
  });

  it('put a suggested object back while its annotation allows it, and leave it when it says "false"', async () => {
    const path = `${group}/prioritylevelconfigurations/workload-low`;
    const shares = async () => (await request(server, path)).json.spec.limited.nominalConcurrencyShares;
    const edit = async (annotation: string) => {
      const current = (await request(server, path)).json;
      const res = await request(server, path, {
        method: 'PUT',
        body: { ...current, metadata: { ...current.metadata, annotations: { 'apf.orch.io/autoupdate-spec': annotation } }, spec: { ...current.spec, limited: { ...current.spec.limited, nominalConcurrencyShares: 7 } } },
      });
      expectStatus(res, 200, 'edit');
    };
    await edit('true');
    await until('the suggested spec to be put back', async () => (await shares()) === 100);
    await edit('false');
    await sleep(1000);
    assert.equal(await shares(), 7, 'an administrator\'s spec stays');
  });

  it('recreate a deleted mandatory object', async () => {
    const before = (await request(server, `${group}/flowschemas/catch-all`)).json.metadata.uid;
    expectStatus(await request(server, `${group}/flowschemas/catch-all`, { method: 'DELETE' }), 200, 'delete');
    await until('catch-all to come back', async () => {
      const res = await request(server, `${group}/flowschemas/catch-all`);
      return res.status === 200 && res.json.metadata.uid !== before;
    });
  });
});

describe('dispatching with priority and fairness', () => {
  let server: TestServer;
  let tiny: Credentials;
  let other: Credentials;
  before(async () => {
    server = await startServer();
    tiny = userFor(server, 'tiny-user');
    other = userFor(server, 'other-user');
    await until('the configuration objects', async () => (await request(server, `${group}/flowschemas/global-default`)).status === 200);
  });
  after(async () => { await server?.dispose(); });

  it('reclassifies a client on its open connection once the configuration changes', async () => {
    const user = userFor(server, 'moved-user');
    // one kept-alive connection: the same authenticated user object for every request on it
    const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: user.ca, cert: user.cert, key: user.key });
    const schemaUid = () => new Promise<string>((resolve, reject) => {
      get(`${server.url}/api/v1/namespaces/default`, { agent }, (res) => { res.resume(); res.on('end', () => resolve(String(res.headers['x-kubernetes-pf-flowschema-uid']))); }).on('error', reject);
    });
    try {
      const globalDefault = (await request(server, `${group}/flowschemas/global-default`)).json;
      assert.equal(await schemaUid(), globalDefault.metadata.uid);
      const fs = await request(server, `${group}/flowschemas`, { method: 'POST', body: schemaFor('moved', 'workload-low', 600, [{ kind: 'User', user: { name: 'moved-user' } }]) });
      expectStatus(fs, 201, 'schema');
      await until('the new schema to classify the connected client', async () => (await schemaUid()) === fs.json.metadata.uid);
      expectStatus(await request(server, `${group}/flowschemas/moved`, { method: 'DELETE' }), 200, 'delete the schema');
      await until('global-default to classify it again', async () => (await schemaUid()) === globalDefault.metadata.uid);
    } finally {
      agent.destroy();
    }
  });

  it('rejects a burst beyond a tiny Reject level with 429 and Retry-After, while exempt and other levels proceed', { timeout: 120_000 }, async () => {
    expectStatus(await request(server, `${group}/prioritylevelconfigurations`, { method: 'POST', body: level('tiny', 1, { type: 'Reject' }) }), 201, 'level');
    const fs = await request(server, `${group}/flowschemas`, { method: 'POST', body: schemaFor('tiny', 'tiny', 500, [{ kind: 'User', user: { name: 'tiny-user' } }]) });
    expectStatus(fs, 201, 'schema');
    const pl = (await request(server, `${group}/prioritylevelconfigurations/tiny`)).json;
    const seats = await nominalSeats(server, 'tiny');
    // the new level reaches the classifier through the change feed
    await until('tiny to classify', async () => (await request(server, '/api/v1/namespaces/default', { credentials: tiny })).headers['x-kubernetes-pf-flowschema-uid'] === fs.json.metadata.uid);

    const held = new HeldSession(server, tiny);
    try {
      const burst = await Promise.all(Array.from({ length: seats + 5 }, () => held.get('/api/v1/namespaces/default')));
      const admitted = burst.filter((a) => a.status === 200);
      const rejected = burst.filter((a) => a.status === 429);
      assert.equal(admitted.length, seats, `${seats} seats`);
      assert.equal(rejected.length, 5);
      assert.equal(rejected[0].headers['retry-after'], '1');
      assert.equal(rejected[0].headers['x-kubernetes-pf-flowschema-uid'], fs.json.metadata.uid);
      assert.equal(rejected[0].headers['x-kubernetes-pf-prioritylevel-uid'], pl.metadata.uid);
      assert.equal(rejected[0].headers['x-orch-pf-prioritylevel-uid'], pl.metadata.uid);

      const status = await request(server, '/api/v1/namespaces/default', { credentials: tiny });
      expectStatus(status, 429, 'tiny while its seats are held');
      assert.equal(status.json.reason, 'TooManyRequests');
      assert.equal(status.json.message, 'Too many requests, please try again later.');

      const exemptLevel = (await request(server, `${group}/prioritylevelconfigurations/exempt`)).json;
      const asAdmin = await request(server, '/api/v1/namespaces/default');
      expectStatus(asAdmin, 200, 'system:masters is exempt');
      assert.equal(asAdmin.headers['x-kubernetes-pf-prioritylevel-uid'], exemptLevel.metadata.uid);
      const globalDefault = (await request(server, `${group}/prioritylevelconfigurations/global-default`)).json;
      const asOther = await request(server, '/api/v1/namespaces/default', { credentials: other });
      expectStatus(asOther, 200, 'another user on global-default');
      assert.equal(asOther.headers['x-kubernetes-pf-prioritylevel-uid'], globalDefault.metadata.uid);
    } finally {
      held.close();
    }
    await until('the seats to be released', async () => (await request(server, '/api/v1/namespaces/default', { credentials: tiny })).status === 200);
  });

  it('serves by seat-time: a user who held the seats for seconds yields to one who waited, though the other came first', { timeout: 120_000 }, async () => {
    expectStatus(await request(server, `${group}/prioritylevelconfigurations`, {
      method: 'POST', body: level('shared', 1, { type: 'Queue', queuing: { queues: 16, handSize: 1, queueLengthLimit: 50 } }),
    }), 201, 'level');
    const fs = await request(server, `${group}/flowschemas`, { method: 'POST', body: schemaFor('shared', 'shared', 600, [{ kind: 'Group', group: { name: 'sharing' } }]) });
    expectStatus(fs, 201, 'schema');
    const alice = new HeldSession(server, userFor(server, 'alice', ['sharing']));
    const bob = new HeldSession(server, userFor(server, 'bob', ['sharing']));
    try {
      await until('shared to classify', async () => (await request(server, '/api/v1/namespaces/default', { credentials: userFor(server, 'carol', ['sharing']) })).headers['x-kubernetes-pf-flowschema-uid'] === fs.json.metadata.uid);
      const seats = await nominalSeats(server, 'shared');
      const path = '/api/v1/namespaces/default';
      // alice takes every seat and queues the rest of her 20; bob's 5 queue behind them
      const aliceRequests = Array.from({ length: 20 }, () => alice.open(path));
      await Promise.all(aliceRequests.slice(0, seats).map((r) => r.answered));
      const bobRequests = Array.from({ length: 5 }, () => bob.open(path));
      const dispatched: Array<{ who: string; close(): void }> = aliceRequests.slice(0, seats).map((r) => ({ who: 'alice', close: r.close }));
      const waiting = new Map<Promise<unknown>, { who: string; close(): void }>();
      aliceRequests.slice(seats).forEach((r) => waiting.set(r.answered, { who: 'alice', close: r.close }));
      bobRequests.forEach((r) => waiting.set(r.answered, { who: 'bob', close: r.close }));
      let early = 0;
      for (const p of waiting.keys()) void p.then(() => { early++; });
      await sleep(2000);
      assert.equal(early, 0, `nothing more runs while alice holds the ${seats} seats`);
      // one seat at a time: give back the oldest running request's seat, see who gets it
      const order: string[] = [];
      for (let i = 0; i < 10; i++) {
        (dispatched.shift() as { close(): void }).close();
        // a promise resolves to its value, never to itself: wrap the one that won
        const next = await Promise.race([...waiting.keys()].map((p) => p.then(() => ({ p }))));
        const who = waiting.get(next.p) as { who: string; close(): void };
        waiting.delete(next.p);
        order.push(who.who);
        dispatched.push(who);
      }
      // first come, first served would have run alice's 17 waiting requests first
      assert.deepEqual(order.slice(0, 5), ['bob', 'bob', 'bob', 'bob', 'bob'], order.join(' '));
    } finally {
      alice.close();
      bob.close();
    }
  });
});
