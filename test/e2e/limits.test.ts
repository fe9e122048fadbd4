/**
 * The limits of the spec beyond flow control: the EventRateLimit admission plugin (configured
 * through --admission-control-config-file under Kubernetes' group names here; the orch names are
 * covered by the unit tests), and --goaway-chance sending HTTP/2 clients GOAWAY.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createNamespace, expectStatus, type Obj } from '../support/api.js';
import { userFor } from '../support/certs.js';
import { request, startServer, type TestServer } from '../support/server.js';

function coreEvent(ns: string, name: string): Obj {
  return {
    apiVersion: 'v1', kind: 'Event', metadata: { name },
    involvedObject: { kind: 'ServiceAccount', namespace: ns, name: 'default', apiVersion: 'v1' },
    reason: 'Tested', message: 'rate limited', source: { component: 'limits-test' }, type: 'Normal',
  };
}

function groupEvent(ns: string, name: string): Obj {
  return {
    apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name }, eventTime: '2024-05-01T10:00:00.123456Z',
    action: 'Testing', reason: 'Created', reportingController: 'example.com/tester', reportingInstance: 'tester-1', type: 'Normal',
    regarding: { apiVersion: 'v1', kind: 'ServiceAccount', namespace: ns, name: 'default' },
  };
}

describe('EventRateLimit (--enable-admission-plugins, Kubernetes group names)', () => {
  let server: TestServer;
  let work: string;
  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'orch-admission-'));
    writeFileSync(join(work, 'admission.yaml'), [
      'apiVersion: apiserver.config.k8s.io/v1',
      'kind: AdmissionConfiguration',
      'plugins:',
      '- name: EventRateLimit',
      '  path: eventratelimit.yaml',
    ].join('\n'));
    // a refill of one event in 1000 s: nothing comes back while the test runs
    writeFileSync(join(work, 'eventratelimit.yaml'), [
      'apiVersion: eventratelimit.admission.k8s.io/v1alpha1',
      'kind: Configuration',
      'limits:',
      '- type: Namespace',
      '  qps: 0.001',
      '  burst: 3',
      '- type: User',
      '  qps: 0.001',
      '  burst: 5',
    ].join('\n'));
    server = await startServer({ args: ['--enable-admission-plugins', 'EventRateLimit', '--admission-control-config-file', join(work, 'admission.yaml')] });
    for (const ns of ['busy', 'quiet', 'other']) await createNamespace(server, ns);
  });
  after(async () => {
    await server?.dispose();
    rmSync(work, { recursive: true, force: true });
  });

  it('answers 429 beyond a namespace\'s budget, counting both Event APIs, but not dry runs or other namespaces', async () => {
    const jane = userFor(server, 'jane');
    const post = (path: string, body: Obj, query = '') => request(server, `${path}${query}`, { method: 'POST', body, credentials: jane });
    expectStatus(await post('/api/v1/namespaces/busy/events', coreEvent('busy', 'dry'), '?dryRun=All'), 201, 'a dry run spends nothing');
    expectStatus(await post('/api/v1/namespaces/busy/events', coreEvent('busy', 'e1')), 201, 'first');
    expectStatus(await post('/apis/events.k8s.io/v1/namespaces/busy/events', groupEvent('busy', 'e2')), 201, 'second, through events.k8s.io');
    expectStatus(await post('/api/v1/namespaces/busy/events', coreEvent('busy', 'e3')), 201, 'third');
    const refused = await post('/api/v1/namespaces/busy/events', coreEvent('busy', 'e4'));
    expectStatus(refused, 429, 'fourth');
    assert.equal(refused.json.reason, 'TooManyRequests');
    assert.equal(refused.json.message, 'Too many requests: limit reached on type Namespace for key busy');
    assert.equal((await request(server, '/api/v1/namespaces/busy/events/e4')).status, 404, 'nothing was stored');
    expectStatus(await post('/api/v1/namespaces/quiet/events', coreEvent('quiet', 'q1')), 201, 'another namespace has its own budget');
    // jane has spent 4 of her 5 (the refused one counted as well); the next is her fifth, then both limits refuse
    const sixth = await post('/api/v1/namespaces/other/events', coreEvent('other', 'o1'));
    expectStatus(sixth, 429, 'the user\'s budget');
    assert.equal(sixth.json.message, 'Too many requests: limit reached on type User for key jane');
    expectStatus(await request(server, '/api/v1/namespaces/other/configmaps', { method: 'POST', body: { metadata: { name: 'c' } }, credentials: jane }), 201, 'not an Event');
  });
});

describe('--goaway-chance', () => {
  let server: TestServer;
  before(async () => { server = await startServer({ args: ['--goaway-chance', '0.02'] }); });
  after(async () => { await server?.dispose(); });

  it('sends an HTTP/2 client GOAWAY after some request, which itself completes', { timeout: 120_000 }, async () => {
    const session = connect(server.url, { ca: server.admin.ca, cert: server.admin.cert, key: server.admin.key });
    let goaway = false;
    session.on('goaway', () => { goaway = true; });
    session.on('error', () => {});
    let answered = 0;
    // 1 - 0.98^2000: a GOAWAY comes within 2000 requests but for a chance of 1e-17
    for (let i = 0; i < 2000 && !goaway; i++) {
      const status = await new Promise<number>((resolve, reject) => {
        const stream = session.request({ ':method': 'GET', ':path': '/version' });
        let code = 0;
        stream.on('response', (h) => { code = Number(h[':status']); });
        stream.on('end', () => resolve(code));
        stream.on('error', reject);
        stream.resume();
        stream.end();
      });
      assert.equal(status, 200);
      answered++;
    }
    session.destroy();
    assert.ok(goaway, `no GOAWAY after ${answered} requests`);
    expectStatus(await request(server, '/version'), 200, 'a new connection is served');
  });
});
