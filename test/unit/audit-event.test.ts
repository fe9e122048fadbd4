/**
 * The audit record: what each level keeps, annotations (first value wins, nothing once the policy
 * says None), the deprecation annotation a pipeline stage adds, Secrets' content below Request
 * level, source IPs, and the JSON and legacy encodings.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { annotateDeprecated } from '../../src/audit/annotations.js';
import { AuditContext } from '../../src/audit/audit-context.js';
import { sourceIPs, type RequestFacts } from '../../src/audit/event-builder.js';
import { eventJson, eventJsonAs, eventListJson } from '../../src/audit/event-json.js';
import { goQuote, legacyEventLine } from '../../src/audit/legacy-format.js';
import { formatMicroTime, formatRfc3339Nano } from '../../src/audit/micro-time.js';
import type { RequestAuditConfig } from '../../src/audit/policy-evaluator.js';
import type { Level } from '../../src/audit/types.js';
import { requestInfo } from '../../src/http/request-info.js';
import { StoredObject } from '../../src/store/read-model.js';
import type { KObject } from '../../src/api/meta.js';

const t0 = Date.UTC(2026, 10, 22, 10, 11, 12, 123) * 1000 + 456;

function facts(method: string, path: string, headers: Record<string, string> = {}): RequestFacts {
  return {
    requestURI: path, headers, remoteAddress: '::ffff:10.0.0.9',
    attributes: requestInfo(method, path, new URLSearchParams()),
    user: { name: 'jane', uid: 'u-1', groups: ['dev', 'system:authenticated'] }, receivedAt: t0,
  };
}

function config(level: Level, omitManagedFields = false): RequestAuditConfig {
  return { level, omitStages: new Set(), omitManagedFields };
}

function begun(level: Level, method = 'POST', path = '/api/v1/namespaces/ns/serviceaccounts', omitManagedFields = false): AuditContext {
  const ac = new AuditContext('id-1');
  ac.begin(config(level, omitManagedFields), facts(method, path, { 'user-agent': 'kubectl/v1.32.0' }));
  return ac;
}

const sa: KObject = {
  apiVersion: 'v1', kind: 'ServiceAccount',
  metadata: { name: 'robot', namespace: 'ns', uid: 'uid-9', resourceVersion: '42', managedFields: [{ manager: 'kubectl' }] } as KObject['metadata'],
};

describe('the audit record', () => {
  it('keeps no bodies at Metadata, the request body from Request, both at RequestResponse', () => {
    const stored = new StoredObject(sa, 42);
    const seen: Record<string, { req?: string; res?: string }> = {};
    for (const level of ['Metadata', 'Request', 'RequestResponse'] as const) {
      const ac = begun(level);
      ac.requestObject({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' } });
      ac.responseObject(201, stored);
      const ev = ac.event('ResponseComplete', t0 + 5);
      seen[level] = { req: ev.requestObject, res: ev.responseObject };
      assert.deepEqual(ev.responseStatus, { code: 201 });
      assert.equal(ev.objectRef?.name, 'robot', 'a create\'s objectRef names the object its body names');
    }
    assert.deepEqual(seen.Metadata, { req: undefined, res: undefined });
    assert.equal(seen.Request.res, undefined);
    assert.deepEqual(JSON.parse(seen.Request.req as string).metadata, { name: 'robot' });
    assert.equal(seen.RequestResponse.res, stored.json, 'a stored object\'s JSON is recorded as stored');
  });

  it('fills the objectRef\'s uid and resourceVersion from an update\'s body', () => {
    const ac = begun('Metadata', 'PUT', '/api/v1/namespaces/ns/serviceaccounts/robot');
    ac.requestObject(sa);
    assert.deepEqual(ac.event('ResponseComplete', t0).objectRef, {
      resource: 'serviceaccounts', namespace: 'ns', name: 'robot', apiVersion: 'v1', uid: 'uid-9', resourceVersion: '42',
    });
  });

  it('drops managedFields from bodies when the rule says omitManagedFields', () => {
    const ac = begun('RequestResponse', 'POST', '/api/v1/namespaces/ns/serviceaccounts', true);
    ac.requestObject(sa);
    ac.responseObject(201, new StoredObject(sa, 42));
    const ev = ac.event('ResponseComplete', t0);
    assert.equal(JSON.parse(ev.requestObject as string).metadata.managedFields, undefined);
    assert.equal(JSON.parse(ev.responseObject as string).metadata.managedFields, undefined);
    assert.deepEqual(sa.metadata.managedFields, [{ manager: 'kubectl' }], 'the object itself is untouched');
  });

  it('records a list response as the list, and a patch as the patch', () => {
    const ac = begun('RequestResponse', 'PATCH', '/api/v1/namespaces/ns/serviceaccounts/robot');
    ac.requestPatch({ metadata: { labels: { a: 'b' } } });
    ac.responseList(200, 'ServiceAccountList', 'v1', { resourceVersion: '7' }, [new StoredObject(sa, 42)]);
    const ev = ac.event('ResponseComplete', t0);
    assert.deepEqual(JSON.parse(ev.requestObject as string), { metadata: { labels: { a: 'b' } } });
    const list = JSON.parse(ev.responseObject as string);
    assert.equal(list.kind, 'ServiceAccountList');
    assert.equal(list.items[0].metadata.name, 'robot');
    assert.equal(list.items[0].kind, undefined);
  });

  it('copies a Status\'s bounded fields into responseStatus', () => {
    const ac = begun('Metadata', 'GET', '/api/v1/namespaces/ns/serviceaccounts/x');
    ac.responseStatus(404, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'serviceaccounts "x" not found', reason: 'NotFound', details: { name: 'x', kind: 'serviceaccounts' }, code: 404 });
    assert.deepEqual(ac.event('ResponseComplete', t0).responseStatus, {
      code: 404, status: 'Failure', message: 'serviceaccounts "x" not found', reason: 'NotFound', details: { name: 'x', kind: 'serviceaccounts' },
    });
  });

  it('keeps nothing of a Secret\'s content below Request level, not even a Status that quotes it', () => {
    const status = {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason: 'Invalid', code: 422,
      message: ' "" is invalid: patch: Invalid value: "{\\"data\\":{\\"password\\":\\"c2VjcmV0\\"}}": wrong', details: { causes: [{ field: 'patch', message: 'c2VjcmV0' }] },
    };
    const meta = begun('Metadata', 'PATCH', '/api/v1/namespaces/ns/secrets/s');
    meta.requestPatch({ data: { password: 'c2VjcmV0' } });
    meta.responseStatus(422, status);
    const metaJson = eventJson(meta.event('ResponseComplete', t0));
    assert.ok(!metaJson.includes('c2VjcmV0'), metaJson);
    assert.match(metaJson, /"responseStatus":\{"metadata":\{\},"status":"Failure","reason":"Invalid","code":422\}/);

    const request = begun('Request', 'PATCH', '/api/v1/namespaces/ns/secrets/s');
    request.requestPatch({ data: { password: 'c2VjcmV0' } });
    request.responseStatus(422, status);
    assert.ok(eventJson(request.event('ResponseComplete', t0)).includes('c2VjcmV0'), 'at Request level the body is recorded, as Kubernetes records it');
  });

  it('keeps the first value of an annotation, and takes none once the policy chose None', () => {
    const ac = new AuditContext('id-2');
    ac.annotate('authentication.orch.io/method', 'x509'); // before the policy: kept, as Kubernetes keeps them
    ac.begin(config('Metadata'), facts('GET', '/api/v1/namespaces'));
    ac.annotate('authorization.orch.io/decision', 'allow');
    ac.annotate('authorization.orch.io/decision', 'forbid');
    assert.deepEqual(ac.event('ResponseComplete', t0).annotations, { 'authentication.orch.io/method': 'x509', 'authorization.orch.io/decision': 'allow' });

    const none = new AuditContext('id-3');
    none.annotate('early', 'x');
    none.begin(config('None'), facts('GET', '/api/v1/namespaces'));
    none.annotate('late', 'y');
    assert.equal(none.recording, false);
    assert.equal(none.annotations.size, 0);
  });

  it('records the annotations a deprecated API\'s handler adds through the annotation API', () => {
    // a unit-level fake of the handler of a deprecated API version (CRD versions will be served so)
    const deprecatedApi = { removedRelease: '1.35' };
    const serveDeprecated = (audit: AuditContext) => annotateDeprecated(audit, deprecatedApi.removedRelease);
    const ac = begun('Metadata', 'GET', '/apis/example.orch.io/v1beta1/widgets');
    serveDeprecated(ac);
    const json = eventJson(ac.event('ResponseComplete', t0));
    assert.match(json, /"annotations":\{"orch.io\/deprecated":"true","orch.io\/removed-release":"1.35"\}\}$/);
  });

  it('stamps RequestReceived with the request\'s arrival, later stages with the time given', () => {
    const ac = begun('Metadata');
    assert.equal(ac.event('RequestReceived', t0 + 999).stageTimestamp, t0);
    assert.equal(ac.event('ResponseComplete', t0 + 999).stageTimestamp, t0 + 999);
  });
});

describe('source IPs', () => {
  it('lists X-Forwarded-For, then X-Real-Ip unless listed, then the peer unless it is last', () => {
    assert.deepEqual(sourceIPs({}, '::ffff:127.0.0.1'), ['127.0.0.1']);
    assert.deepEqual(sourceIPs({ 'x-forwarded-for': '203.0.113.7, bogus, 2001:DB8:0:0::1' }, '10.0.0.1'), ['203.0.113.7', '2001:db8::1', '10.0.0.1']);
    assert.deepEqual(sourceIPs({ 'x-forwarded-for': '203.0.113.7', 'x-real-ip': '203.0.113.7' }, '203.0.113.7'), ['203.0.113.7']);
    assert.deepEqual(sourceIPs({ 'x-real-ip': '198.51.100.2' }, '10.0.0.1'), ['198.51.100.2', '10.0.0.1']);
    assert.deepEqual(sourceIPs({}, '::ffff:7f00:1'), ['127.0.0.1']);
  });
});

describe('encoding events', () => {
  const ac = begun('Metadata', 'GET', '/api/v1/namespaces/ns/serviceaccounts/robot');
  ac.impersonating({ name: 'bob', groups: ['system:authenticated'] });
  ac.responseObject(200, sa);
  ac.annotate('k', 'v');
  const ev = ac.event('ResponseComplete', t0 + 2_000_000);

  it('writes JSON in Kubernetes\' field order with microsecond timestamps', () => {
    assert.equal(eventJson(ev), '{"kind":"Event","apiVersion":"audit.orch.io/v1","level":"Metadata","auditID":"id-1","stage":"ResponseComplete",' +
      '"requestURI":"/api/v1/namespaces/ns/serviceaccounts/robot","verb":"get","user":{"username":"jane","uid":"u-1","groups":["dev","system:authenticated"]},' +
      '"impersonatedUser":{"username":"bob","groups":["system:authenticated"]},"sourceIPs":["10.0.0.9"],"userAgent":"kubectl/v1.32.0",' +
      '"objectRef":{"resource":"serviceaccounts","namespace":"ns","name":"robot","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},' +
      '"requestReceivedTimestamp":"2026-11-22T10:11:12.123456Z","stageTimestamp":"2026-11-22T10:11:14.123456Z","annotations":{"k":"v"}}');
    assert.deepEqual(JSON.parse(eventJsonAs(ev, 'audit.k8s.io/v1')), { ...JSON.parse(eventJson(ev)), apiVersion: 'audit.k8s.io/v1' });
    assert.deepEqual(JSON.parse(eventListJson([eventJson(ev)], 'audit.orch.io/v1')).items[0].auditID, 'id-1');
  });

  it('writes Kubernetes\' legacy line', () => {
    assert.equal(legacyEventLine(ev), '2026-11-22T10:11:12.123456Z AUDIT: id="id-1" stage="ResponseComplete" ip="10.0.0.9" method="get" user="jane" ' +
      'groups="\\"dev\\",\\"system:authenticated\\"" as="bob" asgroups="\\"system:authenticated\\"" user-agent="kubectl/v1.32.0" namespace="ns" ' +
      'uri="/api/v1/namespaces/ns/serviceaccounts/robot" response="200"');
    const anonymous = new AuditContext('id-4');
    anonymous.begin(config('Metadata'), { ...facts('GET', '/version'), user: undefined, remoteAddress: undefined });
    assert.equal(legacyEventLine(anonymous.event('RequestReceived', 0)), '2026-11-22T10:11:12.123456Z AUDIT: id="id-4" stage="RequestReceived" ip="<unknown>" ' +
      'method="get" user="<none>" groups="<none>" as="<self>" asgroups="<lookup>" user-agent="" namespace="<none>" uri="/version" response="<deferred>"');
  });

  it('quotes as Go\'s %q does', () => {
    assert.equal(goQuote('a"b\\c\n\t\x01\x7f é\u00ad😀'), '"a\\"b\\\\c\\n\\t\\x01\\x7f é\\u00ad😀"');
  });

  it('formats MicroTime and RFC 3339 nano times', () => {
    assert.equal(formatMicroTime(Date.UTC(2026, 0, 2, 3, 4, 5, 60) * 1000 + 7), '2026-01-02T03:04:05.060007Z');
    assert.equal(formatRfc3339Nano(Date.UTC(2026, 0, 2, 3, 4, 5, 60) * 1000), '2026-01-02T03:04:05.06Z');
    assert.equal(formatRfc3339Nano(Date.UTC(2026, 0, 2, 3, 4, 5, 0) * 1000), '2026-01-02T03:04:05Z');
  });
});
