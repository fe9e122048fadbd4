/**
 * The log backend's other shapes, each on a real server: the legacy format on standard out,
 * rotation by size with a backup count, gzip and an age limit, truncation in batch mode, and the
 * blocking modes when the log cannot be written (blocking-strict fails the request; blocking
 * logs the failure and serves it).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { expectStatus, type Obj } from '../support/api.js';
import { auditIdOf, eventsOf, eventually, readJsonLines, tempDir, writePolicy } from '../support/audit.js';
import { freePort, mainScript, request, startServer, type TestServer } from '../support/server.js';

const notHealth = '- level: None\n  nonResourceURLs: [/readyz*, /livez*, /healthz*]\n';

describe('starting with audit flags', () => {
  it('refuses a malformed policy, naming the file, the rule\'s index and the field', async () => {
    const dir = tempDir('audit-bad-policy-');
    const policy = writePolicy(dir, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n- level: Request\n  omitStages: [Whenever]\n');
    const r = spawnSync(process.execPath, [mainScript, '--data-dir', join(dir, 'data'), '--secure-port', String(await freePort()),
      '--audit-policy-file', policy, '--audit-log-path', join(dir, 'audit.log')], { encoding: 'utf8', timeout: 20_000 });
    assert.equal(r.status, 1);
    assert.equal(r.stderr.trim(), `Error: loading audit policy file: rules[1].omitStages[0]: Invalid value: "Whenever": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic: from file ${policy}`);
    assert.ok(!existsSync(join(dir, 'data')), 'refused before anything else started');
  });

  it('audits nothing without a policy file, even with a log path', async () => {
    const dir = tempDir('audit-no-policy-');
    const server = await startServer({ args: ['--audit-log-path', join(dir, 'audit.log')] });
    try {
      expectStatus(await request(server, '/api/v1/namespaces'), 200, 'list');
      assert.ok(!existsSync(join(dir, 'audit.log')));
      assert.ok(server.logs.some((l) => l.includes('No audit policy file provided, no events will be recorded')));
    } finally {
      await server.dispose();
    }
  });
});

describe('the legacy format on standard out', () => {
  let server: TestServer;
  before(async () => {
    const dir = tempDir('audit-legacy-');
    const policy = writePolicy(dir, `apiVersion: audit.orch.io/v1\nkind: Policy\nrules:\n${notHealth}- level: Metadata\n`);
    server = await startServer({ args: ['--audit-policy-file', policy, '--audit-log-path', '-', '--audit-log-format', 'legacy'] });
  });
  after(async () => { await server?.dispose(); });

  it('prints Kubernetes\' one-line form of each stage', async () => {
    const res = await request(server, '/api/v1/namespaces/default/serviceaccounts/default', { headers: { 'user-agent': 'audit-test/1.0' } });
    const id = auditIdOf(res);
    const lines = await eventually('both legacy lines', () => {
      const found = server.logs.filter((l) => l.includes(`AUDIT: id="${id}"`));
      return found.length === 2 ? found : undefined;
    });
    assert.match(lines[0], new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?Z AUDIT: id="${id}" stage="RequestReceived" ip="127.0.0.1" method="get" ` +
      'user="orch-admin" groups="\\\\"system:masters\\\\",\\\\"system:authenticated\\\\"" as="<self>" asgroups="<lookup>" user-agent="audit-test/1.0" ' +
      'namespace="default" uri="/api/v1/namespaces/default/serviceaccounts/default" response="<deferred>"$'));
    assert.match(lines[1], /stage="ResponseComplete" .* response="200"$/);
  });
});

describe('rotation of the audit log', () => {
  let server: TestServer;
  let dir: string;
  const backups = () => readdirSync(dir).filter((f) => /^audit-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}(-\d+)?\.log\.gz$/.test(f));
  before(async () => {
    dir = tempDir('audit-rotation-');
    // a backup from long ago: older than --audit-log-maxage by the time in its name
    writeFileSync(join(dir, 'audit-2020-01-01T00-00-00.000.log.gz'), '');
    const policy = writePolicy(dir, `apiVersion: audit.orch.io/v1\nkind: Policy\nrules:\n${notHealth}- level: RequestResponse\n`, 'policy.yml');
    server = await startServer({
      args: ['--audit-policy-file', policy, '--audit-log-path', join(dir, 'audit.log'), '--audit-log-maxsize', '1',
        '--audit-log-maxbackup', '2', '--audit-log-compress', '--audit-log-maxage', '1'],
    });
  });
  after(async () => { await server?.dispose(); });

  it('rotates at --audit-log-maxsize MB into gzipped backups, keeps --audit-log-maxbackup of them, drops those past --audit-log-maxage', async () => {
    assert.ok(!existsSync(join(dir, 'audit-2020-01-01T00-00-00.000.log.gz')), 'the old backup was removed at start');
    const note = 'n'.repeat(200 * 1024);
    // each create is ~400 KB of audit (request and response objects): 4.8 MB in all
    for (let i = 0; i < 12; i++) {
      const res = await request(server, '/api/v1/namespaces/default/serviceaccounts', {
        method: 'POST', body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: `big-${i}`, annotations: { note } } },
      });
      expectStatus(res, 201, `create big-${i}`);
    }
    const last = await request(server, '/api/v1/namespaces/default/serviceaccounts/big-11');
    await eventsOf(() => readJsonLines(join(dir, 'audit.log')), auditIdOf(last), ['ResponseComplete']);
    const kept = await eventually('two backups', () => (backups().length === 2 ? backups() : undefined));
    const events: Obj[] = [];
    for (const f of kept) {
      const lines = gunzipSync(readFileSync(join(dir, f))).toString('utf8').split('\n').filter(Boolean);
      assert.ok(lines.length > 0);
      events.push(...lines.map((l) => JSON.parse(l) as Obj)); // never an event split across files
    }
    events.push(...readJsonLines(join(dir, 'audit.log')));
    assert.ok(events.some((e) => e.objectRef?.name === 'big-11' && e.stage === 'ResponseComplete'));
    assert.ok(!events.some((e) => e.objectRef?.name === 'big-0'), 'the oldest backups are gone');
  });
});

describe('truncation in batch mode', () => {
  let server: TestServer;
  let logPath: string;
  before(async () => {
    const dir = tempDir('audit-truncate-');
    logPath = join(dir, 'audit.log');
    const policy = writePolicy(dir, `apiVersion: audit.orch.io/v1\nkind: Policy\nrules:\n${notHealth}- level: RequestResponse\n`);
    server = await startServer({
      args: ['--audit-policy-file', policy, '--audit-log-path', logPath, '--audit-log-mode', 'batch',
        '--audit-log-truncate-enabled', '--audit-log-truncate-max-event-size', '4000'],
    });
  });
  after(async () => { await server?.dispose(); });

  it('removes the objects of an oversized event, marking it, and drops one still too large', async () => {
    const events = () => readJsonLines(logPath);
    const small = await request(server, '/api/v1/namespaces/default/serviceaccounts', { method: 'POST', body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'small' } } });
    const big = await request(server, '/api/v1/namespaces/default/serviceaccounts', {
      method: 'POST', body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'big', annotations: { note: 'x'.repeat(6000) } } },
    });
    const huge = await request(server, `/api/v1/namespaces/default/serviceaccounts/small?padding=${'p'.repeat(5000)}`);
    const later = await request(server, '/api/v1/namespaces/default/serviceaccounts/small');
    expectStatus(huge, 200, 'a request whose URI alone is too large for an event');
    await eventsOf(events, auditIdOf(later), ['ResponseComplete']);

    const s = (await eventsOf(events, auditIdOf(small), ['ResponseComplete']))[1];
    assert.equal(s.responseObject.metadata.name, 'small');
    assert.equal(s.annotations['audit.orch.io/truncated'], undefined);
    const b = (await eventsOf(events, auditIdOf(big), ['ResponseComplete']))[1];
    assert.equal(b.annotations['audit.orch.io/truncated'], 'true');
    assert.equal(b.requestObject, undefined);
    assert.equal(b.responseObject, undefined);
    assert.equal(b.objectRef.name, 'big', 'the metadata stays');
    assert.equal(events().filter((e) => e.auditID === auditIdOf(huge)).length, 0, 'dropped, even truncated it is too large');
  });
});

describe('a log that cannot be written', () => {
  const policyText = `apiVersion: audit.orch.io/v1\nkind: Policy\nrules:\n${notHealth}- level: None\n  verbs: [get]\n  resources: [{group: "", resources: [serviceaccounts]}]\n- level: Metadata\n`;

  describe('in blocking-strict mode', () => {
    let server: TestServer;
    before(async () => {
      const dir = tempDir('audit-strict-');
      server = await startServer({ args: ['--audit-policy-file', writePolicy(dir, policyText), '--audit-log-path', '/dev/full', '--audit-log-mode', 'blocking-strict'] });
    });
    after(async () => { await server?.dispose(); });

    it('fails the request with 500 when its RequestReceived event cannot be stored, before serving it', async () => {
      const res = await request(server, '/api/v1/namespaces/default/serviceaccounts', { method: 'POST', body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'unaudited' } } });
      assert.equal(res.status, 500);
      assert.equal(res.json.message, 'Internal Server Error: "/api/v1/namespaces/default/serviceaccounts": failed to store audit event');
      assert.equal(res.json.reason, 'InternalError');
      assert.ok(res.headers['audit-id']);
      const got = await request(server, '/api/v1/namespaces/default/serviceaccounts/unaudited');
      assert.equal(got.status, 404, 'the create was never served (and a request the policy does not audit is unaffected)');
    });
  });

  describe('in blocking mode', () => {
    let server: TestServer;
    before(async () => {
      const dir = tempDir('audit-blocking-');
      server = await startServer({ args: ['--audit-policy-file', writePolicy(dir, policyText), '--audit-log-path', '/dev/full', '--audit-log-mode', 'blocking'] });
    });
    after(async () => { await server?.dispose(); });

    it('serves the request and logs the failure', async () => {
      const res = await request(server, '/api/v1/namespaces/default/serviceaccounts', { method: 'POST', body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'served' } } });
      expectStatus(res, 201, 'create');
      await eventually('the failure in the server log', () => (server.logs.some((l) => l.includes('Error in audit plugin \'log\'')) ? true : undefined));
    });
  });
});
